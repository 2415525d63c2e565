//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/testcluster/kubeproxy"
)

// The cluster autoscaler taints a node ToBeDeletedByClusterAutoscaler
// before it removes it. kube-proxy's /healthz on that node then fails
// (KEP-3836), the load balancer's default health check (HTTP on 10256)
// marks it down, and new requests go only to the other nodes, while the
// node is still a target: the health check drains it, not a deregistration.

func TestLoadBalancerDrainsNodeBeingRemoved(t *testing.T) {
	const sel = "drain"
	n1, n2 := lbNode(t, sel), lbNode(t, sel)
	spec := lbServiceSpec("drain", sel, 8095)
	spec.Annotations[annotations.HealthCheckInterval.String()] = "3s"
	spec.Annotations[annotations.HealthCheckHealthyThreshold.String()] = "2"
	spec.Annotations[annotations.HealthCheckUnhealthyThreshold.String()] = "2"
	np := nodePort(spec, 8095)
	serve(t, n1.PrivateIP, np, 200, "node-1")
	serve(t, n2.PrivateIP, np, 200, "node-2")
	svc := createService(t, spec)
	url := fmt.Sprintf("http://%s:8095/", waitIngress(t, svc, 60*time.Second))
	svc = getService(t, svc)
	targets := func() int {
		lbs := clbsOf(svc.UID)
		if len(lbs) != 1 {
			return 0
		}
		l, ok := listenerNamed(lbs[0], "TCP-8095")
		if !ok {
			return 0
		}
		return len(targetInstances(l))
	}
	drainScenario(t, url, n2.PrivateIP, targets)
}

func TestOCILoadBalancerDrainsNodeBeingRemoved(t *testing.T) {
	startOCIServiceController(t)
	for _, kind := range []string{"lb", "nlb"} {
		t.Run(kind, func(t *testing.T) {
			sel := "oci-drain-" + kind
			n1, n2 := ociLBNode(t, sel), ociLBNode(t, sel)
			spec := lbServiceSpec("oci-drain-"+kind, sel, 8096)
			spec.Annotations[annotations.OCILoadBalancerType.String()] = kind
			spec.Annotations[annotations.OCILBHealthCheckInterval.String()] = "1000"
			spec.Annotations[annotations.OCILBHealthCheckTimeout.String()] = "500"
			spec.Annotations[annotations.OCILBHealthCheckRetries.String()] = "2"
			np := nodePort(spec, 8096)
			serve(t, n1.PrivateIP, np, 200, "node-1")
			serve(t, n2.PrivateIP, np, 200, "node-2")
			svc := createService(t, spec)
			url := fmt.Sprintf("http://%s:8096/", waitIngress(t, svc, 90*time.Second))
			svc = getService(t, svc)
			targets := func() int {
				lbs := ociLBsOf(svc.UID)
				if len(lbs) != 1 {
					return 0
				}
				return len(ociBackends(lbs[0], "TCP-8096"))
			}
			drainScenario(t, url, n2.PrivateIP, targets)
		})
	}
}

// drainScenario: both nodes answer through url; node (named by its IP) is
// tainted for removal; then only the other answers, for a while, while the
// load balancer still has both targets. Untainted, it answers again.
func drainScenario(t *testing.T, url, node string, targets func() int) {
	t.Helper()
	waitAnswers(t, url, 60*time.Second, "node-1", "node-2")
	setTaint(t, node, true)
	onlyNode1 := func() bool { body, err := httpGet(url); return err == nil && body == "node-1" }
	deadline := time.Now().Add(30 * time.Second)
	for streak := 0; streak < 10; {
		if time.Now().After(deadline) {
			t.Fatalf("the tainted node %s still gets new requests %s after the taint", node, 30*time.Second)
		}
		if onlyNode1() {
			streak++
		} else {
			streak = 0
		}
		time.Sleep(100 * time.Millisecond)
	}
	holdsFor(t, 3*time.Second, "only the untainted node answers", onlyNode1)
	if n := targets(); n != 2 {
		t.Errorf("the load balancer has %d targets, want both: draining is the health check's doing", n)
	}
	setTaint(t, node, false)
	waitAnswers(t, url, 60*time.Second, "node-1", "node-2")
}

// setTaint adds or removes the cluster autoscaler's deletion taint.
func setTaint(t *testing.T, name string, on bool) {
	t.Helper()
	for range 5 {
		n, err := suite.cluster.Client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var taints []corev1.Taint
		for _, tn := range n.Spec.Taints {
			if tn.Key != kubeproxy.TaintToBeDeleted {
				taints = append(taints, tn)
			}
		}
		if on {
			taints = append(taints, corev1.Taint{Key: kubeproxy.TaintToBeDeleted, Value: fmt.Sprint(time.Now().Unix()), Effect: corev1.TaintEffectNoSchedule})
		}
		n.Spec.Taints = taints
		if _, err = suite.cluster.Client.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err == nil {
			return
		}
	}
	t.Fatalf("cannot update the taints of node %s", name)
}
