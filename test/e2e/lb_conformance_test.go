//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// The load balancer conformance scenarios: adoption, drift repair, restart
// and kill safety, bad annotations. Each runs against every cloudEnv and
// asserts one contract; what differs between clouds (how a load balancer
// is made or changed behind the CCM's back, which annotation is bad, which
// calls write) is in the cloudEnv's load balancer hooks below. Each
// scenario runs CCMs of its own (lbHarness), with a short drift check
// period, so that it can kill and restart them.

// lbControllers are what an LB scenario's CCM runs.
var lbControllers = []string{"--controllers=cloud-node,cloud-node-lifecycle,service"}

// lbHooks are the load balancer half of a cloudEnv.
type lbHooks interface {
	// startLB prepares the cloud and stops, for the rest of the test,
	// every CCM that would act on Services: the scenario runs its own.
	startLB(t *testing.T)
	// startLBCCM starts a CCM running the node and service controllers,
	// with a 2 s drift check period.
	startLBCCM(name string) (*testcluster.Process, error)
	// lbNode adds a running instance and its Node as the CCM leaves it
	// once initialized (providerID, InternalIP, Ready), labeled for the
	// selector (lbServiceSpec); both go at the end of the test.
	lbNode(t *testing.T, selector string) cloudsim.Instance
	// lbKinds are the kinds of load balancer the cloud offers, the
	// default first.
	lbKinds() []lbKind
	// serviceLBs are the live load balancers the CCM made for the Service,
	// found by the mark it puts on them (a tag, a name).
	serviceLBs(uid types.UID) []lbView
	// lbIDs are the ids of the cloud's live load balancers. Tests compare
	// sets of ids, not counts: an earlier test's load balancer may still be
	// going away (a deferred delete) while a later one runs.
	lbIDs() []string
	// lb reads a load balancer; false if it is gone (or going).
	lb(id string) (lbView, bool)
	// lbWrites are the load balancer calls that change something, by
	// action, since the last cloudsim ResetCalls; lbReads counts those
	// that read a load balancer.
	lbWrites() map[string]int
	lbReads() int
	// adoptableLB makes, out of band, a load balancer with a listener of
	// someone else's (foreign) that the Service must be served by instead
	// of a new one, and changes the Service as the cloud requires. The
	// CCM must not run yet.
	adoptableLB(t *testing.T, svc *corev1.Service) (lb lbView, foreign lbListener)
	// adoptedLBKept: an adopted load balancer outlives its Service
	// (Tencent: adopted by annotation, shared) or goes with it (OCI: the
	// one named for the Service, as the public OCI CCM names them, is the
	// Service's own).
	adoptedLBKept() bool
	// deleteListener deletes the listener on port behind the CCM's back.
	deleteListener(t *testing.T, lb lbView, port int)
	// badLBService turns a working Service into one the cloud refuses;
	// the refusal's Event must contain every string of want.
	badLBService() (change func(*corev1.Service), want []string)
}

// lbKind is a kind of load balancer and the annotations that ask for it.
type lbKind struct {
	name        string
	annotations map[string]string
}

// lbView is a load balancer, whichever the cloud.
type lbView struct {
	id, vip   string
	listeners []lbListener
}

type lbListener struct {
	name    string
	port    int
	targets int // backends of the listener's backend set, on OCI
}

func (lb lbView) listenerOn(port int) (lbListener, bool) {
	for _, l := range lb.listeners {
		if l.port == port {
			return l, true
		}
	}
	return lbListener{}, false
}

// lbHarness runs an LB scenario's CCMs, one at a time.
type lbHarness struct {
	t   *testing.T
	env cloudEnv
	ccm *testcluster.Process
}

// startLBHarness stops the CCMs that would act on Services; call it before
// creating any Service, so that the last CCM it runs outlives them (a CCM
// must run to release a Service at the end of the test).
func startLBHarness(t *testing.T, env cloudEnv) *lbHarness {
	t.Helper()
	env.startLB(t)
	h := &lbHarness{t: t, env: env}
	t.Cleanup(func() {
		if h.ccm != nil {
			h.ccm.Stop()
		}
	})
	return h
}

