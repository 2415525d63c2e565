package clbops

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/lb/drain"
)

// drainClock is the tracker's clock, moved by the test.
type drainClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *drainClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *drainClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestTargetsDrainBeforeDeregistration walks a node out of the CLB with a
// drain period: weight 0 first, deregistered only once drained, and the
// provider told when to come back; a node back before the end of its drain
// gets its weight again.
func TestTargetsDrainBeforeDeregistration(t *testing.T) {
	env := newCLBEnv(t)
	o := newTestOps(env)
	clock := &drainClock{now: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}
	o.drains = drain.NewTracker(clock.Now)
	var asked []time.Time
	o.hooks.DrainEnds = func(uid types.UID, at time.Time) {
		if uid != "uid-1" {
			t.Errorf("OnDrain for %s, want uid-1", uid)
		}
		asked = append(asked, at)
	}
	draining := func(s *Desired) { s.DrainPeriod = time.Minute; onlyTCP80(s) }
	three := withBackends("ins-00000001", "ins-00000002", "ins-00000003")
	two := withBackends("ins-00000001", "ins-00000002")
	start := clock.Now()

	steps := []struct {
		name       string
		advance    time.Duration
		spec       *Desired
		wantWrites []string
		wantAsked  []time.Time // OnDrain calls of this step
		want       []string
		wantDrift  []string
	}{
		{name: "created with three", spec: testSpec(draining, three), wantWrites: []string{"CreateLoadBalancer", "CreateListener", "BatchRegisterTargets"},
			want: []string{"ins-00000001:30080/10", "ins-00000002:30080/10", "ins-00000003:30080/10"}},
		{name: "node 3 leaves: weight 0", spec: testSpec(draining, two), wantWrites: []string{"BatchModifyTargetWeight"},
			wantAsked: []time.Time{start.Add(time.Minute)},
			want:      []string{"ins-00000001:30080/10", "ins-00000002:30080/10", "ins-00000003:30080/0"}},
		{name: "a resync mid-drain writes nothing", advance: 30 * time.Second, spec: testSpec(draining, two),
			wantAsked: []time.Time{start.Add(time.Minute)},
			want:      []string{"ins-00000001:30080/10", "ins-00000002:30080/10", "ins-00000003:30080/0"}},
		{name: "drained: deregistered", advance: 30 * time.Second, spec: testSpec(draining, two), wantWrites: []string{"BatchDeregisterTargets"},
			want: []string{"ins-00000001:30080/10", "ins-00000002:30080/10"}},
		{name: "node 2 leaves", advance: time.Second, spec: testSpec(draining, withBackends("ins-00000001")), wantWrites: []string{"BatchModifyTargetWeight"},
			wantAsked: []time.Time{start.Add(61*time.Second + time.Minute)},
			want:      []string{"ins-00000001:30080/10", "ins-00000002:30080/0"}},
		{name: "node 2 is back before the drain ended: weight restored", advance: 10 * time.Second, spec: testSpec(draining, two),
			wantWrites: []string{"BatchModifyTargetWeight"},
			want:       []string{"ins-00000001:30080/10", "ins-00000002:30080/10"}},
		{name: "node 2 leaves again: a new drain, from now", advance: time.Second, spec: testSpec(draining, withBackends("ins-00000001")),
			wantWrites: []string{"BatchModifyTargetWeight"}, wantAsked: []time.Time{start.Add(72*time.Second + time.Minute)},
			want: []string{"ins-00000001:30080/10", "ins-00000002:30080/0"}},
		{name: "drain period 0: out at once", spec: testSpec(onlyTCP80, withBackends("ins-00000001")), wantWrites: []string{"BatchDeregisterTargets"},
			want: []string{"ins-00000001:30080/10"}},
	}
	for _, s := range steps {
		clock.add(s.advance)
		env.resetCalls()
		asked = nil
		mustEnsure(t, o, s.spec)
		if got := env.writes(); !reflect.DeepEqual(got, s.wantWrites) {
			t.Errorf("%s: writes = %v, want %v", s.name, got, s.wantWrites)
		}
		if !reflect.DeepEqual(asked, s.wantAsked) {
			t.Errorf("%s: OnDrain at %v, want %v", s.name, asked, s.wantAsked)
		}
		if got := env.weightsOf(env.lbIDs()[0], "TCP-80"); !reflect.DeepEqual(got, s.want) {
			t.Errorf("%s: targets = %v, want %v", s.name, got, s.want)
		}
		// A draining target is on its way out: not drift.
		if diffs, err := o.Drift(context.Background(), s.spec); err != nil || len(diffs) != 0 {
			t.Errorf("%s: drift = %v, %v; want none", s.name, diffs, err)
		}
	}
}

func TestWeightCallsKeepTheLimits(t *testing.T) {
	tests := []struct {
		name      string
		listeners int
		per       int
		wantCalls []int // targets per call
	}{
		{"one rule", 1, 3, []int{3}},
		{"a listener's 120 targets: rules of 50", 1, 120, []int{120}},
		{"600 targets: two calls", 6, 100, []int{500, 100}},
		{"101 listeners of one target: two calls", 101, 1, []int{100, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ts []target
			for l := range tc.listeners {
				ts = append(ts, targetsOn(string(rune('a'+l%26))+string(rune('a'+l/26)), 0, tc.per)...)
			}
			var got []int
			for _, call := range weightCalls(ts, func(target) int64 { return 0 }) {
				if len(call) > maxWeightRules {
					t.Errorf("a call with %d rules", len(call))
				}
				n := 0
				for _, r := range call {
					if len(r.Targets) > maxWeightTargetsPerRule {
						t.Errorf("a rule with %d targets", len(r.Targets))
					}
					for _, st := range r.Targets {
						if *st.Weight != 0 {
							t.Errorf("weight %d, want 0", *st.Weight)
						}
					}
					n += len(r.Targets)
				}
				got = append(got, n)
			}
			if !reflect.DeepEqual(got, tc.wantCalls) {
				t.Errorf("targets per call = %v, want %v", got, tc.wantCalls)
			}
		})
	}
}
