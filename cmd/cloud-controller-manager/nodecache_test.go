package main

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestTrimNodeKeepsWhatControllersRead(t *testing.T) {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"a": "b"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}},
		Spec: corev1.NodeSpec{ProviderID: "oci://x", Taints: []corev1.Taint{{Key: "t"}}},
		Status: corev1.NodeStatus{
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Images:     []corev1.ContainerImage{{Names: []string{"registry/app:1"}, SizeBytes: 1}},
		},
	}
	want := n.DeepCopy()
	want.ManagedFields, want.Status.Images = nil, nil

	for range 2 { // a transform must be idempotent
		out, err := trimNode(n)
		if err != nil {
			t.Fatal(err)
		}
		got := out.(*corev1.Node)
		if got.ManagedFields != nil || got.Status.Images != nil {
			t.Fatalf("managedFields or images kept: %+v", got)
		}
		if got.Name != want.Name || got.Labels["a"] != "b" || got.Spec.ProviderID != want.Spec.ProviderID ||
			len(got.Spec.Taints) != 1 || len(got.Status.Addresses) != 1 || len(got.Status.Conditions) != 1 {
			t.Fatalf("trimmed what controllers read: %+v", got)
		}
	}

	tomb := cache.DeletedFinalStateUnknown{Key: "n1", Obj: want}
	if out, err := trimNode(tomb); err != nil || out != any(tomb) {
		t.Fatalf("a tombstone changed: %v, %v", out, err)
	}
}
