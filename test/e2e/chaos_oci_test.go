//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/internal/testcluster/traffic"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// The fault campaign's OCI rounds: the same accounting as the Tencent
// rounds (wrong deletions, duplicated and leaked load balancers,
// convergence, the steady Service's requests), under an OCI CCM running
// the node, lifecycle and service controllers, with the new Services
// alternating between the Load Balancer (lb) and the Network Load Balancer
// (nlb), and OCI's own faults.

type ociChaosFault struct {
	name   string
	faults []cloudsim.Fault
	crash  bool // SIGKILL and restart the CCM 3 times during the burst
	// unreachable: cloudsim's port is closed for the round's hold.
	unreachable bool
	// failLB: the first new Service's load balancer turns FAILED out of
	// band once it is ACTIVE (the CCM deletes and re-creates it).
	failLB bool
	// busy: every new Service's load balancer is held by another client's
	// work request for the fault window while the nodes join (an NLB
	// answers 409 Conflict to every change meanwhile, an LB queues them).
	busy bool
	// readLag: cloudsim's reads lag its writes by up to this long.
	readLag time.Duration
	// failover: two leader-electing CCM replicas run the round, the
	// leader is SIGKILLed at a random point of the burst while the steady
	// nodes are replaced one by one (surge, taint, delete, terminate), and
	// the load runs through a steady LB and a steady NLB.
	failover bool
}

// ociAction names an OCI action for a fault.
func ociAction(op string) string { return simoci.ActionPrefix + op }

var ociChaosFaults = []ociChaosFault{
	// 429 TooManyRequests, OCI's throttling answer (cloudsim answers the code with its status).
	{name: "429 TooManyRequests burst", faults: []cloudsim.Fault{{Action: "*", ErrorRate: 1, ErrorCode: "TooManyRequests"}}},
	{name: "5xx (half of all calls)", faults: []cloudsim.Fault{{Action: "*", ErrorRate: 0.5, HTTPStatus: 503}}},
	{name: "work requests fail", faults: []cloudsim.Fault{
		{Action: ociAction("CreateLoadBalancer"), ErrorRate: 0.5, FailTask: true},
		{Action: ociAction("nlb:CreateNetworkLoadBalancer"), ErrorRate: 0.5, FailTask: true},
		{Action: ociAction("UpdateBackendSet"), ErrorRate: 0.5, FailTask: true},
		{Action: ociAction("nlb:UpdateBackendSet"), ErrorRate: 0.5, FailTask: true},
	}},
	{name: "load balancer FAILED out of band", failLB: true},
	{name: "409 Conflict while another work request runs", busy: true},
	{name: "cloudsim unreachable (connections refused)", unreachable: true},
	{name: "CCM SIGKILLed 3x", crash: true},
	{name: "reads lag writes by up to 10 s", readLag: 10 * time.Second},
	{name: "CCM leader failover while nodes are replaced", failover: true},
}

// ociChaosPort is the OCI Services' port: the suite's load balancer
// subnets admit clients to 8000-8999 (ociLBIngress).
const ociChaosPort = 8090

// ociChaosService is a LoadBalancer Service of kind ("lb" or "nlb") with
// health checks that notice a node within seconds.
func ociChaosService(name, selector, kind string) *corev1.Service {
	spec := churnServiceSpec(name, selector, ociChaosPort)
	spec.Annotations[annotations.OCILoadBalancerType.String()] = kind
	spec.Annotations[annotations.OCILBHealthCheckInterval.String()] = "1000"
	spec.Annotations[annotations.OCILBHealthCheckTimeout.String()] = "500"
	spec.Annotations[annotations.OCILBHealthCheckRetries.String()] = "2"
	return spec
}

// ociActive is the Service's one live load balancer once it is ACTIVE.
func ociActive(uid types.UID) (simoci.LoadBalancer, bool) {
	lbs := ociLBsOf(uid)
	if len(lbs) != 1 || lbs[0].LifecycleState != "ACTIVE" {
		return simoci.LoadBalancer{}, false
	}
	return lbs[0], true
}

func ociBackendCount(lb simoci.LoadBalancer) int {
	n := 0
	for _, bs := range lb.BackendSets {
		n += len(bs.Backends)
	}
	return n
}

