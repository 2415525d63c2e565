//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/internal/testcluster/traffic"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// The fault campaign: under each fault cloudsim can inject (and under CCM
// crashes), with N nodes and M LoadBalancer Services, the CCM must never
// delete a node whose instance runs, never duplicate or leak a load balancer,
// and converge once the fault clears, with traffic through every VIP.
//
// Each round also has a steady Service, in service before the fault on two
// steady nodes, with a client load through its VIP for the whole round
// (traffic.Load: short requests and keep-alive connections): the round
// reports the requests, the failed ones and the reset connections, what
// users of existing load balancers feel while the CCM is under the fault.
//
// `make test` runs it small; `make chaos` runs it with 50 nodes and 20
// Services and writes bench/results/chaos.json. Sizes come from CHAOS_NODES,
// CHAOS_SERVICES and CHAOS_HOLD (how long each fault lasts).

type chaosFault struct {
	name   string
	faults []cloudsim.Fault
	crash  bool // SIGKILL and restart the CCM at random points instead
	// unreachable: cloudsim's port is closed for the round's hold
	// (connections refused, not errors answered), at least
	// CHAOS_UNREACHABLE_SECONDS (default 10; make chaos: 30).
	unreachable bool
	// apiserverKill: the kube-apiserver is SIGKILLed at a random point of
	// the burst and started again apiserverDown later (etcd keeps the data).
	apiserverKill bool
	// churn: the steady nodes are replaced one at a time, the way the
	// cluster autoscaler does it (churn_test.go), during the burst.
	churn bool
	// failover: the round runs under two CCM replicas with leader
	// election instead of the suite's CCM, and the leader is SIGKILLed at
	// a random point of the burst, while the steady nodes are replaced.
	failover bool
	// readLag: cloudsim's reads lag its writes by up to this long (its
	// read lag, off by default) from before the round's instances are
	// made until the round has converged: new instances, CLBs, listeners
	// and targets show in Describe answers only within the lag.
	readLag time.Duration
}

// apiserverDown is how long the killed apiserver stays down: shorter than
// the CCM's leader-election renew deadline (10 s), as a crashed apiserver
// that its static pod restarts is.
const apiserverDown = 6 * time.Second

var chaosFaults = []chaosFault{
	{name: "random 20% errors", faults: []cloudsim.Fault{{Action: "*", ErrorRate: 0.2, ErrorCode: "InternalError"}}},
	{name: "RequestLimitExceeded burst", faults: []cloudsim.Fault{{Action: "*", ErrorRate: 1, ErrorCode: "RequestLimitExceeded"}}},
	{name: "5xx (half of all calls)", faults: []cloudsim.Fault{{Action: "*", ErrorRate: 0.5, HTTPStatus: 503}}},
	{name: "latency beyond the SDK timeout", faults: []cloudsim.Fault{
		{Action: "DescribeInstances", Latency: 16 * time.Second},
		{Action: "DescribeLoadBalancers", Latency: 16 * time.Second},
	}},
	{name: "async tasks fail", faults: []cloudsim.Fault{
		{Action: "CreateListener", ErrorRate: 0.5, FailTask: true},
		{Action: "BatchRegisterTargets", ErrorRate: 0.5, FailTask: true},
	}},
	{name: "BatchRegisterTargets always fails", faults: []cloudsim.Fault{{Action: "BatchRegisterTargets", ErrorRate: 1, ErrorCode: "InternalError"}}},
	{name: "CCM SIGKILLed 3x", crash: true},
	{name: "cloudsim unreachable (connections refused)", unreachable: true},
	{name: "kube-apiserver SIGKILLed mid-burst", apiserverKill: true},
	{name: "nodes replaced one by one (autoscaler)", churn: true},
	{name: "CCM leader failover while nodes are replaced", failover: true, churn: true},
	{name: "reads lag writes by up to 10 s", readLag: 10 * time.Second},
}

