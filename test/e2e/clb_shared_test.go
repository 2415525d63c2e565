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
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// Managed TKE's "several Services share an existing CLB"
// (tke-existed-lbid on each): every Service gets the CLB's address and
// owns only its listeners; a port another Service holds is a Warning Event
// on the later Service, whose traffic never takes the port; deleting one
// Service leaves the CLB and the others' listeners, and frees its port.
func TestLoadBalancerSharedCLB(t *testing.T) {
	const sel = "shared-clb"
	n1 := lbNode(t, sel)
	clb := suite.sim.Tencent().CLB()
	existing, err := clb.CreateLoadBalancer(tencent.CLBSpec{Name: "team-shared-many", VpcID: vpcID})
	if err != nil {
		t.Fatalf("create the CLB to share: %v", err)
	}
	t.Cleanup(func() { _ = clb.DeleteLoadBalancer(existing.ID) })
	adopting := func(name string, port int32) *corev1.Service {
		spec := lbServiceSpec(name, sel, port)
		spec.Annotations[string(annotations.TKEExistedLBID)] = existing.ID
		serve(t, n1.PrivateIP, nodePort(spec, port), 200, spec.Name)
		return spec
	}
	url := func(port int) string { return fmt.Sprintf("http://%s:%d/", existing.VIP, port) }

	a := createService(t, adopting("shared-a", 8093))
	b := createService(t, adopting("shared-b", 8094))
	for _, svc := range []*corev1.Service{a, b} {
		if vip := waitIngress(t, svc, 90*time.Second); vip != existing.VIP {
			t.Errorf("Service %s: ingress %s, want the shared CLB's %s", svc.Name, vip, existing.VIP)
		}
	}
	waitAnswers(t, url(8093), 30*time.Second, a.Name)
	waitAnswers(t, url(8094), 30*time.Second, b.Name)

	// A third Service asks for the first one's port.
	c := createService(t, adopting("shared-c", 8093))
	waitEvent(t, c, "SyncLoadBalancerFailed", []string{"port 8093/TCP is used by listener", "which this Service does not own"}, 30*time.Second)
	holdsFor(t, 2*time.Second, "port 8093 still answered by the first Service", func() bool { body, err := httpGet(url(8093)); return err == nil && body == a.Name })
	if n := len(clbsOf(c.UID)); n != 0 {
		t.Errorf("the refused Service got %d CLBs of its own", n)
	}

	// The first Service goes: its port is the third one's on a retry, and
	// the second Service and the CLB stay.
	if err := suite.cluster.Client.CoreV1().Services(a.Namespace).Delete(context.Background(), a.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitServiceGone(t, a, 90*time.Second)
	waitAnswers(t, url(8093), 90*time.Second, c.Name)
	waitAnswers(t, url(8094), 10*time.Second, b.Name)
	lb, err := clb.LoadBalancer(existing.ID)
	if err != nil {
		t.Fatalf("the shared CLB is gone: %v", err)
	}
	if len(lb.Listeners) != 2 {
		t.Errorf("listeners %+v, want the second and third Services' only", lb.Listeners)
	}
}
