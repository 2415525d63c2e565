//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	cloudapi "k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// The suite's CCM programs routes: a TKE cluster route table in cloudsim,
// --cluster-cidr, and a reconciliation period shorter than the default 10 s
// (with the route cache TTL a little under it, as documented) so that the
// scenarios run quickly.
const (
	routeTable       = "cls-e2e00001"
	clusterCIDR      = "10.244.0.0/16"
	routePeriod      = 4 * time.Second
	routeCacheTTL    = "3s"
	routeWait        = 40 * time.Second // several periods, with paced API calls
	networkCondition = corev1.NodeNetworkUnavailable
)

// routeTableSeed is the empty table the suite's cloudsim starts with.
func routeTableSeed() tencent.RouteTable {
	return tencent.RouteTable{Name: routeTable, CIDR: clusterCIDR, VpcID: vpcID}
}

// routeArgs are the suite CCM's route controller flags.
func routeArgs() []string {
	return []string{
		"--configure-cloud-routes=true",
		"--cluster-cidr=" + clusterCIDR,
		"--route-reconciliation-period=" + routePeriod.String(),
	}
}

// writeRoutesCloudConfig is writeCloudConfig plus the route table keys.
func writeRoutesCloudConfig(dir, name string) string {
	return writeRoutesCloudConfigAs(dir, name, secretID)
}

// writeRoutesCloudConfigAs is writeRoutesCloudConfig with another SecretId
// (a principal of its own in cloudsim's call counts).
func writeRoutesCloudConfigAs(dir, name, id string) string {
	path := writeCloudConfig(dir, name, id, secretKey)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "cluster_route_table: %s\ncluster_cidr: %s\nroute_cache_ttl: %s\n", routeTable, clusterCIDR, routeCacheTTL); err != nil {
		panic(err)
	}
	return path
}

var podCIDRSeq atomic.Int32

// nextPodCIDR hands out a unique /24 of the cluster CIDR.
func nextPodCIDR() string { return fmt.Sprintf("10.244.%d.0/24", podCIDRSeq.Add(1)) }

// routeNode is a node with a pod CIDR, registered the way a kubelet (with a
// CNI that reports it) does: uninitialized taint, the host's InternalIP,
// Ready, and NetworkUnavailable=True until its route exists.
func routeNode(t *testing.T, in cloudsim.Instance, podCIDR string) string {
	t.Helper()
	name := in.PrivateIP
	now := metav1.Now()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Spec: corev1.NodeSpec{
			PodCIDR:  podCIDR,
			PodCIDRs: []string{podCIDR},
			Taints:   []corev1.Taint{{Key: cloudapi.TaintExternalCloudProvider, Value: "true", Effect: corev1.TaintEffectNoSchedule}},
		},
		Status: corev1.NodeStatus{
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: in.PrivateIP}, {Type: corev1.NodeHostName, Address: name}},
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now},
				{Type: networkCondition, Status: corev1.ConditionTrue, Reason: "NoRouteCreated", Message: "waiting for the pod route", LastTransitionTime: now},
			},
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := suite.cluster.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("register node %s: %v", name, err)
	}
	t.Cleanup(func() { deleteNode(t, name) })
	return name
}

func deleteNode(t *testing.T, name string) {
	t.Helper()
	_ = suite.cluster.Client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
}

func tableRoutes(t *testing.T) []tencent.ClusterRoute {
	t.Helper()
	rt, err := suite.sim.Tencent().TKE().RouteTable(routeTable)
	if err != nil {
		t.Fatal(err)
	}
	return rt.Routes
}

func route(cidr, gw string) tencent.ClusterRoute {
	return tencent.ClusterRoute{DestinationCIDR: cidr, GatewayIP: gw}
}

func hasRoute(routes []tencent.ClusterRoute, r tencent.ClusterRoute) bool {
	return slices.Contains(routes, r)
}

// waitRoutes waits for cond on the table's routes.
func waitRoutes(t *testing.T, what string, cond func([]tencent.ClusterRoute) bool) {
	t.Helper()
	deadline := time.Now().Add(routeWait)
	for {
		routes := tableRoutes(t)
		if cond(routes) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; route table: %v", what, routeWait, routes)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func networkAvailable(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == networkCondition {
			return c.Status == corev1.ConditionFalse && c.Reason == "RouteCreated"
		}
	}
	return false
}