// chaosResult is one row of the summary (and of chaos.json).
type chaosResult struct {
	Cloud              string  `json:"cloud"` // "tencent" or "oci"
	Fault              string  `json:"fault"`
	Operations         int     `json:"operations"`
	NodesWronglyDelete int     `json:"nodes_wrongly_deleted"`
	TerminatedDeleted  int     `json:"terminated_nodes_deleted"`
	LBsDuplicated      int     `json:"lbs_duplicated"`
	LBsLeaked          int     `json:"lbs_leaked"`
	Converged          bool    `json:"converged"`
	ConvergeSeconds    float64 `json:"converge_seconds"`
	// CCMRestarts counts CCM exits the harness answered with a restart, as
	// the CCM's Deployment would (a leader that cannot renew its lease
	// exits by design).
	CCMRestarts int `json:"ccm_restarts,omitempty"`
	// The steady Service's client load over the round.
	Requests         int64 `json:"requests"`
	RequestsFailed   int64 `json:"requests_failed"`
	ConnectionsReset int64 `json:"connections_reset"`
	// Routes counts the round's nodes' pod routes after convergence: a
	// routeCount on Tencent (TKE cluster route table), a string saying why
	// not on OCI, which programs no routes.
	Routes any `json:"routes"`
}

// routeCount is the round's pod routes in the cloud once converged: every
// running node's pod CIDR routed exactly once, none for a deleted node.
type routeCount struct {
	Expected   int `json:"expected"`   // running round nodes with a pod CIDR
	Present    int `json:"present"`    // of those, routed to the node
	Missing    int `json:"missing"`    // of those, not routed to the node
	Duplicated int `json:"duplicated"` // extra routes for one pod CIDR
	Stale      int `json:"stale"`      // routes left for deleted nodes
}

func (r routeCount) bad() bool { return r.Missing > 0 || r.Duplicated > 0 || r.Stale > 0 }

// ociNoRoutes is the OCI rounds' routes field: the OCI provider offers no
// Routes (pod networking on OCI is the CNI's; nothing to program).
const ociNoRoutes = "n/a: the OCI provider programs no routes"

