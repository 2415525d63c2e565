//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/deploy"
	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/internal/testcluster/kubeproxy"
	"github.com/ccmkit/ccm/internal/testcluster/traffic"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// TestUpgradeUnderTraffic upgrades the CCM the way its Deployment's rollout
// does, from the previous release (previousRelease, built from the
// repository's history) to this build, on both clouds, while nodes are
// replaced and a client load runs through every VIP:
//
//  1. two replicas of the previous release run with leader election and
//     give LoadBalancer Services their load balancers on 3 nodes;
//  2. an unchanged resync: nothing to write;
//  3. one node is replaced (as churn_test.go does) under the previous
//     release alone: what node churn costs in cloud writes, by action;
//  4. the rollout (maxUnavailable: 0): a replica of this build starts, is
//     ready (/healthz), and an old one stops (SIGTERM; the leader first);
//     then again. Two more nodes are replaced meanwhile;
//  5. counted: failed requests (0), load balancers per Service (exactly the
//     one the previous release made: same id, same address, same settings
//     but for the targets), load balancers left after the Services are
//     deleted (0), cloud writes during the rollout beyond what the two
//     replacements cost (0), and each leader handover.
//
// A change that makes this build rewrite what the previous release made
// (names, tags, defaults: docs/operations.md, "Upgrades rewrite nothing")
// fails step 5 and names the writes and the settings that changed.
func TestUpgradeUnderTraffic(t *testing.T) {
	old := previousCCM(t) // first: cold, the build takes minutes
	for _, c := range []upgradeCloud{tencentUpgrade(), ociUpgrade()} {
		t.Run(c.name, func(t *testing.T) { upgradeScenario(t, c, old) })
	}
}

// deliberateRewrites excuses, per cloud, a rewrite of what the previous
// release made that this release makes on purpose (docs/operations.md,
// "Upgrades rewrite nothing"): the value is the release note that
// announces it. The extra writes and the changed settings are then logged
// instead of failing; failed requests, duplicates and leaks still fail.
// Empty it when previousRelease moves past the release that made it.
var deliberateRewrites = map[string]string{}

// upgradeQuiet is how long an unchanged resync is watched for writes:
// longer than the route reconciliation period (4 s) and two drift checks
// (2 s), so that each controller had a pass over what exists.
const upgradeQuiet = 6 * time.Second

// upgradeCloud is what the scenario needs from a cloud.
type upgradeCloud struct {
	name string
	// prepare readies the cloud, stops the CCMs that would act, and
	// returns the principals of the four processes (old, old, new, new):
	// each process calls the cloud as its own principal, so that its calls
	// are told apart (the rollout reuses the same config otherwise).
	prepare func(t *testing.T) []string
	// start runs a CCM of binary as principal, with leader election.
	start func(binary, name, principal string) (*testcluster.Process, error)
	// services are the LoadBalancer Services, selecting nodes labeled sel.
	services func(sel string) []*corev1.Service
	// instance adds a running instance at ip; node is its Node as the CCM
	// leaves it once initialized, labeled for sel.
	instance func(t *testing.T, name, ip string) cloudsim.Instance
	node     func(in cloudsim.Instance, sel string) *corev1.Node
	// terminate ends an instance whose Node was deleted.
	terminate func(in cloudsim.Instance) error
	// lbs are the Service's live load balancers (by the mark the CCM puts
	// on them), each as its id, address and settings without its targets.
	lbs func(uid types.UID) []upgradeLB
	// lbIDs are the ids of the cloud's live load balancers.
	lbIDs func() []string
	// dataPlane is a load balancer's data plane.
	dataPlane func(id string) (cloudsim.DataPlaneStatus, error)
	// converged, if set, says what of the rest of the cloud's state for
	// the current nodes (and none for the gone) is not there yet, or "":
	// Tencent's routes.
	converged func(current, gone []upgradeNode) string
}

// upgradeLB is a load balancer as the upgrade compares it.
type upgradeLB struct {
	id, vip string
	// settings: everything but the targets and the transient state, as
	// JSON; the upgrade must leave it as the previous release made it.
	settings string
}

