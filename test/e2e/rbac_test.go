//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/ccmkit/ccm/internal/testcluster"
)

// permission is one verb on one resource of the ClusterRole.
type permission struct{ group, resource, verb string }

func (p permission) String() string {
	g := p.group
	if g == "" {
		g = "core"
	}
	return fmt.Sprintf("%s %s/%s", p.verb, g, p.resource)
}

// notExercised lists permissions that the RBAC scenario cannot trigger, with
// the reason each is still granted. Every other permission must be proven
// necessary: without it, the scenario makes the apiserver refuse the CCM.
var notExercised = map[permission]string{
	{"", "nodes", "list"}: "client-go informers start with a streaming watch (WatchListClient) here, but fall " +
		"back to LIST against apiservers without streaming lists; without it they never sync there",
	{"", "events", "patch"}: "the event recorder PATCHes an existing Event to count a repeat; the scenario " +
		"emits no event twice within the aggregation window",
	{"", "services", "list"}: "as nodes list: the Service informers start with a streaming watch here, and " +
		"fall back to LIST against apiservers without streaming lists",
	{"discovery.k8s.io", "endpointslices", "list"}: "as nodes list: the EndpointSlice informer (load balancer " +
		"subsets of Local Services) starts with a streaming watch here, and falls back to LIST against apiservers " +
		"without streaming lists",
	{"", "secrets", "get"}: "read only for a Service with a TLS listener: Tencent's specify-protocol TCP_SSL (the " +
		"certificate Secret) or OCI's tls-secret/tls-backendset-secret; TestTencentTLSListener and TestOCITLSListener " +
		"run those paths with the shipped role",
}

// TestRBACMinimal proves deploy/rbac.yaml's ClusterRole minimal: for every
// verb on every resource, a CCM running without just that permission is
// refused by the apiserver during a scenario that covers every controller.
func TestRBACMinimal(t *testing.T) {
	pauseMainCCM(t)
	full := deployClusterRole(t)
	perms := expand(full.Rules)
	kubeconfig := rbacTestAccount(t)

	// The scenario itself must work with the full role and never be refused.
	t.Run("full role", func(t *testing.T) {
		setRBACTestRole(t, full.Rules)
		out := runRBACScenario(t, kubeconfig, true)
		if m := regexp.MustCompile(`.*(is forbidden|` + shutdownTaintFailed + `).*`).FindString(out); m != "" {
			t.Fatalf("the CCM was refused with the shipped role: %s", m)
		}
	})
	for _, p := range perms {
		t.Run("without "+p.String(), func(t *testing.T) {
			if why, ok := notExercised[p]; ok {
				t.Logf("not exercised: %s", why)
				return
			}
			setRBACTestRole(t, without(full.Rules, p))
			out := runRBACScenario(t, kubeconfig, false)
			if !refused(out, p) {
				t.Errorf("the CCM never needed %s during the scenario: remove it from deploy/rbac.yaml, or explain in notExercised why it stays", p)
			}
		})
	}
}

// shutdownTaintFailed is what upstream's lifecycle controller logs, hiding
// the apiserver's answer, when it cannot get or patch a node to add the
// shutdown taint. With the full role it never appears (checked), so there it
// is the refusal of nodes get or patch.
const shutdownTaintFailed = "failed to apply shutdown taint to node"

// refused reports whether the CCM's log shows the apiserver refusing p.
func refused(log string, p permission) bool {
	if p.group == "" && p.resource == "nodes" && (p.verb == "get" || p.verb == "patch") &&
		strings.Contains(log, shutdownTaintFailed) {
		return true
	}
	group := p.group
	re := regexp.MustCompile(fmt.Sprintf(`cannot %s resource \\?"%s\\?" in API group \\?"%s\\?"`,
		regexp.QuoteMeta(p.verb), regexp.QuoteMeta(p.resource), regexp.QuoteMeta(group)))
	return re.MatchString(log)
}

// runRBACScenario runs a CCM as the test account through every node path:
// initialization, deletion of a terminated instance's node, the shutdown
// taint added and removed; and through the service controller's path: a
// LoadBalancer Service gets its load balancer. With mustWork, it also
// checks the outcomes.
func runRBACScenario(t *testing.T, kubeconfig string, mustWork bool) string {
	t.Helper()
	fresh := newInstance(t, "rbac-init")
	gone := newInstance(t, "rbac-gone")
	stopped := newInstance(t, "rbac-stopped")
	resumed := newInstance(t, "rbac-resumed")
	for _, s := range []struct {
		in    string
		state string
	}{{gone.ID, "TERMINATING"}, {stopped.ID, "STOPPED"}} {
		if err := suite.sim.SetInstanceState(s.in, s.state); err != nil {
			t.Fatal(err)
		}
	}
	pid := func(id string) string { return fmt.Sprintf("tencentcloud:///%s/%s", zone, id) }
	registerNode(t, testcluster.NodeSpec{Name: fresh.PrivateIP, InternalIP: fresh.PrivateIP})
	for _, in := range []struct {
		name, id string
		ready    bool
		taint    bool
	}{{gone.PrivateIP, gone.ID, false, false}, {stopped.PrivateIP, stopped.ID, false, false}, {resumed.PrivateIP, resumed.ID, true, true}} {
		registerInitializedNode(t, in.name, pid(in.id), in.ready, in.taint)
	}

	// The service controller's path: a LoadBalancer Service (without
	// backends, so that the scenario's vanishing instances do not matter).
	lbSvc := rbacLoadBalancerService(t)

	p, _, err := testcluster.CCM{
		Binary: suite.ccmBinary, Provider: "tencentcloud", Kubeconfig: kubeconfig, Dir: suite.dir,
		Name:        "ccm-rbac-" + strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()),
		CloudConfig: rbacCloudConfig(t),
	}.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()

	if mustWork {
		waitNode(t, fresh.PrivateIP, 20*time.Second, "initialized", initialized)
		waitNode(t, stopped.PrivateIP, 20*time.Second, "shutdown taint added", func(n *corev1.Node) bool { return testcluster.HasTaint(n, shutdownTaint) })
		waitNode(t, resumed.PrivateIP, 20*time.Second, "shutdown taint removed", func(n *corev1.Node) bool { return !testcluster.HasTaint(n, shutdownTaint) })
		waitIngress(t, lbSvc, 30*time.Second)
		deadline := time.Now().Add(20 * time.Second)
		for nodeExists(t, gone.PrivateIP) {
			if time.Now().After(deadline) {
				t.Fatal("the terminated instance's node was not deleted")
			}
			time.Sleep(200 * time.Millisecond)
		}
		time.Sleep(2 * time.Second) // let events flush
	} else {
		// Wait for the first refusal (only one permission is missing), then
		// a moment more; give up after several lifecycle periods and syncs.
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) && !strings.Contains(p.Output(), "is forbidden") &&
			!strings.Contains(p.Output(), shutdownTaintFailed) {
			time.Sleep(200 * time.Millisecond)
		}
		time.Sleep(time.Second)
	}
	p.Stop()
	return p.Output()
}

