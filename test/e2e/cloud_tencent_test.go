//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// tencentEnv is Tencent Cloud under the conformance scenarios: the suite's
// main CCM (main_test.go), CVM instances in the suite's VPC.
type tencentEnv struct{}

func init() { registerCloud(tencentEnv{}) }

func (tencentEnv) name() string { return "tencentcloud" }

// start: the suite's main CCM is already running (TestMain).
func (tencentEnv) start(*testing.T) {}

func (tencentEnv) newInstance(t *testing.T, name string) cloudsim.Instance {
	t.Helper()
	return newInstance(t, name)
}

func (e tencentEnv) newInstanceWith(t *testing.T, name string, setup func(*cloudsim.Instance)) cloudsim.Instance {
	t.Helper()
	if setup == nil {
		return newInstance(t, name)
	}
	in := cloudsim.Instance{
		ID: fmt.Sprintf("ins-e2e%05d", idSeq.Add(1)), Name: name, Type: "S5.MEDIUM4", Zone: zone, PrivateIP: nextIP(),
		VpcID: vpcID, SubnetID: "subnet-e2e00001", State: "RUNNING",
	}
	setup(&in)
	added, err := suite.sim.AddInstances(in)
	if err != nil {
		t.Fatalf("add instance %s: %v", name, err)
	}
	return added[0]
}

func (tencentEnv) foreignInstance(t *testing.T, name string) cloudsim.Instance {
	t.Helper()
	in := cloudsim.Instance{ID: "ins-othervpc", Name: name, Zone: zone, PrivateIP: nextIP(), VpcID: "vpc-other001", State: "RUNNING"}
	added, err := suite.sim.AddInstances(in)
	if err != nil {
		t.Fatal(err)
	}
	return added[0]
}

func (tencentEnv) providerID(in cloudsim.Instance) string {
	return fmt.Sprintf("tencentcloud:///%s/%s", zone, in.ID)
}

func (tencentEnv) labels(in cloudsim.Instance) map[string]string {
	return map[string]string{
		corev1.LabelTopologyZone:       zone,
		corev1.LabelTopologyRegion:     region,
		corev1.LabelInstanceTypeStable: "S5.MEDIUM4",
	}
}

// mappings: the seed project's private IPv4 name, the instance name, the
// instance ID, or only the InternalIP.
func (tencentEnv) mappings() []nodeMapping {
	return []nodeMapping{
		{name: "name is private IP", node: func(in cloudsim.Instance) testcluster.NodeSpec {
			return testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP}
		}},
		{name: "name is instance name, no address", node: func(in cloudsim.Instance) testcluster.NodeSpec {
			return testcluster.NodeSpec{Name: in.Name}
		}},
		{name: "name is instance ID", node: func(in cloudsim.Instance) testcluster.NodeSpec {
			return testcluster.NodeSpec{Name: in.ID, InternalIP: in.PrivateIP}
		}},
		{name: "other name, InternalIP", node: func(in cloudsim.Instance) testcluster.NodeSpec {
			return testcluster.NodeSpec{Name: "host-" + in.ID[4:], InternalIP: in.PrivateIP}
		}},
	}
}

func (tencentEnv) lookupCalls() int { return total(describeCalls()) }
func (tencentEnv) initBudget() int  { return 6 }

func (tencentEnv) faults() []faultCase {
	var out []faultCase
	for _, f := range []cloudsim.Fault{
		{Action: "*", ErrorRate: 1, ErrorCode: "InternalError"},
		{Action: "DescribeInstances", ErrorRate: 1, ErrorCode: "RequestLimitExceeded"},
		{Action: "*", ErrorRate: 1, HTTPStatus: 503},
		{Action: "DescribeInstances", ErrorRate: 1, ErrorCode: "AuthFailure.UnauthorizedOperation"},
	} {
		out = append(out, faultCase{name: fmt.Sprintf("%s-%s%d", f.Action, f.ErrorCode, f.HTTPStatus), faults: []cloudsim.Fault{f}})
	}
	return out
}

func (tencentEnv) badCredentials(*testing.T) []credentialCase {
	return []credentialCase{
		{name: "wrong key", config: writeCloudConfig(suite.dir, "cloud-wrong-key.yaml", secretID, "not-the-right-key"), wantCode: "AuthFailure.SignatureFailure"},
		{name: "unknown id", config: writeCloudConfig(suite.dir, "cloud-unknown-id.yaml", "AKIDunknown", secretKey), wantCode: "AuthFailure.SecretIdNotFound"},
	}
}

func (tencentEnv) malformedConfigs() []configCase {
	return []configCase{
		{"bad vpc", "region: ap-guangzhou\nvpc_id: 12345\nsecret_id: a\nsecret_key: b\n", "vpc_id"},
		{"missing region", "vpc_id: vpc-e2e00001\nsecret_id: a\nsecret_key: b\n", "region"},
		{"unknown key", "region: ap-guangzhou\nvpc_id: vpc-e2e00001\nsecret_id: a\nsecret_key: b\nvpcid: x\n", "vpcid"},
		{"bad endpoint", "region: ap-guangzhou\nvpc_id: vpc-e2e00001\nsecret_id: a\nsecret_key: b\napi_endpoint: ftp://x\n", "api_endpoint"},
		{"two credential sources", "region: ap-guangzhou\nvpc_id: vpc-e2e00001\nsecret_id: a\nsecret_key: b\ncvm_role_name: ccm\n", "two credential sources are configured"},
		{"role not bound", "region: ap-guangzhou\nvpc_id: vpc-e2e00001\ncredential_source: cvm-role\nmetadata_endpoint: " + suite.simURL + "\n", "no such CAM role is bound to this instance"},
	}
}

