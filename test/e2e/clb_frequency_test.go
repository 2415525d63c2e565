//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The suite's cloudsim refuses the 30th CLB deletion within clbDeleteWindow
// in a region (FailedOperation.FrequencyCheckRisk), and the suite's CCMs
// wait clbDeleteRetryAfter before deleting again after a refusal.
const (
	clbDeleteWindow     = 20 * time.Second
	clbDeleteRetryAfter = "5s"
)

// TestLoadBalancerMassDelete: a namespace with 40 LoadBalancer Services is
// deleted at once. Tencent Cloud refuses to delete 30 or more CLBs in one
// region within 5 minutes, ForceDelete or not (DeleteLoadBalancer's
// ForceDelete, case 3, clb@v1.3.105 models.go); the CCM defers the
// refused deletions instead of hammering the API, says so in an Event, and
// every CLB is gone in the end.
func TestLoadBalancerMassDelete(t *testing.T) {
	const n = 40
	ctx := context.Background()
	client := suite.cluster.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-mass-delete"}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// No node matches the selector: the CLBs need no targets.
	var svcs []*corev1.Service
	for range n {
		spec := lbServiceSpec("mass", "none-mass", 80)
		spec.Namespace = ns.Name
		svc, err := client.CoreV1().Services(ns.Name).Create(ctx, spec, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svcs = append(svcs, svc)
	}
	start := time.Now()
	for _, svc := range svcs {
		waitIngress(t, svc, 4*time.Minute)
	}
	t.Logf("%d CLBs ready in %s", n, time.Since(start).Round(time.Second))

	before := suite.sim.Calls()["DeleteLoadBalancer"]
	start = time.Now()
	// What deleting the namespace does: the namespace controller (not run
	// here) deletes every Service in it at once (one by one: Services
	// have no deletecollection). The namespace itself is deleted after:
	// while it terminates, the API server refuses new Events in it, so the
	// Warning Events this test checks would be lost (the CCM's log still
	// has the message).
	t.Cleanup(func() { _ = client.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}) })
	for _, svc := range svcs {
		if err := client.CoreV1().Services(ns.Name).Delete(ctx, svc.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(4 * time.Minute)
	for {
		list, err := client.CoreV1().Services(ns.Name).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d Services still there after %s", len(list.Items), 4*time.Minute)
		}
		time.Sleep(500 * time.Millisecond)
	}
	took := time.Since(start).Round(time.Second)
	for _, svc := range svcs {
		if lbs := clbsOf(svc.UID); len(lbs) != 0 {
			t.Errorf("Service %s's CLB %s is still there", svc.Name, lbs[0].ID)
		}
	}

	after := suite.sim.Calls()["DeleteLoadBalancer"]
	ok := after["OK"] - before["OK"]
	refused := after["FailedOperation.FrequencyCheckRisk"] - before["FailedOperation.FrequencyCheckRisk"]
	calls := total(after) - total(before)
	t.Logf("deleted %d CLBs in %s: %d DeleteLoadBalancer calls (%d accepted, %d refused for frequency)", n, took, calls, ok, refused)
	if ok != n {
		t.Errorf("accepted deletions = %d, want %d", ok, n)
	}
	if refused == 0 {
		t.Error("no deletion was refused: the scenario did not reach the frequency check")
	}
	// No storm: a refusal holds every deletion back for 5 s, so over the
	// time the window takes to slide there are a few probes, not one call
	// per Service per retry.
	if bound := n + 8; calls > bound {
		t.Errorf("DeleteLoadBalancer calls = %d, want at most %d", calls, bound)
	}

	// The Services that waited say why in a Warning Event.
	var deferred []string
	for _, svc := range svcs {
		for _, e := range serviceEvents(t, svc, "SyncLoadBalancerFailed") {
			if strings.Contains(e, "FrequencyCheckRisk") {
				deferred = append(deferred, svc.Name)
				break
			}
		}
	}
	if len(deferred) == 0 {
		t.Error("no Service has a Warning Event about the deferred deletion")
	}
	t.Logf("%d Services got a Warning Event naming FrequencyCheckRisk, e.g. %s", len(deferred), firstEvent(t, svcs, "FrequencyCheckRisk"))
}

// firstEvent returns the first SyncLoadBalancerFailed event mentioning s.
func firstEvent(t *testing.T, svcs []*corev1.Service, s string) string {
	t.Helper()
	for _, svc := range svcs {
		for _, e := range serviceEvents(t, svc, "SyncLoadBalancerFailed") {
			if strings.Contains(e, s) {
				return fmt.Sprintf("%s: %q", types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}, e)
			}
		}
	}
	return "(none)"
}
