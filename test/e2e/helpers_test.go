//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudapi "k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

const shutdownTaint = "node.cloudprovider.kubernetes.io/shutdown"

// e2eDrainPeriod is the CCMs' configured drain period in the suite:
// nonzero, so that every node removal goes through draining, and short, so
// that tests waiting for a target to go need not wait the default 30 s.
// deregistration_test.go sets its own per Service.
const e2eDrainPeriod = "2s"

// writeCloudConfig writes a Tencent cloud config pointing at cloudsim. Its
// lb_delete_retry_after is shortened like cloudsim's deletion window
// (clb_frequency_test.go), and its lb_drain_period (e2eDrainPeriod) so that
// tests that remove nodes see their targets go within seconds.
func writeCloudConfig(dir, name, id, key string) string {
	path := filepath.Join(dir, name)
	cfg := fmt.Sprintf("region: %s\nvpc_id: %s\nsecret_id: %s\nsecret_key: %s\napi_endpoint: %s\nlb_delete_retry_after: %s\nlb_drain_period: %s\n",
		region, vpcID, id, key, suite.simURL, clbDeleteRetryAfter, e2eDrainPeriod)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		panic(err)
	}
	return path
}

// mainProvider is the cloud of the suite's own CCM (startMainCCM), which
// runs through the whole suite.
const mainProvider = "tencentcloud"

// startCCM starts a CCM process as the shipped ServiceAccount.
func startCCM(name, cloudConfig string, extraArgs ...string) (*testcluster.Process, error) {
	return startCCMWith(name, cloudConfig, suite.kubeconfig, extraArgs...)
}

// startCCMWith is startCCM with another kubeconfig (e.g. through a proxy).
func startCCMWith(name, cloudConfig, kubeconfig string, extraArgs ...string) (*testcluster.Process, error) {
	p, _, err := testcluster.CCM{
		Binary:      suite.ccmBinary,
		Provider:    mainProvider,
		CloudConfig: cloudConfig,
		Kubeconfig:  kubeconfig,
		Dir:         suite.dir,
		Name:        name,
		ExtraArgs:   extraArgs,
	}.Start()
	return p, err
}

// startMainCCM starts the suite's CCM: every controller, including the
// route controller on the suite's TKE cluster route table (routes_test.go).
func startMainCCM(name string) (*testcluster.Process, error) {
	return startCCM(name, writeRoutesCloudConfig(suite.dir, "cloud.yaml"), routeArgs()...)
}

// pauseMainCCM stops the suite's CCM for the rest of the test, for scenarios
// that need to be the only CCM acting, and restarts it afterwards.
func pauseMainCCM(t *testing.T) {
	t.Helper()
	suite.ccm.Stop()
	t.Cleanup(func() {
		p, err := startMainCCM("ccm-after-" + strings.ReplaceAll(t.Name(), "/", "-"))
		if err != nil {
			t.Fatalf("restart the suite's CCM: %v", err)
		}
		suite.ccm = p
	})
}

var ipSeq atomic.Int32

// nextIP hands out a unique loopback address per instance, so tests never
// collide on private IPs.
func nextIP() string {
	n := ipSeq.Add(1)
	return shardAddr(fmt.Sprintf("127.0.%d.%d", 10+n/250, 1+n%250))
}

var idSeq atomic.Int32

// newInstance adds a RUNNING instance in our VPC to cloudsim.
func newInstance(t *testing.T, name string) cloudsim.Instance {
	t.Helper()
	n := idSeq.Add(1) // one read: parallel tests add too, and a second Load could see their number
	in := cloudsim.Instance{
		ID:        fmt.Sprintf("ins-e2e%05d", n),
		Name:      name,
		Type:      "S5.MEDIUM4",
		Zone:      zone,
		PrivateIP: nextIP(),
		PublicIP:  publicIP(n),
		VpcID:     vpcID,
		SubnetID:  "subnet-e2e00001",
		State:     "RUNNING",
	}
	added, err := suite.sim.AddInstances(in)
	if err != nil {
		t.Fatalf("add instance %s: %v", name, err)
	}
	return added[0]
}

func registerNode(t *testing.T, s testcluster.NodeSpec) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := suite.cluster.RegisterNode(ctx, s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = suite.cluster.Client.CoreV1().Nodes().Delete(context.Background(), s.Name, metav1.DeleteOptions{})
	})
}

// waitNode waits up to d for cond on the node and fails the test with the
// node's last state if it does not hold.
func waitNode(t *testing.T, name string, d time.Duration, what string, cond func(*corev1.Node) bool) *corev1.Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	n, err := suite.cluster.WaitForNode(ctx, name, cond)
	if err != nil {
		t.Fatalf("node %s: %s: not within %s (%v); last seen: taints=%v providerID=%q labels=%v",
			name, what, d, err, taintKeys(n), providerID(n), labelsOf(n))
	}
	return n
}

func initialized(n *corev1.Node) bool {
	return !testcluster.HasTaint(n, cloudapi.TaintExternalCloudProvider)
}

func nodeExists(t *testing.T, name string) bool {
	t.Helper()
	_, err := suite.cluster.Client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatalf("get node %s: %v", name, err)
	}
	return true
}

func setReady(t *testing.T, name string, ready bool) {
	t.Helper()
	if err := suite.cluster.SetNodeReady(context.Background(), name, ready); err != nil {
		t.Fatal(err)
	}
}

// calls returns how many DescribeInstances calls cloudsim answered, by result.
func describeCalls() map[string]int { return suite.sim.Calls()["DescribeInstances"] }

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func taintKeys(n *corev1.Node) []string {
	if n == nil {
		return nil
	}
	var keys []string
	for _, t := range n.Spec.Taints {
		keys = append(keys, t.Key)
	}
	return keys
}

func providerID(n *corev1.Node) string {
	if n == nil {
		return ""
	}
	return n.Spec.ProviderID
}

func labelsOf(n *corev1.Node) map[string]string {
	if n == nil {
		return nil
	}
	return n.Labels
}

func addressesOf(n *corev1.Node) map[corev1.NodeAddressType][]string {
	out := map[corev1.NodeAddressType][]string{}
	for _, a := range n.Status.Addresses {
		out[a.Type] = append(out[a.Type], a.Address)
	}
	return out
}

// holdsFor checks cond repeatedly for d and fails the test the first time it
// is false: for "nothing bad happens" assertions.
func holdsFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !cond() {
			t.Fatalf("%s: stopped holding", what)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func mustNotContainSecret(t *testing.T, what, text string) {
	t.Helper()
	if strings.Contains(text, secretKey) {
		t.Errorf("%s contains the secret key", what)
	}
}