func (tencentEnv) startCCM(name, cloudConfig string, extraArgs ...string) (*testcluster.Process, error) {
	return startCCM(name, cloudConfig, extraArgs...)
}

func (tencentEnv) pause(t *testing.T) { pauseMainCCM(t) }

func (tencentEnv) leaksSecret(text string) bool { return strings.Contains(text, secretKey) }

// The load balancer hooks (lb_conformance_test.go): CLBs.

// startLB: the suite's CCM runs the service controller; it pauses.
func (tencentEnv) startLB(t *testing.T) { pauseMainCCM(t) }

func (tencentEnv) startLBCCM(name string) (*testcluster.Process, error) {
	p, _, err := testcluster.CCM{
		Binary: suite.ccmBinary, Provider: "tencentcloud", Kubeconfig: suite.kubeconfig, Dir: suite.dir, Name: name,
		CloudConfig: writeCloudConfig(suite.dir, "cloud-lb.yaml", secretID, secretKey),
		Env:         []string{"TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_LB_DRIFT_CHECK_PERIOD=2s"},
		ExtraArgs:   lbControllers,
	}.Start()
	return p, err
}

func (tencentEnv) lbNode(t *testing.T, selector string) cloudsim.Instance {
	t.Helper()
	return lbNode(t, selector)
}

func (tencentEnv) lbKinds() []lbKind { return []lbKind{{name: "clb"}} }

func clbView(lb tencent.CLBLoadBalancer) lbView {
	v := lbView{id: lb.ID, vip: lb.VIP}
	for _, l := range lb.Listeners {
		v.listeners = append(v.listeners, lbListener{name: l.Name, port: l.Port, targets: len(l.Targets)})
	}
	return v
}

// serviceLBs: the CLBs tagged with the Service's UID.
func (tencentEnv) serviceLBs(uid types.UID) []lbView {
	var out []lbView
	for _, lb := range clbsOf(uid) {
		out = append(out, clbView(lb))
	}
	return out
}

func (tencentEnv) lbIDs() []string { return clbIDs() }

func clbIDs() []string {
	var ids []string
	for _, lb := range suite.sim.Tencent().CLB().LoadBalancers() {
		ids = append(ids, lb.ID)
	}
	return ids
}

func (tencentEnv) lb(id string) (lbView, bool) {
	lb, err := suite.sim.Tencent().CLB().LoadBalancer(id)
	return clbView(lb), err == nil
}

// clbWrites are the CLB actions that change something.
var clbWrites = []string{"CreateLoadBalancer", "DeleteLoadBalancer", "ModifyLoadBalancerAttributes", "CreateListener", "ModifyListener", "DeleteListener",
	"DeleteLoadBalancerListeners", "BatchRegisterTargets", "BatchDeregisterTargets", "RegisterTargets", "DeregisterTargets"}

func (tencentEnv) lbWrites() map[string]int {
	out := map[string]int{}
	for action, byCode := range suite.sim.Calls() {
		if slices.Contains(clbWrites, action) {
			out[action] = total(byCode)
		}
	}
	return out
}

func (tencentEnv) lbReads() int {
	calls := suite.sim.Calls()
	return total(calls["DescribeLoadBalancers"]) + total(calls["DescribeListeners"])
}

// adoptableLB: a CLB of someone else's, with a listener of theirs, named
// by the Service's tke-existed-lbid annotation.
func (tencentEnv) adoptableLB(t *testing.T, svc *corev1.Service) (lbView, lbListener) {
	t.Helper()
	existing, err := suite.sim.Tencent().CLB().CreateLoadBalancer(tencent.CLBSpec{Name: "team-shared", VpcID: vpcID,
		Listeners: []tencent.CLBListenerSpec{{Name: "legacy", Protocol: "TCP", Port: 9443}}})
	if err != nil {
		t.Fatalf("create the CLB to adopt: %v", err)
	}
	t.Cleanup(func() { _ = suite.sim.Tencent().CLB().DeleteLoadBalancer(existing.ID) })
	updateService(t, svc, func(s *corev1.Service) { s.Annotations[string(annotations.TKEExistedLBID)] = existing.ID })
	return clbView(existing), lbListener{name: "legacy", port: 9443}
}

func (tencentEnv) adoptedLBKept() bool { return true }

func (tencentEnv) deleteListener(t *testing.T, lb lbView, port int) {
	t.Helper()
	now, err := suite.sim.Tencent().CLB().LoadBalancer(lb.id)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range now.Listeners {
		if l.Port == port {
			if err := suite.sim.Tencent().CLB().DeleteListener(lb.id, l.ID); err != nil {
				t.Fatalf("delete listener %s of CLB %s: %v", l.ID, lb.id, err)
			}
			return
		}
	}
	t.Fatalf("CLB %s has no listener on port %d: %+v", lb.id, port, now.Listeners)
}

func (tencentEnv) badLBService() (func(*corev1.Service), []string) {
	return func(s *corev1.Service) { s.Annotations[annotations.HealthCheckInterval.String()] = "often" },
		[]string{annotations.HealthCheckInterval.String(), `"often"`}
}
