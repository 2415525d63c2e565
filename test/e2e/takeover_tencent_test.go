//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/profile"
	tke "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/tke/v20180525"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/lb/lbkit"
	"github.com/ccmkit/ccm/internal/tencent/clbops"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/internal/testcluster/traffic"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// Switching from the incumbents on Tencent Cloud (docs/migration.md): the
// CLBs managed TKE's service controller made, and the pod routes of the
// seed Tencent CCM. Each incumbent's resources are made through the SDK
// exactly as it makes them, as a principal of its own (incumbentSecretID),
// and our CCM then runs as another (takeoverSecretID, takeoverTKESecretID,
// seedRoutesSecretID), so that cloudsim's counts tell their calls apart.
const (
	incumbentSecretID   = "AKIDccmkitINCUMBENT0000000000000000"
	takeoverSecretID    = "AKIDccmkitTAKEOVER0000000000000000"
	takeoverTKESecretID = "AKIDccmkitTAKEOVERTKE0000000000000"
	seedRoutesSecretID  = "AKIDccmkitSEEDROUTES00000000000000"
	// tkeClusterID is the TKE cluster the incumbent CLBs were made for.
	tkeClusterID = "cls-e2etke01"
)

// incumbentCLB is the incumbent's SDK client for CLB.
func incumbentCLB(t *testing.T) *clb.Client {
	t.Helper()
	c, err := clb.NewClient(common.NewCredential(incumbentSecretID, secretKey), region, simProfile())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func simProfile() *profile.ClientProfile {
	cpf := profile.NewClientProfile()
	cpf.HttpProfile.Endpoint = strings.TrimPrefix(suite.simURL, "http://")
	cpf.HttpProfile.Scheme = "HTTP"
	return cpf
}

// waitTencentTask polls DescribeTaskStatus until the task of requestID ends.
func waitTencentTask(t *testing.T, c *clb.Client, requestID *string) {
	t.Helper()
	waitFor(t, "task "+*requestID, 30*time.Second, func() bool {
		req := clb.NewDescribeTaskStatusRequest()
		req.TaskId = requestID
		resp, err := c.DescribeTaskStatus(req)
		if err != nil {
			t.Fatal(err)
		}
		if *resp.Response.Status == 1 {
			t.Fatalf("task %s failed: %s", *requestID, deref(resp.Response.Message))
		}
		return *resp.Response.Status == 0
	})
}

// makeTKECLB makes a Service's CLB the way TKE's service controller does
// (TKE docs 457/36835, 457/45491): a public application CLB in the VPC,
// tagged tke-createdBy-flag=yes and tke-clusterId, created without
// LoadBalancerPassToTarget (the API's default, false); one listener per
// Service port named TKE-DEDICATED-LISTENER with no HealthCheck parameter
// (CLB's default: TCP to each target's port every 5 s, timeout 2 s, 3/3);
// the nodes' instances bound at the NodePorts with weight 10. It returns
// the CLB's id and VIP.
func makeTKECLB(t *testing.T, vpc, cluster string, svc *corev1.Service, nodes []cloudsim.Instance) (string, string) {
	t.Helper()
	c := incumbentCLB(t)
	req := clb.NewCreateLoadBalancerRequest()
	req.LoadBalancerType, req.Forward, req.VpcId = common.StringPtr("OPEN"), common.Int64Ptr(1), common.StringPtr(vpc)
	req.LoadBalancerName = common.StringPtr(svc.Namespace + "_" + svc.Name)
	req.Tags = []*clb.TagInfo{
		{TagKey: common.StringPtr(clbops.TagTKECreatedBy), TagValue: common.StringPtr("yes")},
		{TagKey: common.StringPtr(clbops.TagTKECluster), TagValue: common.StringPtr(cluster)},
	}
	resp, err := c.CreateLoadBalancer(req)
	if err != nil {
		t.Fatal(err)
	}
	id := *resp.Response.LoadBalancerIds[0]
	waitTencentTask(t, c, resp.Response.RequestId)
	for _, p := range svc.Spec.Ports {
		lreq := clb.NewCreateListenerRequest()
		lreq.LoadBalancerId, lreq.Protocol = &id, common.StringPtr(string(p.Protocol))
		lreq.Ports, lreq.ListenerNames = common.Int64Ptrs([]int64{int64(p.Port)}), common.StringPtrs([]string{clbops.TKEListenerName})
		lresp, err := c.CreateListener(lreq)
		if err != nil {
			t.Fatal(err)
		}
		waitTencentTask(t, c, lresp.Response.RequestId)
		if len(nodes) == 0 {
			continue
		}
		treq := clb.NewBatchRegisterTargetsRequest()
		treq.LoadBalancerId = &id
		for _, n := range nodes {
			treq.Targets = append(treq.Targets, &clb.BatchTarget{ListenerId: lresp.Response.ListenerIds[0], InstanceId: common.StringPtr(n.ID),
				Port: common.Int64Ptr(int64(p.NodePort)), Weight: common.Int64Ptr(10)})
		}
		tresp, err := c.BatchRegisterTargets(treq)
		if err != nil {
			t.Fatal(err)
		}
		waitTencentTask(t, c, tresp.Response.RequestId)
	}
	lb := waitCLB(t, id, "a VIP", 30*time.Second, func(lb tencent.CLBLoadBalancer) bool { return lb.VIP != "" })
	return id, lb.VIP
}

// tkeService creates svc as TKE's controller leaves it: the CLB's id in
// service.kubernetes.io/loadbalance-id and its VIP in the status.
func tkeService(t *testing.T, svc *corev1.Service, id, vip string) *corev1.Service {
	t.Helper()
	svc.Annotations[string(annotations.TKELoadBalanceID)] = id
	created := createService(t, svc)
	created.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: vip}}
	updated, err := suite.cluster.Client.CoreV1().Services(created.Namespace).UpdateStatus(context.Background(), created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return updated
}

