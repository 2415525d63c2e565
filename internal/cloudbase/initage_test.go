package cloudbase

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudapi "k8s.io/cloud-provider/api"
)

func TestMetadataAge(t *testing.T) {
	now := time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)
	taint := v1.Taint{Key: cloudapi.TaintExternalCloudProvider, Value: "true", Effect: v1.TaintEffectNoSchedule}
	mk := func(registered time.Duration, taints ...v1.Taint) *v1.Node {
		n := &v1.Node{Spec: v1.NodeSpec{Taints: taints}}
		if registered > 0 {
			n.CreationTimestamp = metav1.NewTime(now.Add(-registered))
		}
		return n
	}
	tests := []struct {
		name string
		ttl  time.Duration
		node *v1.Node
		want time.Duration
	}{
		{"initialized node: the TTL", time.Minute, mk(3 * time.Minute), time.Minute},
		{"uninitialized, registered within the TTL", time.Minute, mk(20*time.Second, taint), time.Minute},
		{"uninitialized, waited longer than the TTL: since registration", time.Minute, mk(90*time.Second, taint), 90 * time.Second},
		{"uninitialized, waited very long: capped", time.Minute, mk(time.Hour, taint), MaxInitAge},
		{"TTL longer than the cap wins", 10 * time.Minute, mk(time.Hour, taint), 10 * time.Minute},
		{"no creation time: the TTL", time.Minute, mk(0, taint), time.Minute},
		{"caching off stays off", 0, mk(90*time.Second, taint), 0},
		{"another taint only: the TTL", time.Minute, mk(90*time.Second, v1.Taint{Key: "other", Effect: v1.TaintEffectNoSchedule}), time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MetadataAge(tt.node, tt.ttl, now); got != tt.want {
				t.Errorf("metadataAge = %v, want %v", got, tt.want)
			}
		})
	}
}
