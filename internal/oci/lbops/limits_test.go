package lbops

import "testing"

// One backend set per listener, each holding the same nodes: each set can
// hold min(512, the load balancer's total / sets). LB: 512 in all
// (balanceoverview.htm, the stricter figure); NLB: 1024
// (NetworkLoadBalancer/introduction.htm).
func TestBackendsPerListener(t *testing.T) {
	tests := []struct {
		kind      Kind
		listeners int
		want      int
	}{
		{KindLB, 0, 512}, {KindLB, 1, 512}, {KindLB, 2, 256}, {KindLB, 3, 170}, {KindLB, 16, 32},
		{KindNLB, 1, 512}, {KindNLB, 2, 512}, {KindNLB, 3, 341}, {KindNLB, 50, 20},
	}
	for _, tt := range tests {
		if got := LimitsOf(tt.kind).BackendsPerListener(tt.listeners); got != tt.want {
			t.Errorf("%s with %d listeners: %d per set, want %d", tt.kind, tt.listeners, got, tt.want)
		}
	}
	if err := LimitsOf(KindLB).CheckListeners(KindLB, 16); err != nil {
		t.Errorf("16 LB listeners: %v", err)
	}
	if err := LimitsOf(KindLB).CheckListeners(KindLB, 17); err == nil {
		t.Error("17 LB listeners accepted")
	}
	if err := LimitsOf(KindNLB).CheckListeners(KindNLB, 50); err != nil {
		t.Errorf("50 NLB listeners: %v", err)
	}
}