// takeoverConfig is a cloud config for principal id with extra keys.
func takeoverConfig(name, id, extra string) string {
	path := writeCloudConfig(suite.dir, name, id, secretKey)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	if _, err := f.WriteString(extra); err != nil {
		panic(err)
	}
	return path
}

// adoptDryRun runs the real binary's `adopt --dry-run -o json` with the CCM's
// kubeconfig and cloud config, and returns the plans by Service name.
func adoptDryRun(t *testing.T, cloudConfig string) map[string]lbkit.Plan {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, suite.ccmBinary, "adopt", "--dry-run", "-o", "json", "--cloud-provider="+mainProvider,
		"--cloud-config="+cloudConfig, "--kubeconfig="+suite.kubeconfig)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("adopt --dry-run: %v: %s", err, stderr.String())
	}
	var plans []lbkit.Plan
	if err := json.Unmarshal(out, &plans); err != nil {
		t.Fatalf("adopt --dry-run -o json: %v: %s", err, out)
	}
	byName := map[string]lbkit.Plan{}
	for _, p := range plans {
		byName[p.Service.Name] = p
	}
	return byName
}

// writesBy are principal's write calls so far, by action.
func writesBy(principal string) map[string]int {
	principals.Lock()
	defer principals.Unlock()
	out := map[string]int{}
	for a, n := range principals.actions[principal] {
		if !strings.HasPrefix(a, "Describe") {
			out[a] = n
		}
	}
	return out
}

// planned counts plans' writes by action.
func planned(plans ...lbkit.Plan) map[string]int {
	out := map[string]int{}
	for _, p := range plans {
		for _, w := range p.Writes {
			out[w.Action]++
		}
	}
	return out
}

func TestTencentTakeoverFromTKE(t *testing.T) {
	pauseMainCCM(t)
	t.Run("our defaults", func(t *testing.T) { tkeTakeover(t, "ccmkit", takeoverSecretID) })
	t.Run("TKE's defaults", func(t *testing.T) { tkeTakeover(t, "tke", takeoverTKESecretID) })
}