func networkUnavailable(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == networkCondition {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// nodeEvents returns the messages of the node's events with this reason.
func nodeEvents(t *testing.T, node, reason string) []string {
	t.Helper()
	sel := fields.Set{"involvedObject.kind": "Node", "involvedObject.name": node, "reason": reason}.AsSelector().String()
	list, err := suite.cluster.Client.CoreV1().Events("").List(context.Background(), metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		out = append(out, e.Message)
	}
	return out
}

// TestRoutes runs the route scenarios in parallel against the suite's CCM:
// they share the route table, each with its own nodes and pod CIDRs.
func TestRoutes(t *testing.T) {
	suite.sim.ResetCalls()
	start := time.Now()
	t.Run("scenarios", func(t *testing.T) {
		t.Run("NodesGetRoutes", testNodesGetRoutes)
		t.Run("DeletedNodeRouteRemoved", testDeletedNodeRouteRemoved)
		t.Run("PodCIDRChangeReplacesRoute", testPodCIDRChange)
		t.Run("ForeignRouteSurvives", testForeignRouteSurvives)
		t.Run("ConflictIsReported", testConflictReported)
	})
	// No request storm: reads are about one per reconcile, whatever the
	// number of nodes, and every write was needed.
	elapsed := time.Since(start)
	calls := suite.sim.Calls()
	reads := total(calls["DescribeClusterRoutes"])
	if limit := int(elapsed/routePeriod) + 8; reads > limit {
		t.Errorf("DescribeClusterRoutes calls = %d in %s, want at most about one per %s reconcile (%d)", reads, elapsed.Round(time.Second), routePeriod, limit)
	}
	for _, action := range []string{"DescribeClusterRoutes", "CreateClusterRoute", "DeleteClusterRoute"} {
		if n := calls[action]["RequestLimitExceeded"]; n > 0 {
			t.Errorf("%s was throttled %d times", action, n)
		}
	}
	t.Logf("in %s: %v", elapsed.Round(time.Second), map[string]map[string]int{
		"DescribeClusterRoutes": calls["DescribeClusterRoutes"], "CreateClusterRoute": calls["CreateClusterRoute"],
		"DeleteClusterRoute": calls["DeleteClusterRoute"], "DescribeClusterRouteTables": calls["DescribeClusterRouteTables"]})
}

// Nodes with pod CIDRs get routes to their private IPs, and the route
// controller clears NetworkUnavailable once a node's route exists.
func testNodesGetRoutes(t *testing.T) {
	t.Parallel()
	var want []tencent.ClusterRoute
	var names []string
	for i := range 3 {
		in := newInstance(t, fmt.Sprintf("route-%d", i))
		cidr := nextPodCIDR()
		names = append(names, routeNode(t, in, cidr))
		want = append(want, route(cidr, in.PrivateIP))
	}
	waitRoutes(t, "a route per node", func(routes []tencent.ClusterRoute) bool {
		for _, r := range want {
			if !hasRoute(routes, r) {
				return false
			}
		}
		return true
	})
	for _, name := range names {
		waitNode(t, name, routeWait, "NetworkUnavailable=False (RouteCreated)", networkAvailable)
	}
}

// A deleted node's route is removed, though no node has its IP any more.
func testDeletedNodeRouteRemoved(t *testing.T) {
	t.Parallel()
	in := newInstance(t, "route-deleted")
	cidr := nextPodCIDR()
	name := routeNode(t, in, cidr)
	r := route(cidr, in.PrivateIP)
	waitRoutes(t, "the node's route", func(routes []tencent.ClusterRoute) bool { return hasRoute(routes, r) })
	deleteNode(t, name)
	waitRoutes(t, "the deleted node's route removed", func(routes []tencent.ClusterRoute) bool { return !hasRoute(routes, r) })
}

// spec.podCIDR cannot change once set (the API rejects the update), so a
// node gets another pod CIDR only by being deleted and registered again, as
// when it is re-provisioned. Its old route is deleted before the new one is
// created: a TKE gateway carries one CIDR.
func testPodCIDRChange(t *testing.T) {
	t.Parallel()
	in := newInstance(t, "route-cidr-change")
	oldCIDR, newCIDR := nextPodCIDR(), nextPodCIDR()
	name := routeNode(t, in, oldCIDR)
	waitRoutes(t, "the first route", func(routes []tencent.ClusterRoute) bool { return hasRoute(routes, route(oldCIDR, in.PrivateIP)) })

	// The API refuses to change the pod CIDR in place.
	n, err := suite.cluster.Client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Spec.PodCIDR, n.Spec.PodCIDRs = newCIDR, []string{newCIDR}
	if _, err := suite.cluster.Client.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err == nil {
		t.Fatal("the apiserver accepted a pod CIDR change; the scenario below assumes it cannot")
	}

	deleteNode(t, name)
	waitGone(t, name)
	routeNode(t, in, newCIDR)
	waitRoutes(t, "the route replaced", func(routes []tencent.ClusterRoute) bool {
		return hasRoute(routes, route(newCIDR, in.PrivateIP)) && !hasRoute(routes, route(oldCIDR, in.PrivateIP))
	})
	waitNode(t, name, routeWait, "NetworkUnavailable=False (RouteCreated)", networkAvailable)
}

func waitGone(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for nodeExists(t, name) {
		if time.Now().After(deadline) {
			t.Fatalf("node %s still exists", name)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A route that another tool put in the table, inside the cluster CIDR, is
// never deleted, while the CCM keeps reconciling around it.
func testForeignRouteSurvives(t *testing.T) {
	t.Parallel()
	foreignGW := newInstance(t, "route-foreign-gw") // an instance, but no node
	foreign := route(nextPodCIDR(), foreignGW.PrivateIP)
	if err := suite.sim.Tencent().TKE().AddRoute(routeTable, foreign); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = suite.sim.Tencent().TKE().DeleteRoute(routeTable, foreign) })

	in := newInstance(t, "route-next-to-foreign")
	cidr := nextPodCIDR()
	routeNode(t, in, cidr)
	waitRoutes(t, "our route", func(routes []tencent.ClusterRoute) bool { return hasRoute(routes, route(cidr, in.PrivateIP)) })
	holdsFor(t, 3*routePeriod, "the foreign route stays", func() bool { return hasRoute(tableRoutes(t), foreign) })
}

// A node whose pod CIDR collides with a foreign route gets a Warning event
// that names the route in the way and what to do; the other nodes' routes
// converge; and once the foreign route is removed, the node's route follows.
func testConflictReported(t *testing.T) {
	t.Parallel()
	foreignGW := newInstance(t, "route-conflict-gw")
	cidr := nextPodCIDR()
	foreign := route(cidr, foreignGW.PrivateIP)
	tke := suite.sim.Tencent().TKE()
	if err := tke.AddRoute(routeTable, foreign); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tke.DeleteRoute(routeTable, foreign) })

	blocked := newInstance(t, "route-conflict")
	blockedName := routeNode(t, blocked, cidr)
	other := newInstance(t, "route-conflict-other")
	otherCIDR := nextPodCIDR()
	routeNode(t, other, otherCIDR)

	waitRoutes(t, "the other node's route", func(routes []tencent.ClusterRoute) bool {
		return hasRoute(routes, route(otherCIDR, other.PrivateIP))
	})
	deadline := time.Now().Add(routeWait)
	var events []string
	for len(events) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no FailedToCreateRoute event on node %s", blockedName)
		}
		time.Sleep(500 * time.Millisecond)
		events = nodeEvents(t, blockedName, "FailedToCreateRoute")
	}
	for _, want := range []string{"overlaps route " + cidr + " -> " + foreignGW.PrivateIP, "not managed by this cluster",
		"delete it from the table", "CidrConflictWithOtherRoute"} {
		if !strings.Contains(events[0], want) {
			t.Errorf("event %q does not say %q", events[0], want)
		}
	}
	mustNotContainSecret(t, "the route event", strings.Join(events, "\n"))
	waitNode(t, blockedName, routeWait, "NetworkUnavailable stays True", networkUnavailable)
	if !hasRoute(tableRoutes(t), foreign) {
		t.Fatal("the conflicting foreign route was deleted")
	}

	// The operator removes the route in the way; the periodic reconcile
	// programs the node's route.
	if err := tke.DeleteRoute(routeTable, foreign); err != nil {
		t.Fatal(err)
	}
	waitRoutes(t, "the route after the conflict was resolved", func(routes []tencent.ClusterRoute) bool {
		return hasRoute(routes, route(cidr, blocked.PrivateIP))
	})
	waitNode(t, blockedName, routeWait, "NetworkUnavailable=False (RouteCreated)", networkAvailable)
}

