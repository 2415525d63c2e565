//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

const (
	leaseDuration = 8 * time.Second
	retryPeriod   = time.Second
	acquiredLease = `"Successfully acquired lease" lock="kube-system/cloud-controller-manager"`
)

// Two CCM processes with leader election: only the leader calls the cloud,
// and when the leader is SIGKILLed the other takes over within the lease
// duration and finishes the work that was in flight.
func TestLeaderElectionFailover(t *testing.T) {
	pauseMainCCM(t)
	leArgs := []string{
		"--leader-elect=true",
		"--leader-elect-lease-duration=" + leaseDuration.String(),
		"--leader-elect-renew-deadline=5s",
		"--leader-elect-retry-period=" + retryPeriod.String(),
	}
	// Other tests run replicas as the same principals (churn_test.go, the
	// fault campaign's failover round): count only this test's calls.
	before := map[string]int{}
	for _, id := range haSecretIDs {
		before[id] = callsBy(id)
	}
	procs := map[string]*testcluster.Process{}
	for i, id := range haSecretIDs {
		name := []string{"ccm-ha-a", "ccm-ha-b"}[i]
		p, err := startCCM(name, writeCloudConfig(suite.dir, name+".yaml", id, secretKey), leArgs...)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Stop()
		procs[id] = p
	}

	leader, follower := waitForLeader(t, procs, 30*time.Second)
	t.Logf("leader is %s", leader)

	// The leader initializes a node; the follower makes no cloud call.
	in := newInstance(t, "ha-1")
	registerNode(t, testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP})
	waitNode(t, in.PrivateIP, 30*time.Second, "initialized by the leader", initialized)
	if n := callsBy(follower) - before[follower]; n != 0 {
		t.Errorf("the follower made %d cloud calls; only the leader may act (%s)", n, principalSummary())
	}
	if callsBy(leader) == before[leader] {
		t.Errorf("the leader made no cloud call (%s)", principalSummary())
	}

	// Kill the leader with work in flight: a node registered at once.
	procs[leader].Kill()
	killed := time.Now()
	in2 := newInstance(t, "ha-2")
	registerNode(t, testcluster.NodeSpec{Name: in2.PrivateIP, InternalIP: in2.PrivateIP})

	ctx, cancel := context.WithTimeout(context.Background(), leaseDuration+15*time.Second)
	defer cancel()
	if err := procs[follower].WaitForOutput(ctx, acquiredLease); err != nil {
		t.Fatalf("the follower did not take over: %v\n%s", err, tail(procs[follower].Output(), 20))
	}
	handover := time.Since(killed)
	t.Logf("handover took %s (lease duration %s)", handover.Round(100*time.Millisecond), leaseDuration)
	// The lease expires leaseDuration after the leader's last renewal; the
	// follower notices within a retry period. Allow one more for a busy machine.
	if handover > leaseDuration+3*retryPeriod {
		t.Errorf("handover took %s, more than the lease duration %s (+3 retry periods)", handover, leaseDuration)
	}
	n := waitNode(t, in2.PrivateIP, 30*time.Second, "initialized by the new leader", initialized)
	if !strings.HasSuffix(n.Spec.ProviderID, "/"+in2.ID) {
		t.Errorf("providerID = %q, want instance %s", n.Spec.ProviderID, in2.ID)
	}
}