// upgradeNode is a node of the scenario: its instance, its Node (once
// registered), and its servers on every NodePort.
type upgradeNode struct {
	in   cloudsim.Instance
	node *corev1.Node
	stop func()
}

func (n upgradeNode) ip() string { return n.in.PrivateIP }

func upgradeScenario(t *testing.T, c upgradeCloud, oldBinary string) {
	principals := c.prepare(t)
	logCallsOf(principals...)
	scenarioFrom := time.Now()
	// The load balancers of earlier tests in this process stay out of the
	// count: by id, since one may still be going away (a deferred delete).
	lbsBefore := c.lbIDs()
	sel := "upgrade-" + c.name
	specs := c.services(sel)
	var nps []int32
	for _, s := range specs {
		for _, p := range s.Spec.Ports {
			nps = append(nps, p.NodePort)
		}
	}
	// Three nodes, and their three replacements: one under the previous
	// release alone, two during the rollout. Instances and servers are
	// made first (a server listening before its node joins, as a node's
	// kube-proxy does), so that the churn itself only registers and
	// deletes Nodes.
	var nodes []upgradeNode
	for i := range 6 {
		ip := nextIP()
		var stops []func()
		for _, np := range nps {
			stops = append(stops, serveStoppable(t, ip, np, fmt.Sprintf("node-%d", i+1)))
		}
		in := c.instance(t, fmt.Sprintf("%s-%d", sel, i+1), ip)
		nodes = append(nodes, upgradeNode{in: in, node: c.node(in, sel), stop: func() {
			for _, s := range stops {
				s()
			}
		}})
		t.Cleanup(func() {
			_ = suite.cluster.Client.CoreV1().Nodes().Delete(context.Background(), ip, metav1.DeleteOptions{})
		})
	}

	// The previous release's two replicas. Processes stop in cleanups
	// registered before the Services', so that a CCM releases them.
	procs := map[string]*testcluster.Process{}
	running := func() map[string]*testcluster.Process {
		out := map[string]*testcluster.Process{}
		for name, p := range procs {
			if exited, _ := p.Exited(); !exited {
				out[name] = p
			}
		}
		return out
	}
	// One cleanup for every process, registered before the Services' (it
	// runs after them): a CCM must run to release a Service.
	t.Cleanup(func() {
		for _, p := range procs {
			p.Stop()
		}
	})
	start := func(binary, name, principal string) *testcluster.Process {
		p, err := c.start(binary, name, principal)
		if err != nil {
			t.Fatal(err)
		}
		procs[name] = p
		return p
	}
	start(oldBinary, "ccm-upgrade-old-a-"+c.name, principals[0])
	start(oldBinary, "ccm-upgrade-old-b-"+c.name, principals[1])
	if _, err := leaderOf(running(), 30*time.Second); err != nil {
		t.Fatal(err)
	}

	for _, n := range nodes[:3] {
		if err := registerUpgradeNode(n); err != nil {
			t.Fatal(err)
		}
	}
	var svcs []*corev1.Service
	var addrs []string
	for _, spec := range specs {
		svc := createService(t, spec)
		vip := waitIngress(t, svc, 90*time.Second)
		svcs = append(svcs, getService(t, svc))
		for _, p := range spec.Spec.Ports {
			addr := fmt.Sprintf("%s:%d", vip, p.Port)
			addrs = append(addrs, addr)
			waitAnswers(t, "http://"+addr+"/", 60*time.Second, "node-1", "node-2", "node-3")
		}
	}
	u := &upgradeRun{t: t, c: c, svcs: svcs}
	u.waitConverged(nodes[:3], nil)
	made := u.snapshot()

	// An unchanged resync under the previous release writes nothing.
	quietFrom := time.Now()
	time.Sleep(upgradeQuiet)
	if w := writesOf(principals, quietFrom); len(w.ok)+len(w.failed) != 0 {
		t.Errorf("the previous release wrote during an unchanged resync: %s", w)
	}

	load := traffic.Start(traffic.Options{Addrs: addrs})
	stopLoad := sync.OnceValue(load.Stop)
	t.Cleanup(func() { stopLoad() })

	// What one node's replacement costs, under the previous release alone.
	churnFrom := time.Now()
	if err := u.replace(nodes[0], nodes[3]); err != nil {
		t.Fatal(err)
	}
	u.waitConverged(nodes[1:4], nodes[:1])
	time.Sleep(upgradeQuiet)
	perReplacement := writesOf(principals, churnFrom)
	t.Logf("one node replaced under the previous release: %s", perReplacement)

	// The rollout, while two more nodes are replaced.
	rolloutFrom := time.Now()
	churned := make(chan error, 1)
	go func() {
		for i := 1; i <= 2; i++ {
			if err := u.replace(nodes[i], nodes[3+i]); err != nil {
				churned <- err
				return
			}
		}
		churned <- nil
	}()
	var handovers []time.Duration
	for i, name := range []string{"ccm-upgrade-new-a-" + c.name, "ccm-upgrade-new-b-" + c.name} {
		p := start(suite.ccmBinary, name, principals[2+i])
		if err := waitHealthy(p, 60*time.Second); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, tail(p.Output(), 20))
		}
		// Stop an old replica, the leader if one leads (the worst case:
		// a handover at each step).
		leader, err := leaderOf(running(), leaseDuration+20*time.Second)
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		victim := leader
		if !strings.Contains(leader, "-old-") {
			for name := range running() {
				if strings.Contains(name, "-old-") {
					victim = name
				}
			}
		}
		stopped := time.Now()
		procs[victim].Stop()
		if victim != leader {
			t.Logf("step %d: %s started; %s (a follower) stopped; %s leads", i+1, name, victim, leader)
			continue
		}
		next, err := leaderOf(running(), leaseDuration+20*time.Second)
		if err != nil {
			t.Fatalf("step %d: no replica took over from %s: %v", i+1, victim, err)
		}
		handovers = append(handovers, time.Since(stopped))
		t.Logf("step %d: %s started; %s (the leader) stopped; %s took over %s later", i+1, name, victim, next,
			handovers[len(handovers)-1].Round(100*time.Millisecond))
	}
	if err := <-churned; err != nil {
		t.Fatalf("node churn during the rollout: %v", err)
	}
	u.waitConverged(nodes[3:], nodes[:3])
	time.Sleep(upgradeQuiet)
	during := writesOf(principals, rolloutFrom)
	counts := stopLoad()
	for _, n := range nodes[:3] {
		n.stop()
	}

	// The counts.
	extra := during.beyond(perReplacement, 2)
	t.Logf("%s upgrade from %s: %s; leader handovers %v; writes during the rollout %s, 2 replacements cost %v; extra %v",
		c.name, previousRelease[:7], counts, roundAll(handovers), during, perReplacement.times(2), extra)
	if counts.RequestsFailed != 0 {
		t.Errorf("requests failed during the upgrade: %s", counts)
	}
	if counts.Requests < 100 {
		t.Errorf("only %d requests: the load did not run", counts.Requests)
	}
	rewrite := func(format string, args ...any) {
		if why := deliberateRewrites[c.name]; why != "" {
			t.Logf("deliberate (%s): "+format, append([]any{why}, args...)...)
		} else {
			t.Errorf(format, args...)
		}
	}
	if more := positive(extra); len(more) != 0 {
		rewrite("this build wrote beyond what the node churn costs (action: extra calls): %v", more)
	}
	t.Logf("%s: every cloud error the four processes got (action code: calls): %v", c.name, errorsOf(principals, scenarioFrom))
	if refused := refusalsOf(principals, scenarioFrom); len(refused) != 0 {
		t.Errorf("calls refused as not authorized under the shipped policy (principal action: calls): %v", refused)
	}
	for _, d := range handovers {
		// A stopped leader does not release the lease (the upstream
		// cloud-provider app does not set ReleaseOnCancel): a follower
		// takes it a lease duration after it last saw it renewed. It
		// polls every retry period with client-go's jitter (1.2: up to
		// 2.2 periods apart), so it sees the last renewal up to 2.2
		// periods late and the expiry up to 2.2 periods late: 5 in all.
		if d > leaseDuration+5*retryPeriod {
			t.Errorf("a leader handover took %s, more than the lease duration %s (+5 retry periods)", d, leaseDuration)
		}
	}
	now := u.snapshot()
	for uid, lb := range made {
		if got := now[uid]; got.id != lb.id || got.vip != lb.vip {
			t.Errorf("Service %s: load balancer %s (%s) after the upgrade, want the previous release's %s (%s)", uid, got.id, got.vip, lb.id, lb.vip)
		} else if got.settings != lb.settings {
			rewrite("Service %s: this build changed the settings of load balancer %s:\nbefore: %s\nafter:  %s", uid, lb.id, lb.settings, got.settings)
		}
	}
	if added := newIDs(lbsBefore, c.lbIDs()); len(added) != len(svcs) {
		t.Errorf("%d load balancers made since the test began (%v), want %d (one per Service)", len(added), added, len(svcs))
	}

	// The Services go: this build deletes what the previous release made.
	for _, svc := range svcs {
		if err := suite.cluster.Client.CoreV1().Services(svc.Namespace).Delete(context.Background(), svc.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	for _, svc := range svcs {
		waitServiceGone(t, svc, 60*time.Second)
		if lbs := c.lbs(svc.UID); len(lbs) != 0 {
			t.Errorf("Service %s deleted, its load balancers left: %v", svc.Name, lbs)
		}
	}
	if added := newIDs(lbsBefore, c.lbIDs()); len(added) != 0 {
		t.Errorf("%d load balancers leaked: %v", len(added), added)
	}
}

// newIDs are the ids in now that are not in before.
func newIDs(before, now []string) []string {
	var out []string
	for _, id := range now {
		if !slices.Contains(before, id) {
			out = append(out, id)
		}
	}
	return out
}

// upgradeRun is one cloud's scenario under way.
type upgradeRun struct {
	t    *testing.T
	c    upgradeCloud
	svcs []*corev1.Service
}

// snapshot is each Service's one load balancer (the test fails unless
// there is exactly one).
func (u *upgradeRun) snapshot() map[types.UID]upgradeLB {
	u.t.Helper()
	out := map[types.UID]upgradeLB{}
	for _, svc := range u.svcs {
		lbs := u.c.lbs(svc.UID)
		if len(lbs) != 1 {
			u.t.Fatalf("Service %s has %d load balancers, want 1: %v", svc.Name, len(lbs), lbs)
		}
		out[svc.UID] = lbs[0]
	}
	return out
}

// everyListener reports whether ok holds for the targets (node IP -> in
// service) of every listener of every Service's load balancer.
func (u *upgradeRun) everyListener(ok func(targets map[string]bool) bool) bool {
	return u.listenerState(ok) == ""
}

// listenerState is "" when ok holds for every listener, else the first
// listener's state where it does not.
func (u *upgradeRun) listenerState(ok func(targets map[string]bool) bool) string {
	for _, svc := range u.svcs {
		lbs := u.c.lbs(svc.UID)
		if len(lbs) != 1 {
			return fmt.Sprintf("Service %s has %d load balancers", svc.Name, len(lbs))
		}
		st, err := u.c.dataPlane(lbs[0].id)
		if err != nil || len(st.Listeners) == 0 {
			return fmt.Sprintf("load balancer %s: no listener in the data plane (%v)", lbs[0].id, err)
		}
		for _, l := range st.Listeners {
			targets := map[string]bool{} // ip -> in service
			for _, tg := range l.Targets {
				ip, _, _ := strings.Cut(tg.Address, ":")
				targets[ip] = tg.InService
			}
			if !ok(targets) {
				return fmt.Sprintf("load balancer %s listener %d: targets (in service) %v", lbs[0].id, l.Port, targets)
			}
		}
	}
	return ""
}

// waitConverged waits until every listener has exactly the current nodes,
// each in service, and the cloud's other state follows (routes).
func (u *upgradeRun) waitConverged(current, gone []upgradeNode) {
	u.t.Helper()
	var want []string
	for _, n := range current {
		want = append(want, n.ip())
	}
	last := ""
	cond := func() bool {
		last = u.listenerState(func(targets map[string]bool) bool {
			if len(targets) != len(current) {
				return false
			}
			for _, n := range current {
				if !targets[n.ip()] {
					return false
				}
			}
			return true
		})
		if last == "" && u.c.converged != nil {
			last = u.c.converged(current, gone)
		}
		return last == ""
	}
	if err := until(fmt.Sprintf("every load balancer on the nodes %v", want), 90*time.Second, cond); err != nil {
		u.t.Fatalf("%v; last: %s", err, last)
	}
}

// replace replaces old with repl the way the cluster autoscaler does, on
// every load balancer at once: repl joins and takes traffic, old is
// tainted ToBeDeletedByClusterAutoscaler and leaves service, its instance
// is terminated and its Node deleted (drained, deregistered), then its
// servers stop. (churn_test.go deletes the Node before the instance; here
// the autoscaler's order lets a new leader find the route of a node
// deleted during a handover orphaned: routeops/orphans.go.)
// It runs beside the rollout, so it returns errors instead of failing.
func (u *upgradeRun) replace(old, repl upgradeNode) error {
	if err := registerUpgradeNode(repl); err != nil {
		return err
	}
	in := func(ip string) func() bool {
		return func() bool {
			return u.everyListener(func(tg map[string]bool) bool { return tg[ip] })
		}
	}
	if err := until(repl.ip()+" in service", 90*time.Second, in(repl.ip())); err != nil {
		return err
	}
	if err := setTaintErr(old.ip()); err != nil {
		return err
	}
	if err := until(old.ip()+" out of service after the taint", 60*time.Second, func() bool {
		return u.everyListener(func(tg map[string]bool) bool { return !tg[old.ip()] })
	}); err != nil {
		return err
	}
	// The autoscaler terminates the instance, and the Node goes (the CCM
	// drains and deregisters its target); then its servers stop.
	if err := u.c.terminate(old.in); err != nil {
		return err
	}
	if err := suite.cluster.Client.CoreV1().Nodes().Delete(context.Background(), old.ip(), metav1.DeleteOptions{}); err != nil {
		return err
	}
	if err := until(old.ip()+" deregistered", 90*time.Second, func() bool {
		return u.everyListener(func(tg map[string]bool) bool { _, present := tg[old.ip()]; return !present })
	}); err != nil {
		return err
	}
	old.stop()
	return nil
}

func registerUpgradeNode(n upgradeNode) error {
	_, err := suite.cluster.Client.CoreV1().Nodes().Create(context.Background(), n.node, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("register node %s: %w", n.node.Name, err)
	}
	return nil
}

// setTaintErr is setTaint (the autoscaler's deletion taint) returning its
// error.
func setTaintErr(name string) error {
	var err error
	for range 5 {
		var n *corev1.Node
		if n, err = suite.cluster.Client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			return err
		}
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: kubeproxy.TaintToBeDeleted, Value: fmt.Sprint(time.Now().Unix()), Effect: corev1.TaintEffectNoSchedule})
		if _, err = suite.cluster.Client.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err == nil {
			return nil
		}
	}
	return fmt.Errorf("taint node %s: %w", name, err)
}