func runOCIChaosRound(t *testing.T, round int, f ociChaosFault, nNodes, nServices int, hold, bound time.Duration) chaosResult {
	res := chaosResult{Cloud: "oci", Fault: f.name, Routes: ociNoRoutes}
	selector := fmt.Sprintf("oci-chaos-%d", round)
	theOCIEnv.prepare(t)
	name := fmt.Sprintf("ccm-oci-chaos-%d", round)
	cfg := theOCIEnv.writeConfig("cloud-"+name+".yaml", "")
	// ccmOutput is the log of the CCM that runs the round to its end.
	var ccmOutput func() string
	var leader, follower *testcluster.Process
	if f.failover {
		leader, follower = startOCIReplicas(t, name, cfg)
		ccmOutput = follower.Output
	} else {
		theOCIEnv.runExclusiveWith(t, name, cfg, lbControllers...)
		ccmOutput = func() string {
			theOCIEnv.mu.Lock()
			defer theOCIEnv.mu.Unlock()
			return theOCIEnv.ccm.Output()
		}
	}
	callsBefore := totalCalls()
	if f.readLag > 0 {
		if err := suite.sim.SetReadLag(f.readLag); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = suite.sim.SetReadLag(0) }()
	}

	var nodeNames, instanceIDs []string
	// The round's instances end with it, as an autoscaler's would: left
	// RUNNING, each would cost every later test that maps a node by its
	// private IP a GetVnic (TestNodeInitialized's lookup budget).
	t.Cleanup(func() {
		for _, n := range nodeNames {
			_ = suite.cluster.Client.CoreV1().Nodes().Delete(context.Background(), n, metav1.DeleteOptions{})
		}
		for _, id := range instanceIDs {
			_ = suite.sim.SetInstanceState(id, "TERMINATED")
		}
	})
	newInstance := func(name string) cloudsim.Instance {
		in := theOCIEnv.newInstance(t, name)
		instanceIDs = append(instanceIDs, in.ID)
		return in
	}
	var fresh, sick, doomed []cloudsim.Instance
	for i := 0; i < nNodes; i++ {
		fresh = append(fresh, newInstance(fmt.Sprintf("%s-%d", selector, i)))
	}
	for i := 0; i < max(1, nNodes/10); i++ {
		for _, list := range []*[]cloudsim.Instance{&sick, &doomed} {
			in := newInstance(fmt.Sprintf("%s-nr-%d-%d", selector, len(*list), i))
			registerInitializedNode(t, in.PrivateIP, "oci://"+in.OCID, false, false)
			registered.Store(in.PrivateIP, true)
			nodeNames = append(nodeNames, in.PrivateIP)
			*list = append(*list, in)
		}
	}

	// The steady Service (lb) in service on two steady nodes before the
	// fault (with a steady nlb too under failover, so that the load runs
	// through both kinds); the new Services alternate lb and nlb.
	steadySpecs := []*corev1.Service{ociChaosService("oci-chaos-steady", selector, "lb")}
	if f.failover {
		steadySpecs = append(steadySpecs, ociChaosService("oci-chaos-steady-nlb", selector, "nlb"))
	}
	var nodePorts []int32
	for _, spec := range steadySpecs {
		nodePorts = append(nodePorts, spec.Spec.Ports[0].NodePort)
	}
	var svcs []*corev1.Service
	for i := 0; i < nServices; i++ {
		svc := ociChaosService("oci-chaos", selector, []string{"lb", "nlb"}[i%2])
		nodePorts = append(nodePorts, svc.Spec.Ports[0].NodePort)
		svcs = append(svcs, svc)
	}
	for _, in := range fresh {
		for _, np := range nodePorts {
			serve(t, in.PrivateIP, np, 200, "ok")
		}
	}
	var steadySvcs []*corev1.Service
	churn := ociChaosChurn(selector, nodePorts, func() []*corev1.Service { return steadySvcs })
	var steady []churnNode
	for range 2 {
		steady = append(steady, churn.join(t, "ok"))
	}
	var addrs []string
	for _, spec := range steadySpecs {
		svc := createService(t, spec)
		addr := fmt.Sprintf("%s:%d", waitIngress(t, svc, 90*time.Second), ociChaosPort)
		steadySvcs = append(steadySvcs, getService(t, svc))
		waitAnswers(t, "http://"+addr+"/", 60*time.Second, "ok")
		addrs = append(addrs, addr)
	}
	load := traffic.Start(traffic.Options{Addrs: addrs})

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wrong := map[string]bool{}
	var wrongMu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			for _, in := range append(append([]cloudsim.Instance{}, sick...), fresh...) {
				if !nodeWasRegistered(in.PrivateIP) {
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

	// The fault, then the burst: the Services, then (once held, in the
	// busy round) the nodes joining and the doomed instances ending.
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
	for i, svc := range svcs {
		created, err := suite.cluster.Client.CoreV1().Services(svc.Namespace).Create(context.Background(), svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svcs[i] = created
	}
	if f.busy || f.failLB {
		targets := svcs
		if f.failLB {
			targets = svcs[:1]
		}
		for _, svc := range targets {
			var lb simoci.LoadBalancer
			waitFor(t, "the load balancer of "+svc.Name+" ACTIVE", 90*time.Second, func() bool {
				var ok bool
				lb, ok = ociActive(svc.UID)
				return ok
			})
			if f.failLB {
				if err := suite.sim.OCI().FailLoadBalancer(lb.ID); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if _, err := suite.sim.OCI().HoldLoadBalancer(lb.ID, hold); err != nil {
				t.Fatalf("hold %s: %v", lb.ID, err)
			}
		}
		faultStart = time.Now()
	}
	for _, in := range fresh {
		registerNode(t, testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP, Labels: map[string]string{lbNodeLabel: selector}})
		registered.Store(in.PrivateIP, true)
		nodeNames = append(nodeNames, in.PrivateIP)
	}
	for _, in := range doomed {
		if err := suite.sim.SetInstanceState(in.ID, "TERMINATED"); err != nil {
			t.Fatal(err)
		}
	}
	if f.crash {
		for k := 0; k < 3; k++ {
			time.Sleep(time.Duration(rand.IntN(int(hold/time.Millisecond)/3+1)) * time.Millisecond)
			theOCIEnv.mu.Lock()
			theOCIEnv.ccm.Kill()
			p, err := theOCIEnv.startCCM(fmt.Sprintf("%s-restart-%d", name, k), cfg, lbControllers...)
			if err == nil {
				theOCIEnv.ccm = p
			}
			theOCIEnv.mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if f.failover {
		killed := make(chan time.Time, 1)
		go func() {
			time.Sleep(time.Duration(rand.IntN(int(hold/time.Millisecond)/2+1)) * time.Millisecond)
			leader.Kill()
			killed <- time.Now()
		}()
		for i, old := range steady {
			steady[i] = ociReplaceSteady(t, churn, old, func() []*corev1.Service { return steadySvcs })
			t.Logf("steady node %s replaced by %s: %s", old.in.PrivateIP, steady[i].in.PrivateIP, load.Counts())
		}
		at := <-killed
		ctx, cancel := context.WithTimeout(context.Background(), leaseDuration+15*time.Second)
		if err := follower.WaitForOutput(ctx, acquiredLease); err != nil {
			t.Errorf("the follower did not take over from the killed leader: %v", err)
		}
		cancel()
		t.Logf("leader SIGKILLed %s after the burst began; the follower leads, at most %s after the kill (checked once the nodes were replaced)",
			at.Sub(faultStart).Round(100*time.Millisecond), time.Since(at).Round(100*time.Millisecond))
	}
	time.Sleep(time.Until(faultStart.Add(hold)))
	suite.sim.ClearFaults()
	if f.unreachable {
		if err := suite.sim.Resume(); err != nil {
			t.Fatal(err)
		}
	}
	cleared := time.Now()

	svcs = append(svcs, steadySvcs...)
	backendsWanted := len(fresh) + len(steady)
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
		for _, svc := range svcs {
			s, err := suite.cluster.Client.CoreV1().Services(svc.Namespace).Get(context.Background(), svc.Name, metav1.GetOptions{})
			if err != nil || len(s.Status.LoadBalancer.Ingress) == 0 {
				return fmt.Sprintf("Service %s/%s has no ingress (err=%v)", svc.Namespace, svc.Name, err)
			}
			lb, ok := ociActive(svc.UID)
			if !ok {
				return fmt.Sprintf("Service %s/%s has %d live load balancers (want 1, ACTIVE)", svc.Namespace, svc.Name, len(ociLBsOf(svc.UID)))
			}
			if got := ociBackendCount(lb); got != backendsWanted {
				return fmt.Sprintf("Service %s/%s: %s %s has %d backends, want %d", svc.Namespace, svc.Name, lb.Kind, lb.ID, got, backendsWanted)
			}
			if ip := s.Status.LoadBalancer.Ingress[0].IP; ip != lb.IPAddress {
				return fmt.Sprintf("Service %s/%s: ingress %s, but its load balancer's VIP is %s", svc.Namespace, svc.Name, ip, lb.IPAddress)
			}
			if body, err := httpGet(fmt.Sprintf("http://%s:%d/", lb.IPAddress, ociChaosPort)); err != nil || body != "ok" {
				return fmt.Sprintf("Service %s/%s: GET through %s: %q, %v", svc.Namespace, svc.Name, lb.IPAddress, body, err)
			}
		}
		return ""
	})
	if !converged {
		t.Logf("not converged %s after the fault cleared: %s (CCM logs in %s); the CCM's last errors:\n%s",
			bound, missing, suite.dir, lastErrors(ccmOutput(), 30))
	}
	res.Converged = converged
	res.ConvergeSeconds = time.Since(cleared).Seconds()
	if f.readLag > 0 {
		_ = suite.sim.SetReadLag(0)
	}
	counts := load.Stop()
	res.Requests, res.RequestsFailed, res.ConnectionsReset = counts.Requests, counts.RequestsFailed, counts.ConnectionsReset
	if counts.RequestsFailed > 0 {
		t.Logf("the steady Service's load: %s", counts)
	}
	for _, svc := range svcs {
		if n := len(ociLBsOf(svc.UID)); n > 1 {
			res.LBsDuplicated += n - 1
		}
	}

	for _, svc := range svcs {
		_ = suite.cluster.Client.CoreV1().Services(svc.Namespace).Delete(context.Background(), svc.Name, metav1.DeleteOptions{})
	}
	waitConverged(bound, func() string {
		for _, svc := range svcs {
			if n := len(ociLBsOf(svc.UID)); n > 0 {
				return fmt.Sprintf("Service %s/%s still has %d load balancers", svc.Namespace, svc.Name, n)
			}
		}
		return ""
	})
	for _, svc := range svcs {
		res.LBsLeaked += len(ociLBsOf(svc.UID))
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

// startOCIReplicas pauses the suite's CCMs and starts two OCI CCM replicas
// under leader election (the HA scenarios' timings); it returns them once
// one leads. Both stop when the test ends (a cleanup: the round deletes its
// Services before and needs a CCM for their finalizers).
func startOCIReplicas(t *testing.T, name, cfg string) (leader, follower *testcluster.Process) {
	t.Helper()
	pauseMainCCM(t)
	theOCIEnv.pause(t)
	procs := map[string]*testcluster.Process{}
	for _, id := range []string{"a", "b"} {
		p, err := theOCIEnv.startCCM(name+"-"+id, cfg, append(append([]string{}, lbControllers...), upgradeArgs...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Stop)
		procs[id] = p
	}
	l, f := waitForLeader(t, procs, 30*time.Second)
	t.Logf("OCI replica %s leads, %s follows", l, f)
	return procs[l], procs[f]
}

// ociChaosChurn joins and ends the round's steady nodes; a node's target is
// its backends on the steady Services' load balancers (LB and NLB).
func ociChaosChurn(selector string, nodePorts []int32, steady func() []*corev1.Service) churnCloud {
	return churnCloud{
		join: func(t *testing.T, body string) churnNode {
			ip := nextIP()
			var stops []func()
			for _, np := range nodePorts {
				stops = append(stops, serveStoppable(t, ip, np, body))
			}
			in := ociLBNodeWith(t, selector, func(in *cloudsim.Instance) { in.PrivateIP = ip })
			return churnNode{in: in, stop: func() {
				for _, s := range stops {
					s()
				}
			}}
		},
		terminate: func(t *testing.T, in cloudsim.Instance) {
			if err := suite.sim.SetInstanceState(in.ID, "TERMINATED"); err != nil {
				t.Fatal(err)
			}
		},
	}
}

// ociSteadyTargets reports, for each steady Service's load balancer,
// whether the node at ip is a backend and whether it is in service.
func ociSteadyTargets(svcs []*corev1.Service, ip string) (present, inService []bool) {
	for _, svc := range svcs {
		var p, in bool
		if lbs := ociLBsOf(svc.UID); len(lbs) == 1 {
			st, err := suite.sim.OCI().DataPlane(lbs[0].ID)
			p, in = targetIn(st, err, ip)
		}
		present, inService = append(present, p), append(inService, in)
	}
	return present, inService
}

func allTrue(bs []bool) bool {
	for _, b := range bs {
		if !b {
			return false
		}
	}
	return true
}

func noneTrue(bs []bool) bool {
	for _, b := range bs {
		if b {
			return false
		}
	}
	return true
}

// ociReplaceSteady replaces a steady node as the autoscaler does
// (replaceNode), with every step waited for on both steady load balancers:
// the replacement in service on each, the old node out of service on each
// after the taint, then deregistered from each once its Node is deleted.
func ociReplaceSteady(t *testing.T, c churnCloud, old churnNode, steady func() []*corev1.Service) churnNode {
	t.Helper()
	ip := old.in.PrivateIP
	repl := c.join(t, "ok")
	waitFor(t, repl.in.PrivateIP+" in service on every steady load balancer", 90*time.Second, func() bool {
		_, in := ociSteadyTargets(steady(), repl.in.PrivateIP)
		return allTrue(in)
	})
	setTaint(t, ip, true)
	waitFor(t, ip+" out of service on every steady load balancer after the taint", 60*time.Second, func() bool {
		_, in := ociSteadyTargets(steady(), ip)
		return noneTrue(in)
	})
	if err := suite.cluster.Client.CoreV1().Nodes().Delete(context.Background(), ip, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ip+" deregistered from every steady load balancer", 90*time.Second, func() bool {
		present, _ := ociSteadyTargets(steady(), ip)
		return noneTrue(present)
	})
	c.terminate(t, old.in)
	old.stop()
	return repl
}