// countRoutes counts the table's routes for the running nodes' pod CIDRs
// (cidrs: node IP -> pod CIDR) and for the deleted ones'.
func countRoutes(t *testing.T, running, deleted map[string]string) routeCount {
	t.Helper()
	rs := tableRoutes(t)
	n := func(cidr string) int {
		k := 0
		for _, r := range rs {
			if r.DestinationCIDR == cidr {
				k++
			}
		}
		return k
	}
	c := routeCount{Expected: len(running)}
	for ip, cidr := range running {
		k := n(cidr)
		if hasRoute(rs, route(cidr, ip)) {
			c.Present++
		} else {
			c.Missing++ // not routed, or not to this node
		}
		c.Duplicated += max(k-1, 0)
	}
	for _, cidr := range deleted {
		c.Stale += n(cidr)
	}
	return c
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// The campaign is one test per cloud, so that the e2e shards (and `make
// chaos`) run the two at once; each merges its cloud's rounds into
// CHAOS_OUT (mergeChaosJSON).
func TestFaultCampaignTencent(t *testing.T) {
	names := make([]string, len(chaosFaults))
	for i, f := range chaosFaults {
		names[i] = f.name
	}
	runFaultCampaign(t, "tencent", names, func(t *testing.T, i, nodes, services int, hold, bound time.Duration) chaosResult {
		return runChaosRound(t, i, chaosFaults[i], nodes, services, hold, bound)
	})
}

func TestFaultCampaignOCI(t *testing.T) {
	names := make([]string, len(ociChaosFaults))
	for i, f := range ociChaosFaults {
		names[i] = f.name
	}
	runFaultCampaign(t, "oci", names, func(t *testing.T, i, nodes, services int, hold, bound time.Duration) chaosResult {
		return runOCIChaosRound(t, i, ociChaosFaults[i], nodes, services, hold, bound)
	})
}

// runFaultCampaign runs a cloud's rounds one after another (they share the
// shard's cloudsim, whose faults are global) and checks each.
func runFaultCampaign(t *testing.T, cloud string, faults []string, round func(t *testing.T, i, nodes, services int, hold, bound time.Duration) chaosResult) {
	nodes, services := envInt("CHAOS_NODES", 6), envInt("CHAOS_SERVICES", 3)
	hold := time.Duration(envInt("CHAOS_HOLD_SECONDS", 5)) * time.Second
	const convergeBound = 3 * time.Minute

	var results []chaosResult
	for i, name := range faults {
		t.Run(cloud+"/"+name, func(t *testing.T) {
			r := round(t, i, nodes, services, hold, convergeBound)
			results = append(results, r)
			rc, ok := r.Routes.(routeCount)
			if r.NodesWronglyDelete > 0 || r.LBsDuplicated > 0 || r.LBsLeaked > 0 || !r.Converged || r.RequestsFailed > 0 || ok && rc.bad() {
				t.Errorf("%+v", r)
			}
		})
	}
	printChaosSummary(nodes, services, results)
	if out := os.Getenv("CHAOS_OUT"); out != "" {
		mergeChaosJSON(t, out, cloud, nodes, services, results)
	}
}

func runChaosRound(t *testing.T, round int, f chaosFault, nNodes, nServices int, hold, bound time.Duration) chaosResult {
	res := chaosResult{Cloud: "tencent", Fault: f.name}
	selector := fmt.Sprintf("chaos-%d", round)
	callsBefore := totalCalls()
	if f.readLag > 0 {
		// Before the instances are made: the new nodes' instances, the
		// doomed ones' termination and every CLB lag too.
		if err := suite.sim.SetReadLag(f.readLag); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = suite.sim.SetReadLag(0) }()
	}

	// Nodes: fresh ones the CCM must initialize, NotReady ones whose
	// instance keeps running (must stay), and NotReady ones whose instance
	// is terminated during the fault (must go).
	podCIDRs := map[string]string{} // node IP -> pod CIDR, for the route count
	var fresh, sick, doomed []cloudsim.Instance
	for i := 0; i < nNodes; i++ {
		in := newInstance(t, fmt.Sprintf("%s-%d", selector, i))
		fresh = append(fresh, in)
	}
	extra := max(1, nNodes/10)
	for i := 0; i < extra; i++ {
		for _, list := range []*[]cloudsim.Instance{&sick, &doomed} {
			in := newInstance(t, fmt.Sprintf("%s-nr-%d-%d", selector, len(*list), i))
			registerInitializedNode(t, in.PrivateIP, fmt.Sprintf("tencentcloud:///%s/%s", zone, in.ID), false, false)
			registered.Store(in.PrivateIP, true)
			setPodCIDR(t, in.PrivateIP, podCIDRs)
			*list = append(*list, in)
		}
	}

	// Services, with a stand-in server on every node's NodePort; the
	// steady Service first, in service before the fault on the steady
	// nodes (which the other Services select too).
	steadySpec := churnServiceSpec("chaos-steady", selector, 80)
	nodePorts := []int32{steadySpec.Spec.Ports[0].NodePort}
	var svcs []*corev1.Service
	for i := 0; i < nServices; i++ {
		svc := lbServiceSpec("chaos", selector, 80)
		nodePorts = append(nodePorts, svc.Spec.Ports[0].NodePort)
		svcs = append(svcs, svc)
	}
	for _, n := range fresh {
		for _, np := range nodePorts {
			serve(t, n.PrivateIP, np, 200, "ok")
		}
	}
	var steadySvc *corev1.Service
	cloud := tencentChurn(selector, nodePorts, func() *corev1.Service { return steadySvc })
	var steady []churnNode
	for range 2 {
		steady = append(steady, cloud.join(t, "ok"))
	}
	steadySvc = createService(t, steadySpec)
	steadyURL := fmt.Sprintf("http://%s:80/", waitIngress(t, steadySvc, 90*time.Second))
	steadySvc = getService(t, steadySvc)
	waitAnswers(t, steadyURL, 60*time.Second, "ok")

	// A round under failover runs with two CCM replicas under leader
	// election instead of the suite's.
	var leader, follower *testcluster.Process
	if f.failover {
		leader, follower = startReplicas(t, round)
		defer func() {
			leader.Stop()
			follower.Stop()
			p, err := startMainCCM(fmt.Sprintf("ccm-chaos-after-failover-%d", round))
			if err != nil {
				t.Fatal(err)
			}
			suite.ccm = p
		}()
	}
	load := traffic.Start(traffic.Options{Addrs: []string{strings.TrimPrefix(strings.TrimSuffix(steadyURL, "/"), "http://")}})

	// Watch for wrong deletions during the whole round.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wrong := map[string]bool{}
	var wrongMu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			for _, in := range append(append([]cloudsim.Instance{}, sick...), fresh...) {
				if !nodeWasRegistered(in.PrivateIP) { // checked first: a node not yet created is not deleted
					continue
				}
				_, err := suite.cluster.Client.CoreV1().Nodes().Get(context.Background(), in.PrivateIP, metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					wrongMu.Lock()
					wrong[in.PrivateIP] = true
					wrongMu.Unlock()
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()

	// The fault starts, then the burst of changes arrives.
	for _, fl := range f.faults {
		suite.sim.SetFault(fl)
	}
	if f.unreachable {
		hold = max(hold, time.Duration(envInt("CHAOS_UNREACHABLE_SECONDS", 10))*time.Second)
		if err := suite.sim.Suspend(); err != nil {
			t.Fatal(err)
		}
	}
	faultStart := time.Now()
	for _, in := range fresh {
		podCIDRs[in.PrivateIP] = chaosPodCIDR()
		registerChaosNode(t, in, selector, podCIDRs[in.PrivateIP])
	}
	for _, in := range doomed {
		if err := suite.sim.SetInstanceState(in.ID, "TERMINATING"); err != nil {
			t.Fatal(err)
		}
	}
	for i, svc := range svcs {
		created, err := suite.cluster.Client.CoreV1().Services(svc.Namespace).Create(context.Background(), svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svcs[i] = created
	}
	if f.crash {
		for k := 0; k < 3; k++ {
			time.Sleep(time.Duration(rand.IntN(int(hold/time.Millisecond)/3+1)) * time.Millisecond)
			suite.ccm.Kill()
			p, err := startMainCCM(fmt.Sprintf("ccm-chaos-restart-%d-%d", round, k))
			if err != nil {
				t.Fatal(err)
			}
			suite.ccm = p
		}
	}
	if f.apiserverKill {
		time.Sleep(time.Duration(rand.IntN(int(hold/time.Millisecond)/2+1)) * time.Millisecond)
		restart, err := suite.cluster.KillAPIServer()
		if err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		if _, err := suite.cluster.Client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{Limit: 1}); err == nil {
			t.Fatal("the apiserver still answers after SIGKILL")
		}
		time.Sleep(apiserverDown)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		err = restart(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("kube-apiserver SIGKILLed, serving again %s later", time.Since(killed).Round(100*time.Millisecond))
		if exited, code := suite.ccm.Exited(); exited {
			t.Logf("the CCM exited (code %d) while the apiserver was down; restarting it as its Deployment would", code)
			p, err := startMainCCM(fmt.Sprintf("ccm-chaos-apiserver-%d", round))
			if err != nil {
				t.Fatal(err)
			}
			suite.ccm = p
			res.CCMRestarts++
		}
	}
	if f.failover {
		go func() {
			time.Sleep(time.Duration(rand.IntN(int(hold/time.Millisecond)/2+1)) * time.Millisecond)
			leader.Kill()
		}()
	}
	if f.churn {
		for i, old := range steady {
			steady[i] = replaceNode(t, cloud, old, "ok")
		}
	}
	time.Sleep(time.Until(faultStart.Add(hold)))
	suite.sim.ClearFaults()
	if f.unreachable {
		if err := suite.sim.Resume(); err != nil {
			t.Fatal(err)
		}
	}
	cleared := time.Now()

	// Converge: every node initialized, the terminated ones deleted, one CLB
	// per Service with every node as a target, and traffic through each VIP.
	svcs = append(svcs, steadySvc)
	targetsWanted := len(fresh) + len(steady)
	running, deleted := map[string]string{}, map[string]string{}
	for ip, cidr := range podCIDRs {
		running[ip] = cidr
	}
	for _, in := range doomed {
		deleted[in.PrivateIP] = podCIDRs[in.PrivateIP]
		delete(running, in.PrivateIP)
	}
	converged, missing := waitConverged(bound, func() string {
		for _, in := range fresh {
			n, err := suite.cluster.Client.CoreV1().Nodes().Get(context.Background(), in.PrivateIP, metav1.GetOptions{})
			if err != nil || !initialized(n) {
				return fmt.Sprintf("node %s not initialized (err=%v)", in.PrivateIP, err)
			}
		}
		for _, in := range doomed {
			if _, err := suite.cluster.Client.CoreV1().Nodes().Get(context.Background(), in.PrivateIP, metav1.GetOptions{}); err == nil {
				return fmt.Sprintf("node %s (instance terminated) still exists", in.PrivateIP)
			}
		}
		if c := countRoutes(t, running, deleted); c.bad() {
			return fmt.Sprintf("pod routes: %+v", c)
		}
		for _, svc := range svcs {
			s, err := suite.cluster.Client.CoreV1().Services(svc.Namespace).Get(context.Background(), svc.Name, metav1.GetOptions{})
			if err != nil || len(s.Status.LoadBalancer.Ingress) == 0 {
				return fmt.Sprintf("Service %s/%s has no ingress (err=%v)", svc.Namespace, svc.Name, err)
			}
			lbs := clbsOf(svc.UID)
			if len(lbs) != 1 || len(lbs[0].Listeners) != 1 {
				return fmt.Sprintf("Service %s/%s has %d CLBs (want 1 with 1 listener)", svc.Namespace, svc.Name, len(lbs))
			}
			if got := len(targetInstances(lbs[0].Listeners[0])); got != targetsWanted {
				return fmt.Sprintf("Service %s/%s: CLB %s has %d targets, want %d", svc.Namespace, svc.Name, lbs[0].ID, got, targetsWanted)
			}
			if body, err := httpGet(fmt.Sprintf("http://%s:80/", s.Status.LoadBalancer.Ingress[0].IP)); err != nil || body != "ok" {
				return fmt.Sprintf("Service %s/%s: GET through %s: %q, %v", svc.Namespace, svc.Name, s.Status.LoadBalancer.Ingress[0].IP, body, err)
			}
		}
		return ""
	})
	if !converged {
		t.Logf("not converged %s after the fault cleared: %s (CCM logs in %s); the CCM's last errors:\n%s",
			bound, missing, suite.dir, lastErrors(suite.ccm.Output(), 30))
	}
	res.Converged = converged
	res.ConvergeSeconds = time.Since(cleared).Seconds()
	if f.readLag > 0 {
		_ = suite.sim.SetReadLag(0) // the counts below read the state as it is
	}
	res.Routes = countRoutes(t, running, deleted)
	counts := load.Stop()
	res.Requests, res.RequestsFailed, res.ConnectionsReset = counts.Requests, counts.RequestsFailed, counts.ConnectionsReset
	if counts.RequestsFailed > 0 {
		t.Logf("the steady Service's load: %s", counts)
	}
	for _, svc := range svcs {
		if n := len(clbsOf(svc.UID)); n > 1 {
			res.LBsDuplicated += n - 1
		}
	}

	// Delete the Services: no load balancer may be left behind.
	for _, svc := range svcs {
		_ = suite.cluster.Client.CoreV1().Services(svc.Namespace).Delete(context.Background(), svc.Name, metav1.DeleteOptions{})
	}
	waitConverged(bound, func() string {
		for _, svc := range svcs {
			if n := len(clbsOf(svc.UID)); n > 0 {
				return fmt.Sprintf("Service %s/%s still has %d CLBs", svc.Namespace, svc.Name, n)
			}
		}
		return ""
	})
	for _, svc := range svcs {
		res.LBsLeaked += len(clbsOf(svc.UID))
	}

	close(stop)
	wg.Wait()
	res.NodesWronglyDelete = len(wrong)
	for _, in := range doomed {
		if !nodeExists(t, in.PrivateIP) {
			res.TerminatedDeleted++
		}
	}
	res.Operations = totalCalls() - callsBefore
	return res
}

var registered sync.Map // node name -> true once registered

func nodeWasRegistered(name string) bool { _, ok := registered.Load(name); return ok }

func registerChaosNode(t *testing.T, in cloudsim.Instance, selector, podCIDR string) {
	t.Helper()
	registerNode(t, testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP, PodCIDR: podCIDR, Labels: map[string]string{lbNodeLabel: selector}})
	registered.Store(in.PrivateIP, true)
}

var chaosPodCIDRSeq atomic.Int32

// chaosPodCIDR is the next /28 pod CIDR of the campaign, from the top of the
// cluster CIDR down (nextPodCIDR's /24s count up from its bottom, and its 256
// do not cover make chaos's hundreds of nodes): 1,024 of them in
// 10.244.192.0/18.
func chaosPodCIDR() string {
	n := chaosPodCIDRSeq.Add(1)
	off := 1<<16 - 16*int(n)
	return fmt.Sprintf("10.244.%d.%d/28", off>>8, off&0xff)
}

// setPodCIDR gives a registered node a new pod CIDR (as the node IPAM
// controller does once) and records it in cidrs.
func setPodCIDR(t *testing.T, name string, cidrs map[string]string) {
	t.Helper()
	cidr := chaosPodCIDR()
	patch := fmt.Sprintf(`{"spec":{"podCIDR":%q,"podCIDRs":[%q]}}`, cidr, cidr)
	if _, err := suite.cluster.Client.CoreV1().Nodes().Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("set the pod CIDR of node %s: %v", name, err)
	}
	cidrs[name] = cidr
}

// waitConverged polls cond, which names what is still missing ("" once
// converged), until it is satisfied or bound passes; it returns the last
// thing missing so that a failure says what did not converge.
func waitConverged(bound time.Duration, cond func() string) (bool, string) {
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		if cond() == "" {
			return true, ""
		}
		time.Sleep(500 * time.Millisecond)
	}
	missing := cond()
	return missing == "", missing
}