// until polls cond every 100 ms for up to d.
func until(what string, d time.Duration, cond func() bool) error {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %s", what, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// leaderOf returns the name of the process that leads: the one running
// process that logged acquiring the lease (a leader that loses it exits).
// It waits up to d for one.
func leaderOf(procs map[string]*testcluster.Process, d time.Duration) (string, error) {
	deadline := time.Now().Add(d)
	for {
		var leaders []string
		for name, p := range procs {
			if exited, _ := p.Exited(); !exited && strings.Contains(p.Output(), acquiredLease) {
				leaders = append(leaders, name)
			}
		}
		switch {
		case len(leaders) > 1:
			return "", fmt.Errorf("more than one leader: %v", leaders)
		case len(leaders) == 1:
			return leaders[0], nil
		case time.Now().After(deadline):
			return "", fmt.Errorf("no process acquired the lease within %s", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitHealthy waits until the CCM's /healthz answers 200: what the
// Deployment's probe sees before the rollout goes on.
func waitHealthy(p *testcluster.Process, d time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the CCM's self-signed serving cert
	}}
	url := fmt.Sprintf("https://127.0.0.1:%d/healthz", p.SecurePort)
	exited := false
	err := until("GET "+url+" answers 200", d, func() bool {
		if exited, _ = p.Exited(); exited {
			return true
		}
		resp, err := client.Get(url)
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	if exited {
		return fmt.Errorf("exited before /healthz answered")
	}
	return err
}

// cloudWrites are the write calls of some principals, by action: those
// that succeeded, and those the cloud refused.
type cloudWrites struct{ ok, failed map[string]int }

func writesOf(principals []string, since time.Time) cloudWrites {
	w := cloudWrites{ok: map[string]int{}, failed: map[string]int{}}
	for _, c := range callsOf(principals, since) {
		if !isCloudWrite(c.Action) {
			continue
		}
		if c.Code == "OK" {
			w.ok[c.Action]++
		} else {
			w.failed[c.Action+" "+c.Code]++
		}
	}
	return w
}

func (w cloudWrites) String() string {
	s := fmt.Sprint(w.ok)
	if len(w.failed) > 0 {
		s += fmt.Sprintf(" (refused: %v)", w.failed)
	}
	return s
}

func (w cloudWrites) times(n int) map[string]int {
	out := map[string]int{}
	for a, c := range w.ok {
		out[a] = n * c
	}
	return out
}

// beyond is every action whose successful writes differ from n times
// base's, with the difference.
func (w cloudWrites) beyond(base cloudWrites, n int) map[string]int {
	want := base.times(n)
	out := map[string]int{}
	for a := range w.ok {
		if d := w.ok[a] - want[a]; d != 0 {
			out[a] = d
		}
	}
	for a := range want {
		if _, seen := w.ok[a]; !seen {
			out[a] = -want[a]
		}
	}
	return out
}

// positive is the actions of d with more calls than expected.
func positive(d map[string]int) map[string]int {
	out := map[string]int{}
	for a, n := range d {
		if n > 0 {
			out[a] = n
		}
	}
	return out
}

// errorsOf counts the calls of the principals since then that the cloud
// answered with an error, by action and code.
func errorsOf(principals []string, since time.Time) map[string]int {
	out := map[string]int{}
	for _, c := range callsOf(principals, since) {
		if c.Code != "OK" {
			out[c.Action+" "+c.Code]++
		}
	}
	return out
}

// refusalsOf counts the calls of the principals since then that the cloud
// refused as not authorized: Tencent's AuthFailure.UnauthorizedOperation
// (an action the shipped CAM policy does not grant). OCI answers an
// ungranted call as it answers a missing resource (404
// NotAuthorizedOrNotFound), which a CCM meets normally while a load
// balancer is deleted, so only its List calls (which never answer 404 for
// something missing) are counted.
func refusalsOf(principals []string, since time.Time) map[string]int {
	out := map[string]int{}
	for _, c := range callsOf(principals, since) {
		op := strings.TrimPrefix(strings.TrimPrefix(c.Action, simoci.ActionPrefix), "nlb:")
		if c.Code == tencentRefusal || (c.Code == simoci.CodeNotAuthorizedOrNotFound && strings.HasPrefix(op, "List")) {
			out[c.Principal+" "+c.Action]++
		}
	}
	return out
}

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(100 * time.Millisecond)
	}
	return out
}

// upgradeArgs: leader election as the suite's HA scenarios run it.
var upgradeArgs = []string{
	"--leader-elect=true",
	"--leader-elect-lease-duration=" + leaseDuration.String(),
	"--leader-elect-renew-deadline=5s",
	"--leader-elect-retry-period=" + retryPeriod.String(),
}

// upgradeSpecs are the scenario's Services, their health checks quick to
// notice a node going (churnServiceSpec), with annotations added.
func upgradeSpecs(sel string, ports []int32, extra ...map[string]string) []*corev1.Service {
	var out []*corev1.Service
	for i, port := range ports {
		spec := churnServiceSpec(sel, sel, port)
		if i < len(extra) {
			maps.Copy(spec.Annotations, extra[i])
		}
		out = append(out, spec)
	}
	return out
}

// settingsJSON is v as JSON (for comparison and for the failure message).
func settingsJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// Tencent Cloud: CLBs and the TKE route table, the CCM running every
// controller as its Deployment does.
func tencentUpgrade() upgradeCloud {
	podCIDRs := map[string]string{} // node IP -> pod CIDR
	return upgradeCloud{
		name: "tencentcloud",
		prepare: func(t *testing.T) []string {
			pauseMainCCM(t)
			return upgradeSecretIDs
		},
		start: func(binary, name, principal string) (*testcluster.Process, error) {
			path := writeRoutesCloudConfigAs(suite.dir, name+".yaml", principal)
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return nil, err
			}
			_, err = f.WriteString("lb_drift_check_period: 2s\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, err
			}
			p, _, err := testcluster.CCM{Binary: binary, Provider: "tencentcloud", CloudConfig: path, Kubeconfig: suite.kubeconfig,
				Dir: suite.dir, Name: name, ExtraArgs: append(slices.Clone(upgradeArgs), routeArgs()...)}.Start()
			return p, err
		},
		services: func(sel string) []*corev1.Service { return upgradeSpecs(sel, []int32{8110, 8111}) },
		instance: func(t *testing.T, name, ip string) cloudsim.Instance {
			t.Helper()
			added, err := suite.sim.AddInstances(cloudsim.Instance{
				ID: fmt.Sprintf("ins-e2e%05d", idSeq.Add(1)), Name: name, Type: "S5.MEDIUM4", Zone: zone,
				PrivateIP: ip, VpcID: vpcID, SubnetID: "subnet-e2e00001", State: "RUNNING",
			})
			if err != nil {
				t.Fatal(err)
			}
			podCIDRs[ip] = nextPodCIDR()
			return added[0]
		},
		node: func(in cloudsim.Instance, sel string) *corev1.Node {
			n := initializedNode(in, sel, fmt.Sprintf("tencentcloud:///%s/%s", zone, in.ID))
			n.Spec.PodCIDR, n.Spec.PodCIDRs = podCIDRs[in.PrivateIP], []string{podCIDRs[in.PrivateIP]}
			return n
		},
		terminate: func(in cloudsim.Instance) error { return suite.sim.SetInstanceState(in.ID, "TERMINATING") },
		lbs: func(uid types.UID) []upgradeLB {
			var out []upgradeLB
			for _, lb := range clbsOf(uid) {
				out = append(out, upgradeLB{id: lb.ID, vip: lb.VIP, settings: clbSettings(lb)})
			}
			return out
		},
		lbIDs:     clbIDs,
		dataPlane: suite.sim.Tencent().CLB().DataPlane,
		converged: func(current, gone []upgradeNode) string {
			rt, err := suite.sim.Tencent().TKE().RouteTable(routeTable)
			if err != nil {
				return err.Error()
			}
			for _, n := range current {
				if r := route(podCIDRs[n.ip()], n.ip()); !hasRoute(rt.Routes, r) {
					return fmt.Sprintf("no route %v; routes %v", r, rt.Routes)
				}
			}
			for _, n := range gone {
				if r := route(podCIDRs[n.ip()], n.ip()); hasRoute(rt.Routes, r) {
					return fmt.Sprintf("the route %v of a node gone is left; routes %v", r, rt.Routes)
				}
			}
			return ""
		},
	}
}

// clbSettings is a CLB without its targets and transient state.
func clbSettings(lb tencent.CLBLoadBalancer) string {
	lb.Status, lb.InOperation = 0, ""
	lb.Listeners = slices.Clone(lb.Listeners)
	for i := range lb.Listeners {
		lb.Listeners[i].Targets = nil
		lb.Listeners[i].Rules = slices.Clone(lb.Listeners[i].Rules)
		for j := range lb.Listeners[i].Rules {
			lb.Listeners[i].Rules[j].Targets = nil
		}
	}
	return settingsJSON(lb)
}

// initializedNode is a Node as the CCM leaves it once initialized
// (providerID, InternalIP, Ready), labeled for the selector.
func initializedNode(in cloudsim.Instance, sel, providerID string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: in.PrivateIP, Labels: map[string]string{
			corev1.LabelHostname: in.PrivateIP, lbNodeLabel: sel,
		}},
		Spec: corev1.NodeSpec{ProviderID: providerID},
		Status: corev1.NodeStatus{
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: in.PrivateIP}},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
		},
	}
}