// registerInitializedNode registers a node that a CCM already initialized
// (providerID set, no uninitialized taint), optionally with the shutdown taint.
func registerInitializedNode(t *testing.T, name, providerID string, ready, shutdown bool) {
	t.Helper()
	ctx := context.Background()
	registerNode(t, testcluster.NodeSpec{Name: name, InternalIP: name, ProviderID: providerID})
	// A running CCM may touch the node meanwhile: retry on conflict.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := suite.cluster.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Spec.Taints = nil
		if shutdown {
			n.Spec.Taints = []corev1.Taint{{Key: shutdownTaint, Effect: corev1.TaintEffectNoSchedule}}
		}
		_, err = suite.cluster.Client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !ready {
		setReady(t, name, false)
	}
}

func deployClusterRole(t *testing.T) *rbacv1.ClusterRole {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(), "deploy", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(data), "\n---") {
		var cr rbacv1.ClusterRole
		if err := yaml.Unmarshal([]byte(doc), &cr); err == nil && cr.Kind == "ClusterRole" {
			return &cr
		}
	}
	t.Fatal("deploy/rbac.yaml has no ClusterRole")
	return nil
}

func expand(rules []rbacv1.PolicyRule) []permission {
	var out []permission
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out = append(out, permission{g, res, v})
				}
			}
		}
	}
	return out
}

// without returns rules minus the one permission p.
func without(rules []rbacv1.PolicyRule, p permission) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, q := range expand(rules) {
		if q != p {
			out = append(out, rbacv1.PolicyRule{APIGroups: []string{q.group}, Resources: []string{q.resource}, Verbs: []string{q.verb}})
		}
	}
	return out
}

const rbacTestName = "ccm-rbac-test"

// rbacTestAccount creates a ServiceAccount with the same bindings as the
// shipped one, except that its ClusterRole is the test's to change.
func rbacTestAccount(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	c := suite.cluster.Client
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: rbacTestName, Namespace: "kube-system"}}
	create := func(err error) {
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	_, err := c.CoreV1().ServiceAccounts("kube-system").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: rbacTestName}}, metav1.CreateOptions{})
	create(err)
	_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: rbacTestName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: rbacTestName},
		Subjects:   subject,
	}, metav1.CreateOptions{})
	create(err)
	_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: rbacTestName + "-auth-delegator"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:auth-delegator"},
		Subjects:   subject,
	}, metav1.CreateOptions{})
	create(err)
	_, err = c.RbacV1().RoleBindings("kube-system").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: rbacTestName + "-authentication-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "extension-apiserver-authentication-reader"},
		Subjects:   subject,
	}, metav1.CreateOptions{})
	create(err)
	kc, err := suite.cluster.ServiceAccountKubeconfig(ctx, "kube-system", rbacTestName)
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

func setRBACTestRole(t *testing.T, rules []rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	roles := suite.cluster.Client.RbacV1().ClusterRoles()
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: rbacTestName}, Rules: rules}
	if existing, err := roles.Get(ctx, rbacTestName, metav1.GetOptions{}); err == nil {
		cr.ResourceVersion = existing.ResourceVersion
		_, err = roles.Update(ctx, cr, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	} else if _, err := roles.Create(ctx, cr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// RBAC changes reach the authorizer through its informer: give it a moment.
	time.Sleep(500 * time.Millisecond)
}

// rbacCloudConfig is the suite's Tencent config with read_lag_window 0s.
// The scenario registers the terminated instance's Node seconds before the
// CCM starts, and cloudsim stops showing a TERMINATING instance 2 s later:
// with the default window such a young Node, whose instance this CCM never
// saw, is kept for a minute (the lagging-reads rule, proven in the fault
// campaign's lag round). This test is about permissions, so the deletion
// is asked for at once.
func rbacCloudConfig(t *testing.T) string {
	t.Helper()
	path := writeCloudConfig(suite.dir, "cloud-rbac.yaml", secretID, secretKey)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("read_lag_window: 0s\n"); err != nil {
		t.Fatal(err)
	}
	return path
}
