package nodes

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/internal/testcluster"
)

// A heap profile of the CCM (--heap-profile, off by default: a diagnosis,
// not a measure). The CCM serves upstream's /debug/pprof on its secure
// port (--profiling, upstream's default true) to an authorized caller only,
// so the bench makes a ServiceAccount allowed just that non-resource URL
// and asks with its token.
const profilerName = "bench-profiler"

// heapProfile saves the CCM's heap profile (after a GC: the live heap) as
// <dir>/<name>-heap.pb.gz and returns the path.
func (b *bench) heapProfile(ctx context.Context, p *testcluster.Process, name string) (string, error) {
	token, err := b.profilerToken(ctx)
	if err != nil {
		return "", err
	}
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		// The CCM's serving certificate is self-signed (--cert-dir).
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback, bench only
	}}
	// The new binding reaches the apiserver's authorizer within moments;
	// until then the answer is 403.
	deadline := time.Now().Add(15 * time.Second)
	var resp *http.Response
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet,
			fmt.Sprintf("https://127.0.0.1:%d/debug/pprof/heap?gc=1", p.SecurePort), nil)
		if err != nil {
			return "", err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		if resp, err = client.Do(req); err != nil {
			return "", fmt.Errorf("heap profile of %s: %w", name, err)
		}
		if resp.StatusCode == http.StatusOK {
			break
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || time.Now().After(deadline) {
			return "", fmt.Errorf("heap profile of %s: HTTP %d: %s", name, resp.StatusCode, body)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(time.Second):
		}
	}
	defer resp.Body.Close()
	path := filepath.Join(b.dir, name+"-heap.pb.gz")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return "", fmt.Errorf("heap profile of %s: %w", name, err)
	}
	return path, f.Close()
}

// profilerToken makes (once) a ServiceAccount that may GET /debug/pprof/*,
// and returns a token for it.
func (b *bench) profilerToken(ctx context.Context) (string, error) {
	ns := "kube-system"
	objs := []func() error{
		func() error {
			_, err := b.client.CoreV1().ServiceAccounts(ns).Create(ctx,
				&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: profilerName}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := b.client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
				ObjectMeta: metav1.ObjectMeta{Name: profilerName},
				Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/debug/pprof", "/debug/pprof/*"}, Verbs: []string{"get"}}},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := b.client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: profilerName},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: profilerName},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: profilerName, Namespace: ns}},
			}, metav1.CreateOptions{})
			return err
		},
	}
	for _, create := range objs {
		if err := create(); err != nil && !apierrors.IsAlreadyExists(err) {
			return "", fmt.Errorf("profiler RBAC: %w", err)
		}
	}
	return b.cluster.ServiceAccountToken(ctx, ns, profilerName)
}
