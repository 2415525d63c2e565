package cloudbase

import (
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCheckAbsence(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	node := func(age time.Duration) *v1.Node {
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
		if age >= 0 {
			n.CreationTimestamp = metav1.NewTime(now.Add(-age))
		}
		return n
	}
	for _, tc := range []struct {
		name   string
		age    time.Duration // -1: no creation timestamp
		window time.Duration
		young  bool
	}{
		{"young node", 10 * time.Second, time.Minute, true},
		{"node as old as the window", time.Minute, time.Minute, false},
		{"old node", time.Hour, time.Minute, false},
		{"window off", time.Second, 0, false},
		{"no creation timestamp", -1, time.Minute, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckAbsence(node(tc.age), "ins-1", "DescribeInstances", tc.window, now)
			var y *YoungNodeError
			if got := errors.As(err, &y); got != tc.young {
				t.Fatalf("young = %v (%v), want %v", got, err, tc.young)
			}
		})
	}
}
