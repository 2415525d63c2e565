package clbops

import (
	"fmt"
	"slices"
	"testing"
)

func targetsOn(listener string, from, n int) []target {
	out := make([]target, n)
	for i := range out {
		out[i] = target{listenerID: listener, instanceID: fmt.Sprintf("ins-%08d", from+i), port: 30080}
	}
	return out
}

func TestMakeRoom(t *testing.T) {
	tests := []struct {
		name         string
		actual       map[string][]target
		register     []target
		deregister   []target
		limit        int
		wantFirst    int // deregistrations moved before the registrations
		wantListener string
	}{
		{"no limit", map[string][]target{"l1": targetsOn("l1", 0, 100)}, targetsOn("l1", 100, 1), targetsOn("l1", 0, 1), 0, 0, ""},
		{"room left", map[string][]target{"l1": targetsOn("l1", 0, 99)}, targetsOn("l1", 100, 1), targetsOn("l1", 0, 1), 100, 0, ""},
		{"at the quota: one out first", map[string][]target{"l1": targetsOn("l1", 0, 100)}, targetsOn("l1", 100, 1), targetsOn("l1", 0, 1), 100, 1, "l1"},
		{"three replaced at the quota", map[string][]target{"l1": targetsOn("l1", 0, 100)}, targetsOn("l1", 100, 3), targetsOn("l1", 0, 5), 100, 3, "l1"},
		{"per listener", map[string][]target{"l1": targetsOn("l1", 0, 100), "l2": targetsOn("l2", 0, 50)},
			append(targetsOn("l1", 100, 2), targetsOn("l2", 100, 2)...), append(targetsOn("l2", 0, 2), targetsOn("l1", 0, 2)...), 100, 2, "l1"},
		{"nothing to deregister", map[string][]target{"l1": targetsOn("l1", 0, 100)}, targetsOn("l1", 100, 1), nil, 100, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &targetPlan{register: tt.register, deregister: slices.Clone(tt.deregister)}
			first := p.makeRoom(tt.actual, tt.limit)
			if len(first) != tt.wantFirst {
				t.Fatalf("%d deregistrations first, want %d: %v", len(first), tt.wantFirst, first)
			}
			for _, f := range first {
				if f.listenerID != tt.wantListener {
					t.Fatalf("moved %v, want only listener %s's", f, tt.wantListener)
				}
			}
			if len(first)+len(p.deregister) != len(tt.deregister) {
				t.Fatalf("deregistrations lost: %d first + %d later, want %d", len(first), len(p.deregister), len(tt.deregister))
			}
			// No listener ever holds more than the limit.
			if tt.limit > 0 {
				for id, have := range tt.actual {
					n := len(have)
					for _, f := range first {
						if f.listenerID == id {
							n--
						}
					}
					for _, r := range tt.register {
						if r.listenerID == id {
							n++
						}
					}
					if n > tt.limit && len(tt.deregister) > 0 {
						t.Fatalf("listener %s reaches %d targets, over the limit %d", id, n, tt.limit)
					}
				}
			}
		})
	}
}

// At the quota with nothing to deregister, a draining target is cut short
// before one still taking traffic; the rest keep draining.
func TestMakeRoomCutsDrainsShort(t *testing.T) {
	p := &targetPlan{register: targetsOn("l1", 100, 2), draining: targetsOn("l1", 0, 1), drain: targetsOn("l1", 1, 2)}
	first := p.makeRoom(map[string][]target{"l1": targetsOn("l1", 0, 100)}, 100)
	want := append(targetsOn("l1", 0, 1), targetsOn("l1", 1, 1)...)
	if !slices.Equal(first, want) {
		t.Fatalf("first = %v, want %v (the draining one, then one about to drain)", first, want)
	}
	if len(p.draining) != 0 || !slices.Equal(p.drain, targetsOn("l1", 2, 1)) {
		t.Fatalf("left: draining %v, drain %v", p.draining, p.drain)
	}
}