// run starts a CCM (the one before must have been stopped or killed).
func (h *lbHarness) run(name string) *testcluster.Process {
	h.t.Helper()
	p, err := h.env.startLBCCM(name + "-" + h.env.name())
	if err != nil {
		h.t.Fatalf("start CCM %s: %v", name, err)
	}
	h.ccm = p
	return p
}

// lbSpec is lbServiceSpec for the kind.
func lbSpec(name, selector string, kind lbKind, port int32) *corev1.Service {
	spec := lbServiceSpec(name, selector, port)
	for k, v := range kind.annotations {
		spec.Annotations[k] = v
	}
	return spec
}

// oneServiceLB returns the Service's one load balancer.
func oneServiceLB(t *testing.T, env cloudEnv, svc *corev1.Service) lbView {
	t.Helper()
	lbs := env.serviceLBs(svc.UID)
	if len(lbs) != 1 {
		t.Fatalf("load balancers of Service %s = %+v, want exactly 1", svc.Name, lbs)
	}
	return lbs[0]
}

// waitLB waits until the load balancer satisfies cond.
func waitLB(t *testing.T, env cloudEnv, id, what string, d time.Duration, cond func(lbView) bool) lbView {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		lb, ok := env.lb(id)
		if ok && cond(lb) {
			return lb
		}
		if time.Now().After(deadline) {
			t.Fatalf("load balancer %s: %s: not within %s; last: %+v (live %v)", id, what, d, lb, ok)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// An existing load balancer is adopted: the Service gets its address and
// traffic through it, no load balancer is created, someone else's listener
// on it is never touched, and deleting the Service removes only what the
// CCM added (or, where the cloud makes it the Service's own, all of it).
func TestLBAdoptsExisting(t *testing.T) {
	forEachCloudLB(t, func(t *testing.T, env cloudEnv) {
		h := startLBHarness(t, env)
		const port = 8084
		sel := env.name() + "-adopt"
		n1 := env.lbNode(t, sel)
		spec := lbSpec("adopter", sel, env.lbKinds()[0], port)
		serve(t, n1.PrivateIP, nodePort(spec, port), 200, "node-1")
		svc := createService(t, spec) // no CCM yet: nothing is made for it
		existing, foreign := env.adoptableLB(t, svc)
		before := env.lbIDs()

		h.run("ccm-lb-adopt")
		vip := waitIngress(t, svc, 90*time.Second)
		if vip != existing.vip {
			t.Errorf("ingress %s, want the adopted load balancer's address %s", vip, existing.vip)
		}
		waitAnswers(t, fmt.Sprintf("http://%s:%d/", vip, port), 30*time.Second, "node-1")
		lb := waitLB(t, env, existing.id, "our listener with its node", 10*time.Second, func(lb lbView) bool {
			l, ok := lb.listenerOn(port)
			return ok && l.targets == 1
		})
		if !slices.Contains(lb.listeners, foreign) || len(lb.listeners) != 2 {
			t.Errorf("listeners = %+v, want ours on %d and the foreign %+v untouched", lb.listeners, port, foreign)
		}
		if added := newIDs(before, env.lbIDs()); len(added) != 0 {
			t.Errorf("load balancers made since the CCM ran: %v; want none", added)
		}

		if err := suite.cluster.Client.CoreV1().Services(svc.Namespace).Delete(context.Background(), svc.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitServiceGone(t, svc, 90*time.Second)
		after, live := env.lb(existing.id)
		switch {
		case env.adoptedLBKept() && !live:
			t.Errorf("the adopted load balancer %s was deleted with the Service", existing.id)
		case env.adoptedLBKept() && !slices.Equal(after.listeners, []lbListener{foreign}):
			t.Errorf("listeners after the Service was deleted = %+v, want only the foreign %+v", after.listeners, foreign)
		case !env.adoptedLBKept() && live:
			t.Errorf("the Service's own load balancer %s outlived it: %+v", existing.id, after)
		}
	})
}

// Drift (our listener deleted behind the CCM's back) is reported, with a
// Warning Event and an annotation on the Service, and repaired without any
// change to the Service's spec; on every kind of load balancer.
func TestLBDriftRepaired(t *testing.T) {
	forEachCloudLB(t, func(t *testing.T, env cloudEnv) {
		h := startLBHarness(t, env)
		h.run("ccm-lb-drift")
		// The kinds run in parallel, so every node is added first: a node
		// added (or removed) while another kind's listener is gone would
		// re-sync every Service and repair it before the drift check could.
		nodes := map[string]cloudsim.Instance{}
		for _, kind := range env.lbKinds() {
			nodes[kind.name] = env.lbNode(t, env.name()+"-drift-"+kind.name)
		}
		for _, kind := range env.lbKinds() {
			t.Run(kind.name, func(t *testing.T) {
				t.Parallel()
				const port = 8087
				sel := env.name() + "-drift-" + kind.name
				n1 := nodes[kind.name]
				spec := lbSpec("drift-"+kind.name, sel, kind, port)
				serve(t, n1.PrivateIP, nodePort(spec, port), 200, "node-1")
				svc := createService(t, spec)
				url := fmt.Sprintf("http://%s:%d/", waitIngress(t, svc, 90*time.Second), port)
				waitAnswers(t, url, 30*time.Second, "node-1")
				svc = getService(t, svc)
				lb := oneServiceLB(t, env, svc)
				// A sync still to come would repair the listener before
				// the drift check could find it missing.
				waitLBSettled(t, svc, 30*time.Second)

				env.deleteListener(t, lb, port)
				waitLB(t, env, lb.id, fmt.Sprintf("listener on %d back with its node", port), 60*time.Second, func(lb lbView) bool {
					l, ok := lb.listenerOn(port)
					return ok && l.targets == 1
				})
				waitAnswers(t, url, 30*time.Second, "node-1")
				what := fmt.Sprintf("listener TCP-%d missing", port)
				waitEvent(t, svc, "LoadBalancerDrift", []string{what}, 10*time.Second)
				after := getService(t, svc)
				if v := after.Annotations[string(annotations.DriftDetected)]; !strings.Contains(v, what) {
					t.Errorf("annotation %s = %q, want it to say %q", annotations.DriftDetected, v, what)
				}
				if !slices.Equal(after.Spec.Ports, svc.Spec.Ports) {
					t.Errorf("the Service's ports changed: %+v, were %+v", after.Spec.Ports, svc.Spec.Ports)
				}
			})
		}
	})
}

// A CCM killed (SIGKILL) as soon as the load balancer exists, and started
// again, ends with exactly one load balancer for the Service and none
// leaked; a CCM restarted with nothing changed then makes no write call,
// while it resyncs and through its first drift check.
func TestLBRestart(t *testing.T) {
	forEachCloudLB(t, func(t *testing.T, env cloudEnv) {
		h := startLBHarness(t, env)
		const port = 8085
		sel := env.name() + "-restart"
		n1 := env.lbNode(t, sel)
		first := h.run("ccm-lb-killed")
		if err := first.WaitForOutput(context.Background(), "Starting service controller"); err != nil {
			t.Fatal(err)
		}
		before := env.lbIDs()
		spec := lbSpec("restart", sel, env.lbKinds()[0], port)
		serve(t, n1.PrivateIP, nodePort(spec, port), 200, "node-1")
		svc := createService(t, spec)
		deadline := time.Now().Add(30 * time.Second)
		for len(env.serviceLBs(svc.UID)) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("no load balancer was created; events: %v", serviceEvents(t, svc, ""))
			}
			time.Sleep(2 * time.Millisecond)
		}
		first.Kill() // SIGKILL: no chance to finish anything

		h.run("ccm-lb-after-kill")
		vip := waitIngress(t, svc, 90*time.Second)
		url := fmt.Sprintf("http://%s:%d/", vip, port)
		waitAnswers(t, url, 30*time.Second, "node-1")
		svc = getService(t, svc)
		lb := oneServiceLB(t, env, svc)
		if lb.vip != vip {
			t.Errorf("ingress %s, the load balancer's address %s", vip, lb.vip)
		}
		if added := newIDs(before, env.lbIDs()); len(added) != 1 {
			t.Errorf("load balancers made since the Service was created: %v; want exactly one", added)
		}

		t.Run("restart writes nothing", func(t *testing.T) {
			h.ccm.Stop()
			suite.sim.ResetCalls()
			restarted := h.run("ccm-lb-restarted")
			deadline := time.Now().Add(30 * time.Second)
			for env.lbReads() == 0 {
				if time.Now().After(deadline) {
					t.Fatalf("the restarted CCM read no load balancer: the scenario proves nothing (%v)", suite.sim.Calls())
				}
				time.Sleep(100 * time.Millisecond)
			}
			// The first drift check runs one period (2 s) after this line;
			// it must find nothing to repair.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := restarted.WaitForOutput(ctx, "Starting load balancer drift check"); err != nil {
				t.Fatalf("the restarted CCM runs no drift check: %v", err)
			}
			time.Sleep(2500 * time.Millisecond)
			if w := env.lbWrites(); len(w) != 0 {
				t.Errorf("load balancer writes after a restart with nothing changed: %v", w)
			}
			if ing := getService(t, svc).Status.LoadBalancer.Ingress; len(ing) == 0 || ing[0].IP != vip {
				t.Errorf("ingress = %v, want %s kept", ing, vip)
			}
			if ev := serviceEvents(t, svc, "LoadBalancerDrift"); len(ev) != 0 {
				t.Errorf("drift reported on an unchanged load balancer: %v", ev)
			}
			waitAnswers(t, url, 10*time.Second, "node-1")
		})
	})
}