// OCI: a Load Balancer and a Network Load Balancer, each process its own
// user in a group under the shipped policy.
func ociUpgrade() upgradeCloud {
	const group = "ccm-e2e-upgrade"
	users := []string{"ocid1.user.oc1..aaaaaaaae2eupgradeolda", "ocid1.user.oc1..aaaaaaaae2eupgradeoldb",
		"ocid1.user.oc1..aaaaaaaae2eupgradenewa", "ocid1.user.oc1..aaaaaaaae2eupgradenewb"}
	configs := map[string]string{} // principal -> its config
	return upgradeCloud{
		name: "oci",
		prepare: func(t *testing.T) []string {
			e := theOCIEnv
			e.prepare(t)
			pauseMainCCM(t)
			e.pause(t)
			var principals []string
			for _, user := range users {
				principal := ociTenancy + "/" + user + "/" + e.fingerprint
				if _, err := suite.sim.OCI().AddKey(principal, publicPEM(e.key)); err != nil {
					t.Fatal(err)
				}
				configs[principal] = e.ociConfig(user, e.keyPEM, e.fingerprint, "lbDriftCheckPeriod: 2s\n")
				principals = append(principals, principal)
			}
			if err := suite.sim.OCI().SeedIAM(simoci.IAMSeed{Groups: map[string][]string{group: users},
				Policies: map[string][]string{group: policyLines(deploy.OCIPolicyFor("group", group, ociCompartmentName))}}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = suite.sim.OCI().RemoveIAM("groups", group)
				_ = suite.sim.OCI().RemoveIAM("policies", group)
			})
			return principals
		},
		start: func(binary, name, principal string) (*testcluster.Process, error) {
			path := filepath.Join(suite.dir, name+".yaml")
			if err := os.WriteFile(path, []byte(configs[principal]), 0o600); err != nil {
				return nil, err
			}
			p, _, err := testcluster.CCM{Binary: binary, Provider: "oci", CloudConfig: path, Kubeconfig: suite.kubeconfig,
				Dir: suite.dir, Name: name, ExtraArgs: upgradeArgs}.Start()
			return p, err
		},
		services: func(sel string) []*corev1.Service {
			kind := func(k string) map[string]string {
				// The OCI health check annotations, in milliseconds, win
				// over the neutral ones.
				return map[string]string{annotations.OCILoadBalancerType.String(): k,
					annotations.OCILBHealthCheckInterval.String(): "1000", annotations.OCILBHealthCheckTimeout.String(): "500",
					annotations.OCILBHealthCheckRetries.String(): "2"}
			}
			return upgradeSpecs(sel, []int32{8112, 8113}, kind("lb"), kind("nlb"))
		},
		instance: func(t *testing.T, name, ip string) cloudsim.Instance {
			t.Helper()
			in := theOCIEnv.newInstanceWith(t, name, func(in *cloudsim.Instance) { in.PrivateIP = ip })
			t.Cleanup(func() { _ = suite.sim.SetInstanceState(in.ID, "TERMINATED") })
			return in
		},
		node: func(in cloudsim.Instance, sel string) *corev1.Node {
			return initializedNode(in, sel, "oci://"+in.OCID)
		},
		terminate: func(in cloudsim.Instance) error { return suite.sim.SetInstanceState(in.ID, "TERMINATED") },
		lbs: func(uid types.UID) []upgradeLB {
			var out []upgradeLB
			for _, lb := range ociLBsOf(uid) {
				out = append(out, upgradeLB{id: lb.ID, vip: lb.IPAddress, settings: ociLBSettings(lb)})
			}
			return out
		},
		lbIDs:     ociLiveLBIDs,
		dataPlane: suite.sim.OCI().DataPlane,
	}
}

// ociLBSettings is an OCI load balancer without its backends and
// transient state.
func ociLBSettings(lb simoci.LoadBalancer) string {
	lb.LifecycleState, lb.Busy = "", ""
	lb.BackendSets = slices.Clone(lb.BackendSets)
	for i := range lb.BackendSets {
		lb.BackendSets[i].Backends = nil
	}
	return settingsJSON(lb)
}