// tkeTakeover: two Services whose CLBs TKE made, and one whose CLB TKE
// made in another VPC; our CCM starts under traffic through both VIPs.
func tkeTakeover(t *testing.T, defaults, principal string) {
	sel := "tke-takeover-" + defaults
	ports := []int32{8311, 8312}
	var nodes []cloudsim.Instance
	var services []*corev1.Service
	var specs []*corev1.Service
	for i := range 2 {
		specs = append(specs, lbServiceSpec("tke-"+defaults, sel, ports[i]))
	}
	for i := range 2 {
		ip := nextIP()
		for _, s := range specs {
			serve(t, ip, nodePort(s, s.Spec.Ports[0].Port), 200, fmt.Sprintf("node-%d", i+1))
		}
		nodes = append(nodes, lbNodeAt(t, sel, ip))
	}
	// Stopped after the Services are deleted (their cleanups run first),
	// which it must do as TKE would: deleting their CLBs.
	var ccm *testcluster.Process
	t.Cleanup(func() {
		if ccm != nil {
			ccm.Stop()
		}
	})
	ids, vips := map[string]string{}, map[string]string{}
	for _, s := range specs {
		id, vip := makeTKECLB(t, vpcID, tkeClusterID, s, nodes)
		svc := tkeService(t, s, id, vip)
		services = append(services, svc)
		ids[svc.Name], vips[svc.Name] = id, vip
	}
	// TKE's CLB for this one is in another VPC: refused, never replaced.
	refusedSpec := lbServiceSpec("tke-refused-"+defaults, sel, 8313)
	otherID, otherVIP := makeTKECLB(t, "vpc-e2eother", tkeClusterID, refusedSpec, nil)
	simCLB := suite.sim.Tencent().CLB()
	t.Cleanup(func() { _ = simCLB.DeleteLoadBalancer(otherID) })
	refused := tkeService(t, refusedSpec, otherID, otherVIP)
	clbsBefore := len(simCLB.LoadBalancers())

	cfg := takeoverConfig("takeover-"+defaults+".yaml", principal, fmt.Sprintf("lb_defaults: %s\ntke_cluster_id: %s\n", defaults, tkeClusterID))
	plans := adoptDryRun(t, cfg)
	for _, svc := range services {
		p := plans[svc.Name]
		if p.Verdict != lbkit.VerdictTakeOver || p.LoadBalancer != ids[svc.Name] || p.Owner != clbops.OwnerTKE {
			t.Fatalf("dry run for %s = %+v, want a take-over of %s", svc.Name, p, ids[svc.Name])
		}
		t.Logf("dry run %s: %d writes %v", svc.Name, len(p.Writes), p.Writes)
	}
	if p := plans[refused.Name]; p.Verdict != lbkit.VerdictRefuse || !strings.Contains(p.Reason, "not the cluster's VPC") {
		t.Errorf("dry run for %s = %+v, want a refusal naming the VPC", refused.Name, p)
	}
	want := planned(plans[services[0].Name], plans[services[1].Name])
	if defaults == "tke" && len(want) != 0 {
		t.Errorf("with lb_defaults tke the dry run plans writes: %v", want)
	}
	if w := writesBy(principal); len(w) != 0 {
		t.Fatalf("the dry run wrote %v", w)
	}

	var addrs []string
	for _, svc := range services {
		addr := fmt.Sprintf("%s:%d", vips[svc.Name], svc.Spec.Ports[0].Port)
		waitAnswers(t, "http://"+addr+"/", 30*time.Second, "node-1", "node-2")
		addrs = append(addrs, addr)
	}
	load := traffic.Start(traffic.Options{Addrs: addrs})
	p, err := startCCM("ccm-takeover-"+defaults, cfg)
	if err != nil {
		load.Stop()
		t.Fatal(err)
	}
	ccm = p
	for _, svc := range services {
		waitEvent(t, svc, "EnsuredLoadBalancer", nil, 60*time.Second)
	}
	waitEvent(t, refused, "SyncLoadBalancerFailed", []string{otherID, "not the cluster's VPC", "remove the annotation " + string(annotations.TKELoadBalanceID)}, 60*time.Second)
	// A few health-check rounds under the new CCM.
	waitFor(t, "traffic under the new CCM", 30*time.Second, func() bool { return load.Counts().Requests > 600 })
	counts := load.Stop()
	t.Logf("switch-over under load: %s", counts)

	if counts.RequestsFailed != 0 {
		t.Errorf("requests failed during the switch: %s", counts)
	}
	got := writesBy(principal)
	if !mapsEqual(got, want) {
		t.Errorf("first sync wrote %v, the dry run printed %v", got, want)
	}
	for _, a := range []string{"CreateLoadBalancer", "DeleteLoadBalancer"} {
		if n := actionCallsBy(principal, a); n != 0 {
			t.Errorf("%s called %d times", a, n)
		}
	}
	if n := len(simCLB.LoadBalancers()); n != clbsBefore {
		t.Errorf("%d CLBs, want %d: none created or deleted", n, clbsBefore)
	}
	for _, svc := range append(services, refused) {
		s := getService(t, svc)
		want := vips[svc.Name]
		if svc.Name == refused.Name {
			want = otherVIP
		}
		if ing := s.Status.LoadBalancer.Ingress; len(ing) != 1 || ing[0].IP != want {
			t.Errorf("Service %s status %v, want TKE's VIP %s unchanged", svc.Name, ing, want)
		}
	}
	for _, svc := range services {
		lb, err := simCLB.LoadBalancer(ids[svc.Name])
		if err != nil {
			t.Fatal(err)
		}
		if lb.Tags[clbops.TagTKECreatedBy] != "yes" || lb.Tags[clbops.TagTKECluster] != tkeClusterID {
			t.Errorf("CLB %s tags %v: TKE's must stay", lb.ID, lb.Tags)
		}
		if _, ours := lb.Tags[clbops.TagServiceUID]; ours != (defaults == "ccmkit") {
			t.Errorf("CLB %s tags %v: ours added = %t, want %t", lb.ID, lb.Tags, ours, defaults == "ccmkit")
		}
		for _, l := range lb.Listeners {
			if l.Name != clbops.TKEListenerName {
				t.Errorf("CLB %s listener %s: TKE's name must stay", lb.ID, l.Name)
			}
		}
	}

	// The user says so: without the annotation the refused Service gets a
	// CLB of its own (a new address).
	if defaults == "ccmkit" {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, annotations.TKELoadBalanceID)
		if _, err := suite.cluster.Client.CoreV1().Services(refused.Namespace).Patch(context.Background(), refused.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "a CLB of its own", 60*time.Second, func() bool { return len(clbsOf(refused.UID)) == 1 })
	}
	// Deleting the Services deletes the CLBs TKE made for them, as TKE
	// did; the CLB in the other VPC stays.
	for _, svc := range append(services, refused) {
		if err := suite.cluster.Client.CoreV1().Services(svc.Namespace).Delete(context.Background(), svc.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitServiceGone(t, svc, 60*time.Second)
	}
	for _, svc := range services {
		waitFor(t, "CLB "+ids[svc.Name]+" deleted with "+svc.Name, 30*time.Second, func() bool {
			_, err := simCLB.LoadBalancer(ids[svc.Name])
			return err != nil
		})
	}
	if _, err := simCLB.LoadBalancer(otherID); err != nil {
		t.Errorf("the refused CLB %s was deleted: %v", otherID, err)
	}
}