// A bad annotation on a working Service is a Warning Event naming it (and
// no secret); a node added meanwhile is refused the same way. The load
// balancer and its traffic stay as they were: no write call is made.
func TestLBBadAnnotation(t *testing.T) {
	forEachCloudLB(t, func(t *testing.T, env cloudEnv) {
		h := startLBHarness(t, env)
		h.run("ccm-lb-bad")
		const port = 8083
		sel := env.name() + "-bad-annotation"
		n1 := env.lbNode(t, sel)
		spec := lbSpec("bad", sel, env.lbKinds()[0], port)
		serve(t, n1.PrivateIP, nodePort(spec, port), 200, "node-1")
		svc := createService(t, spec)
		vip := waitIngress(t, svc, 90*time.Second)
		url := fmt.Sprintf("http://%s:%d/", vip, port)
		waitAnswers(t, url, 30*time.Second, "node-1")
		svc = getService(t, svc)
		before := oneServiceLB(t, env, svc)

		suite.sim.ResetCalls()
		p := startProber(url)
		change, want := env.badLBService()
		svc = updateService(t, svc, change)
		ev := waitEvent(t, svc, "SyncLoadBalancerFailed", want, 60*time.Second)
		if env.leaksSecret(ev) {
			t.Errorf("the event contains the cloud's secret: %s", ev)
		}
		env.lbNode(t, sel)
		waitEvent(t, svc, "UpdateLoadBalancerFailed", want[:1], 60*time.Second)
		p.finish(t, "with a bad annotation")

		if w := env.lbWrites(); len(w) != 0 {
			t.Errorf("load balancer writes after the bad annotation: %v", w)
		}
		after := env.serviceLBs(svc.UID)
		if len(after) != 1 || after[0].id != before.id || after[0].vip != before.vip || !slices.Equal(after[0].listeners, before.listeners) {
			t.Errorf("the load balancer changed: before %+v, after %+v", before, after)
		}
		if ing := getService(t, svc).Status.LoadBalancer.Ingress; len(ing) == 0 || ing[0].IP != vip {
			t.Errorf("ingress = %v, want %s kept", ing, vip)
		}
	})
}

// forEachCloudLB runs an LB scenario as a subtest per cloud. Unlike
// forEachCloud, it starts no CCM: the scenario's lbHarness does.
func forEachCloudLB(t *testing.T, scenario func(t *testing.T, env cloudEnv)) {
	for _, env := range clouds() {
		t.Run(env.name(), func(t *testing.T) { scenario(t, env) })
	}
}