// lastErrors returns the last n error and warning lines of a klog output.
func lastErrors(log string, n int) string {
	var lines []string
	for _, l := range strings.Split(log, "\n") {
		if strings.HasPrefix(l, "E") || strings.HasPrefix(l, "W") {
			if len(l) > 600 {
				l = l[:600] + "…"
			}
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func totalCalls() int {
	n := 0
	for _, byCode := range suite.sim.Calls() {
		n += total(byCode)
	}
	return n
}

func printChaosSummary(nodes, services int, rs []chaosResult) {
	fmt.Printf("\nFault campaign: %d nodes, %d LoadBalancer Services per fault\n", nodes, services)
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "CLOUD\tFAULT\tOPERATIONS\tNODES WRONGLY DELETED\tTERMINATED DELETED\tLBS DUPLICATED\tLBS LEAKED\tCONVERGED\tSECONDS TO CONVERGE\tCCM RESTARTS\tREQUESTS\tFAILED\tCONNS RESET\tROUTES OK/MISSING/DUP/STALE")
	for _, r := range rs {
		routes := "n/a"
		if rc, ok := r.Routes.(routeCount); ok {
			routes = fmt.Sprintf("%d/%d/%d/%d", rc.Present, rc.Missing, rc.Duplicated, rc.Stale)
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%v\t%.1f\t%d\t%d\t%d\t%d\t%s\n", r.Cloud, r.Fault, r.Operations, r.NodesWronglyDelete,
			r.TerminatedDeleted, r.LBsDuplicated, r.LBsLeaked, r.Converged, r.ConvergeSeconds, r.CCMRestarts,
			r.Requests, r.RequestsFailed, r.ConnectionsReset, routes)
	}
	_ = w.Flush()
	fmt.Println()
}

// chaosDoc is bench/results/chaos.json: every round of both clouds, and
// the totals.
type chaosDoc struct {
	Nodes              int           `json:"nodes"`
	Services           int           `json:"services"`
	Faults             []string      `json:"faults"`
	Operations         int           `json:"operations"`
	NodesWronglyDelete int           `json:"nodes_wrongly_deleted"`
	LBsDuplicated      int           `json:"lbs_duplicated"`
	LBsLeaked          int           `json:"lbs_leaked"`
	Converged          bool          `json:"converged"`
	MaxConvergeSeconds float64       `json:"max_converge_seconds"`
	RoutesMissing      int           `json:"routes_missing"`
	RoutesDuplicated   int           `json:"routes_duplicated"`
	RoutesStale        int           `json:"routes_stale"`
	Rounds             []chaosResult `json:"rounds"`
}

// mergeChaosJSON writes cloud's rounds into the document at path: the
// other cloud's rounds stay when the file holds a run of the same size
// (`make chaos` removes the file first, then runs each cloud in its own
// shard), and the totals are counted again. An flock on the file keeps two
// shards' merges apart.
func mergeChaosJSON(t *testing.T, path, cloud string, nodes, services int, rs []chaosResult) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(repoRoot(), path)
	}
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatalf("chaos: open %s: %v", path, err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatalf("chaos: lock %s: %v", path, err)
	}
	var prev chaosDoc
	if data, err := io.ReadAll(f); err == nil && len(data) > 0 {
		_ = json.Unmarshal(data, &prev) // a file we cannot read is replaced
	}
	out := chaosDoc{Nodes: nodes, Services: services, Converged: true}
	if prev.Nodes == nodes && prev.Services == services {
		for _, r := range prev.Rounds {
			if r.Cloud != cloud {
				// Routes decoded from JSON is a map: typed again, for the totals.
				if m, ok := r.Routes.(map[string]any); ok {
					var rc routeCount
					if data, err := json.Marshal(m); err == nil && json.Unmarshal(data, &rc) == nil {
						r.Routes = rc
					}
				}
				out.Rounds = append(out.Rounds, r)
			}
		}
	}
	out.Rounds = append(out.Rounds, rs...)
	// Tencent's rounds first, as the campaign's table reads.
	sort.SliceStable(out.Rounds, func(i, j int) bool { return out.Rounds[i].Cloud == "tencent" && out.Rounds[j].Cloud != "tencent" })
	for _, r := range out.Rounds {
		out.Faults = append(out.Faults, r.Cloud+"/"+r.Fault)
		out.Operations += r.Operations
		out.NodesWronglyDelete += r.NodesWronglyDelete
		out.LBsDuplicated += r.LBsDuplicated
		out.LBsLeaked += r.LBsLeaked
		out.Converged = out.Converged && r.Converged
		out.MaxConvergeSeconds = max(out.MaxConvergeSeconds, r.ConvergeSeconds)
		if rc, ok := r.Routes.(routeCount); ok {
			out.RoutesMissing += rc.Missing
			out.RoutesDuplicated += rc.Duplicated
			out.RoutesStale += rc.Stale
		}
	}
	data, _ := json.MarshalIndent(out, "", "  ")
	if err := f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	fmt.Println("chaos: wrote", cloud, "rounds into", path)
}

// startReplicas stops the suite's CCM and starts two replicas of it under
// leader election (with the HA principals, so that their calls are told
// apart); it returns them once one leads.
func startReplicas(t *testing.T, round int) (leader, follower *testcluster.Process) {
	t.Helper()
	suite.ccm.Stop()
	procs := map[string]*testcluster.Process{}
	for i, id := range haSecretIDs {
		name := fmt.Sprintf("ccm-chaos-replica-%d-%c", round, 'a'+i)
		p, err := startCCM(name, writeRoutesCloudConfigAs(suite.dir, name+".yaml", id), append(routeArgs(),
			"--leader-elect=true", "--leader-elect-lease-duration="+leaseDuration.String(),
			"--leader-elect-renew-deadline=5s", "--leader-elect-retry-period="+retryPeriod.String())...)
		if err != nil {
			t.Fatal(err)
		}
		procs[id] = p
	}
	l, f := waitForLeader(t, procs, 30*time.Second)
	return procs[l], procs[f]
}