func mapsEqual(a, b map[string]int) bool {
	ka, kb := make([]string, 0, len(a)), make([]string, 0, len(b))
	for k := range a {
		ka = append(ka, k)
	}
	for k := range b {
		kb = append(kb, k)
	}
	slices.Sort(ka)
	slices.Sort(kb)
	if !slices.Equal(ka, kb) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestTencentTakeoverSeedRoutes: the seed Tencent CCM
// (TencentCloud/tencentcloud-cloud-controller-manager) programs a route per
// node in the TKE cluster route table, CreateClusterRoute{RouteTableName,
// GatewayIp: the node's name, which is its private IP, DestinationCidrBlock:
// its pod CIDR}. Our CCM starting with the route controller on the same
// table takes them over: no route deleted and created again.
func TestTencentTakeoverSeedRoutes(t *testing.T) {
	pauseMainCCM(t)
	c, err := tke.NewClient(common.NewCredential(incumbentSecretID, secretKey), region, simProfile())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var routes []tencent.ClusterRoute
	for i := range 3 {
		in := newInstance(t, fmt.Sprintf("seed-route-%d", i))
		cidr := nextPodCIDR()
		names = append(names, routeNode(t, in, cidr)) // named by private IP, as the seed requires
		req := tke.NewCreateClusterRouteRequest()
		req.RouteTableName, req.GatewayIp, req.DestinationCidrBlock = common.StringPtr(routeTable), common.StringPtr(in.PrivateIP), common.StringPtr(cidr)
		if _, err := c.CreateClusterRoute(req); err != nil {
			t.Fatal(err)
		}
		routes = append(routes, route(cidr, in.PrivateIP))
	}
	p, err := startCCM("ccm-seed-routes", writeRoutesCloudConfigAs(suite.dir, "seed-routes.yaml", seedRoutesSecretID), routeArgs()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	for _, name := range names {
		waitNode(t, name, routeWait, "NetworkUnavailable=False (RouteCreated)", networkAvailable)
	}
	// Two more reconciles after that, each of which lists the table.
	reads := actionCallsBy(seedRoutesSecretID, "DescribeClusterRoutes")
	waitFor(t, "two more route reconciles", 3*routePeriod+10*time.Second, func() bool {
		return actionCallsBy(seedRoutesSecretID, "DescribeClusterRoutes") >= reads+2
	})
	for _, a := range []string{"CreateClusterRoute", "DeleteClusterRoute"} {
		if n := actionCallsBy(seedRoutesSecretID, a); n != 0 {
			t.Errorf("%s called %d times: the seed CCM's routes must be taken over as they are", a, n)
		}
	}
	have := tableRoutes(t)
	for _, r := range routes {
		if !hasRoute(have, r) {
			t.Errorf("route %v gone; table: %v", r, have)
		}
	}
}
