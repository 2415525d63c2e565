//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The CCM's secure port follows upstream's defaults: /healthz is open,
// /metrics and /debug need an authenticated, authorized caller.
func TestSecurePortRequiresAuth(t *testing.T) {
	reader := metricsReaderToken(t)
	nobody := serviceAccountToken(t, "ccm-e2e-nobody", nil)
	cases := []struct {
		path, token string
		want        []int
	}{
		{"/healthz", "", []int{http.StatusOK}},
		{"/metrics", "", []int{http.StatusUnauthorized, http.StatusForbidden}},
		{"/debug/pprof/", "", []int{http.StatusUnauthorized, http.StatusForbidden}},
		{"/metrics", nobody, []int{http.StatusForbidden}},
		{"/debug/pprof/", nobody, []int{http.StatusForbidden}},
		{"/metrics", reader, []int{http.StatusOK}},
	}
	for _, tc := range cases {
		who := map[bool]string{true: "anonymous", false: "token"}[tc.token == ""]
		if tc.token == reader {
			who = "metrics-reader"
		}
		t.Run(tc.path+" as "+who, func(t *testing.T) {
			code, _ := scrape(t, suite.ccm.SecurePort, tc.path, tc.token)
			ok := false
			for _, w := range tc.want {
				ok = ok || code == w
			}
			if !ok {
				t.Errorf("GET %s as %s = %d, want one of %v", tc.path, who, code, tc.want)
			}
		})
	}
}

// A cloud config holding credentials must not be world-readable: the CCM
// says so at startup (and keeps running: the mode is the operator's call).
func TestWorldReadableConfigWarns(t *testing.T) {
	path := writeCloudConfig(suite.dir, "cloud-world-readable.yaml", secretID, secretKey)
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := startCCM("ccm-world-readable", path, "--controllers=cloud-node")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.WaitForOutput(ctx, "is readable by every user"); err != nil {
		t.Fatalf("no warning about the world-readable config: %v\n%s", err, tail(p.Output(), 20))
	}
	mustNotContainSecret(t, "CCM output", p.Output())
}

// scrape GETs path on a CCM's secure port (self-signed certificate).
func scrape(t *testing.T, port int, path, token string) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the CCM's self-signed serving cert
	}}
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d%s", port, path), nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	var resp *http.Response
	for i := 0; i < 50; i++ { // the port opens a moment after a (re)start
		if resp, err = client.Do(req); err == nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// metricsReaderToken returns a token of an account allowed to GET /metrics,
// as a Prometheus would have.
func metricsReaderToken(t *testing.T) string {
	return serviceAccountToken(t, "ccm-e2e-metrics-reader", []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}})
}

// serviceAccountToken creates a ServiceAccount in kube-system bound to a
// ClusterRole with rules (none: no permission at all) and returns a token.
func serviceAccountToken(t *testing.T, name string, rules []rbacv1.PolicyRule) string {
	t.Helper()
	ctx := context.Background()
	c := suite.cluster.Client
	ok := func(err error) {
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	_, err := c.CoreV1().ServiceAccounts("kube-system").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	ok(err)
	if rules != nil {
		_, err = c.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{})
		ok(err)
		_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: "kube-system"}},
		}, metav1.CreateOptions{})
		ok(err)
	}
	token, err := suite.cluster.ServiceAccountToken(ctx, "kube-system", name)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// moreSecrets are secrets tests used besides secretKey: rotated keys, and
// the temporary SecretKeys and tokens cloudsim issued (credentials_test.go).
var moreSecrets struct {
	sync.Mutex
	values []string
}

// addSecrets adds values to what scanForSecret looks for.
func addSecrets(values ...string) {
	moreSecrets.Lock()
	defer moreSecrets.Unlock()
	moreSecrets.values = append(moreSecrets.values, values...)
}

// scanForSecret looks for the secret key, and every secret addSecrets
// named, in every log the suite wrote and in every Event: secrets never
// appear in logs, events or errors.
func scanForSecret() []string {
	moreSecrets.Lock()
	secrets := append([]string{secretKey}, moreSecrets.values...)
	moreSecrets.Unlock()
	leaked := func(text string) bool {
		return slices.ContainsFunc(secrets, func(s string) bool { return s != "" && strings.Contains(text, s) })
	}
	var leaks []string
	logs, _ := filepath.Glob(filepath.Join(suite.dir, "*.log"))
	for _, f := range logs {
		data, err := os.ReadFile(f)
		if err == nil && leaked(string(data)) {
			leaks = append(leaks, f)
		}
	}
	events, err := suite.cluster.Client.CoreV1().Events("").List(context.Background(), metav1.ListOptions{})
	if err == nil {
		for _, e := range events.Items {
			if leaked(e.Message) || leaked(e.Reason) {
				leaks = append(leaks, "event "+e.Namespace+"/"+e.Name)
			}
		}
	}
	return leaks
}
