package kubeproxy

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func status(t *testing.T, ip string) int {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://%s:%d/healthz", ip, HealthPort))
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A node answers 200 while eligible, 503 once tainted for deletion, and
// nothing once it is deleted.
func TestWatchFollowsNodes(t *testing.T) {
	const ip = "127.0.233.7"
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := New()
	if err := h.Watch(ctx, client, func(err error) { t.Errorf("serve: %v", err) }); err != nil {
		t.Fatal(err)
	}
	eventually := func(want int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for status(t, ip) != want {
			if time.Now().After(deadline) {
				t.Fatalf("/healthz answers %d, want %d", status(t, ip), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	eventually(http.StatusOK)

	n, _ := client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	n.Spec.Taints = []corev1.Taint{{Key: TaintToBeDeleted, Effect: corev1.TaintEffectNoSchedule}}
	if _, err := client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(http.StatusServiceUnavailable)

	if err := client.CoreV1().Nodes().Delete(ctx, "n1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(0)
}

func TestEligible(t *testing.T) {
	now := metav1.Now()
	tests := []struct {
		name string
		node corev1.Node
		want bool
	}{
		{"plain", corev1.Node{}, true},
		{"other taint", corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "x"}}}}, true},
		{"autoscaler taint", corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: TaintToBeDeleted}}}}, false},
		{"being deleted", corev1.Node{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}}, false},
	}
	for _, tt := range tests {
		if got := Eligible(&tt.node); got != tt.want {
			t.Errorf("%s: Eligible = %v, want %v", tt.name, got, tt.want)
		}
	}
}