// A node deleted while no CCM runs leaves its route behind, and nothing in
// a TKE route records whose it was. After the restart the CCM proves it
// orphaned (no node, and its instance is gone) and deletes it, and a new
// node registered meanwhile with the same pod CIDR gets its route.
func TestRouteOrphanReclaimedAfterRestart(t *testing.T) {
	old := newInstance(t, "route-orphan")
	cidr := nextPodCIDR()
	name := routeNode(t, old, cidr)
	orphan := route(cidr, old.PrivateIP)
	waitRoutes(t, "the node's route", func(routes []tencent.ClusterRoute) bool { return hasRoute(routes, orphan) })

	// The CCM goes down; the node and its instance go while it is away.
	suite.ccm.Stop()
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			p, err := startMainCCM("ccm-after-orphan-failure")
			if err != nil {
				t.Fatalf("restart the suite's CCM: %v", err)
			}
			suite.ccm = p
		}
	})
	deleteNode(t, name)
	waitGone(t, name)
	if err := suite.sim.SetInstanceState(old.ID, "TERMINATING"); err != nil {
		t.Fatal(err)
	}
	next := newInstance(t, "route-orphan-next")
	nextName := routeNode(t, next, cidr) // the freed pod CIDR, as the node IPAM hands it out again

	p, err := startMainCCM("ccm-after-orphan")
	if err != nil {
		t.Fatalf("restart the suite's CCM: %v", err)
	}
	suite.ccm, restarted = p, true
	waitRoutes(t, "the orphan deleted and the new node's route created", func(routes []tencent.ClusterRoute) bool {
		return !hasRoute(routes, orphan) && hasRoute(routes, route(cidr, next.PrivateIP))
	})
	waitNode(t, nextName, routeWait, "NetworkUnavailable=False (RouteCreated)", networkAvailable)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.WaitForOutput(ctx, "orphaned route"); err != nil {
		t.Errorf("no log line names the orphaned route: %v", err)
	}
}
