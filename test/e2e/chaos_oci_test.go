//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
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
}

// ociChaosPort is the OCI Services' port: the suite's load balancer
// subnets admit clients to 8000-8999 (ociLBIngress).
const ociChaosPort = 8090

// ociChaosService is a LoadBalancer Service of kind ("lb" or "nlb") with
// health checks that notice a node within seconds.
func ociChaosService(name, selector, kind string) *corev1.Service {
	spec := churnServiceSpec(name, selector, ociChaosPort)
	spec.Annotations[string(annotations.OCILoadBalancerType)] = kind
	spec.Annotations[string(annotations.OCILBHealthCheckInterval)] = "1000"
	spec.Annotations[string(annotations.OCILBHealthCheckTimeout)] = "500"
	spec.Annotations[string(annotations.OCILBHealthCheckRetries)] = "2"
	return spec
}

// ociActive is the Service's one live load balancer once it is ACTIVE.
func ociActive(uid types.UID) (cloudsim.OCILoadBalancer, bool) {
	lbs := ociLBsOf(uid)
	if len(lbs) != 1 || lbs[0].LifecycleState != "ACTIVE" {
		return cloudsim.OCILoadBalancer{}, false
	}
	return lbs[0], true
}

func ociBackendCount(lb cloudsim.OCILoadBalancer) int {
	n := 0
	for _, bs := range lb.BackendSets {
		n += len(bs.Backends)
	}
	return n
}

func runOCIChaosRound(t *testing.T, round int, f ociChaosFault, nNodes, nServices int, hold, bound time.Duration) chaosResult {
	res := chaosResult{Cloud: "oci", Fault: f.name}
	selector := fmt.Sprintf("oci-chaos-%d", round)
	theOCIEnv.prepare(t)
	name := fmt.Sprintf("ccm-oci-chaos-%d", round)
	cfg := theOCIEnv.writeConfig("cloud-"+name+".yaml", "")
	theOCIEnv.runExclusiveWith(t, name, cfg, lbControllers...)
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
	// fault; the new Services alternate lb and nlb.
	steadySpec := ociChaosService("oci-chaos-steady", selector, "lb")
	nodePorts := []int32{steadySpec.Spec.Ports[0].NodePort}
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
	var steady []cloudsim.Instance
	for range 2 {
		ip := nextIP()
		for _, np := range nodePorts {
			serve(t, ip, np, 200, "ok")
		}
		steady = append(steady, ociLBNodeWith(t, selector, func(in *cloudsim.Instance) { in.PrivateIP = ip }))
	}
	steadySvc := createService(t, steadySpec)
	steadyURL := fmt.Sprintf("http://%s:%d/", waitIngress(t, steadySvc, 90*time.Second), ociChaosPort)
	steadySvc = getService(t, steadySvc)
	waitAnswers(t, steadyURL, 60*time.Second, "ok")
	load := traffic.Start(traffic.Options{Addrs: []string{strings.TrimPrefix(strings.TrimSuffix(steadyURL, "/"), "http://")}})

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
			var lb cloudsim.OCILoadBalancer
			waitFor(t, "the load balancer of "+svc.Name+" ACTIVE", 90*time.Second, func() bool {
				var ok bool
				lb, ok = ociActive(svc.UID)
				return ok
			})
			if f.failLB {
				if err := suite.sim.FailOCILoadBalancer(lb.ID); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if _, err := suite.sim.HoldOCILoadBalancer(lb.ID, hold); err != nil {
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
	time.Sleep(time.Until(faultStart.Add(hold)))
	suite.sim.ClearFaults()
	if f.unreachable {
		if err := suite.sim.Resume(); err != nil {
			t.Fatal(err)
		}
	}
	cleared := time.Now()

	svcs = append(svcs, steadySvc)
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
		theOCIEnv.mu.Lock()
		out := theOCIEnv.ccm.Output()
		theOCIEnv.mu.Unlock()
		t.Logf("not converged %s after the fault cleared: %s (CCM logs in %s); the CCM's last errors:\n%s",
			bound, missing, suite.dir, lastErrors(out, 30))
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