// Routes under failover: two CCMs with leader election program the pod
// routes of 60 nodes, and the leader is SIGKILLed while it creates them.
// The new leader finishes, and every route is created exactly once: one
// successful CreateClusterRoute per route, no refused duplicate, nothing
// deleted and created again.
func TestRoutesUnderFailover(t *testing.T) {
	pauseMainCCM(t)
	const nodes = 60
	want := map[tencent.ClusterRoute]bool{}
	for i := range nodes {
		in := newInstance(t, fmt.Sprintf("ha-route-%d", i))
		cidr := nextPodCIDR()
		routeNode(t, in, cidr)
		want[route(cidr, in.PrivateIP)] = true
	}
	t.Cleanup(func() {
		for r := range want {
			_ = suite.sim.Tencent().TKE().DeleteRoute(routeTable, r)
		}
	})
	ours := func() int {
		n := 0
		for _, r := range tableRoutes(t) {
			if want[r] {
				n++
			}
		}
		return n
	}
	before := suite.sim.Calls()

	args := append([]string{
		"--leader-elect=true",
		"--leader-elect-lease-duration=" + leaseDuration.String(),
		"--leader-elect-renew-deadline=5s",
		"--leader-elect-retry-period=" + retryPeriod.String(),
	}, routeArgs()...)
	procs := map[string]*testcluster.Process{}
	for i, id := range haSecretIDs {
		name := []string{"ccm-ha-routes-a", "ccm-ha-routes-b"}[i]
		p, err := startCCM(name, writeRoutesCloudConfigAs(suite.dir, name+".yaml", id), args...)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Stop()
		procs[id] = p
	}
	leader, follower := waitForLeader(t, procs, 30*time.Second)

	// Kill the leader once it has created some of the routes, not all.
	deadline := time.Now().Add(routeWait)
	for n := ours(); n < 5; n = ours() {
		if time.Now().After(deadline) {
			t.Fatalf("the leader created %d routes within %s", n, routeWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
	procs[leader].Kill()
	atKill := ours()
	t.Logf("leader %s killed with %d of %d routes created", leader, atKill, nodes)
	if atKill == nodes {
		t.Logf("the leader finished before it was killed; the follower has nothing left to create")
	}

	waitRoutes(t, "every route, by the new leader", func([]tencent.ClusterRoute) bool { return ours() == nodes })
	if !strings.Contains(procs[follower].Output(), acquiredLease) {
		t.Errorf("the follower %s never led", follower)
	}
	after := suite.sim.Calls()
	delta := func(action, code string) int { return after[action][code] - before[action][code] }
	if n := delta("CreateClusterRoute", "OK"); n != nodes {
		t.Errorf("%d successful CreateClusterRoute calls for %d routes, want exactly one each", n, nodes)
	}
	for code, n := range after["CreateClusterRoute"] {
		if code != "OK" && n-before["CreateClusterRoute"][code] > 0 {
			t.Errorf("CreateClusterRoute answered %s %d times: a route was created twice or refused", code, n-before["CreateClusterRoute"][code])
		}
	}
	if n := total(after["DeleteClusterRoute"]) - total(before["DeleteClusterRoute"]); n != 0 {
		t.Errorf("%d DeleteClusterRoute calls: a route was deleted and created again", n)
	}
}

// The leader cut off from the apiserver (its network to the apiserver
// partitioned, the cloud still reachable) while it creates load balancers.
// It cannot renew its lease, gives up at the renew deadline and exits, and
// the other replica takes over once the lease expired: the old leader made
// no cloud write after that, and the Services converge under the new leader
// with one CLB each.
func TestLeaderCutOffFromAPIServer(t *testing.T) {
	pauseMainCCM(t)
	apiserver, err := url.Parse(suite.cluster.Server())
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := testcluster.NewProxy(apiserver.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	viaProxy, err := testcluster.KubeconfigVia(suite.kubeconfig, proxy.Addr())
	if err != nil {
		t.Fatal(err)
	}
	args := []string{
		"--leader-elect=true",
		"--leader-elect-lease-duration=" + leaseDuration.String(),
		"--leader-elect-renew-deadline=5s",
		"--leader-elect-retry-period=" + retryPeriod.String(),
		"--controllers=service",
	}
	oldID, newID := haSecretIDs[0], haSecretIDs[1]
	old, err := startCCMWith("ccm-cut-old", writeCloudConfig(suite.dir, "ccm-cut-old.yaml", oldID, secretKey), viaProxy, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(old.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := old.WaitForOutput(ctx, acquiredLease); err != nil {
		t.Fatalf("the first replica did not lead: %v", err)
	}
	next, err := startCCM("ccm-cut-new", writeCloudConfig(suite.dir, "ccm-cut-new.yaml", newID, secretKey), args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(next.Stop) // after the Services' cleanups: it deletes their CLBs

	// Load balancers being created when the partition comes. (The
	// principal may have written in an earlier test: only writes from now
	// on count.)
	const sel = "cutoff"
	lbNode(t, sel)
	started := time.Now()
	var svcs []*corev1.Service
	for range 3 {
		svcs = append(svcs, createService(t, lbServiceSpec("cutoff", sel, 8097)))
	}
	for deadline := time.Now().Add(30 * time.Second); !lastWriteBy(oldID).After(started); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the leader made no cloud write within 30s")
		}
	}
	proxy.Cut()
	cut := time.Now()

	// The old leader exits at its renew deadline; the new one acquires the
	// lease once it expired.
	var oldExited, newLeads time.Time
	for deadline := time.Now().Add(leaseDuration + 20*time.Second); newLeads.IsZero(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the second replica did not take over:\n%s", tail(next.Output(), 20))
		}
		if exited, _ := old.Exited(); exited && oldExited.IsZero() {
			oldExited = time.Now()
		}
		if strings.Contains(next.Output(), acquiredLease) {
			newLeads = time.Now()
		}
	}
	t.Logf("cut at +0; old leader exited at +%s; new leader at +%s; old leader's last cloud write at +%s",
		oldExited.Sub(cut).Round(100*time.Millisecond), newLeads.Sub(cut).Round(100*time.Millisecond),
		lastWriteBy(oldID).Sub(cut).Round(10*time.Millisecond))
	if oldExited.IsZero() || !oldExited.Before(newLeads) {
		t.Errorf("the old leader had not exited when the new one took over (exited %v)", !oldExited.IsZero())
	}
	if last := lastWriteBy(oldID); !last.Before(newLeads) {
		t.Errorf("the old leader wrote to the cloud %s after the new leader took over", last.Sub(newLeads))
	}

	for _, svc := range svcs {
		waitIngress(t, svc, 90*time.Second)
		if n := len(clbsOf(getService(t, svc).UID)); n != 1 {
			t.Errorf("Service %s has %d CLBs after the handover, want 1", svc.Name, n)
		}
	}
}

// waitForLeader returns the principal of the process that acquired the lease
// and that of the other one.
func waitForLeader(t *testing.T, procs map[string]*testcluster.Process, d time.Duration) (leader, follower string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		for id, p := range procs {
			if strings.Contains(p.Output(), acquiredLease) {
				leader = id
			}
		}
		if leader != "" {
			for id := range procs {
				if id != leader {
					follower = id
				}
			}
			if strings.Contains(procs[follower].Output(), acquiredLease) {
				t.Fatal("both processes acquired the lease")
			}
			return leader, follower
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no process acquired the lease within %s", d)
	return "", ""
}
