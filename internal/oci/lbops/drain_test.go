package lbops

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/lb/drain"
)

// backendsOf lists a backend set's backends as "ip:port" with " drain" for
// those marked drain, sorted.
func (e *lbEnv) backendsOf(kind Kind, set string) []string {
	var out []string
	for _, bs := range e.only(kind).BackendSets {
		if bs.Name != set {
			continue
		}
		for _, b := range bs.Backends {
			s := fmt.Sprintf("%s:%d", b.IPAddress, b.Port)
			if b.Drain {
				s += " drain"
			}
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// TestBackendsDrainBeforeRemoval walks a node out of the load balancer with
// a drain period, on both kinds: marked drain first, removed only once
// drained, and the provider told when to come back; a node back before the
// end of its drain is unmarked.
func TestBackendsDrainBeforeRemoval(t *testing.T) {
	for _, kind := range []Kind{KindLB, KindNLB} {
		t.Run(string(kind), func(t *testing.T) {
			env := newLBEnv(t)
			o := newTestOps(env)
			var mu sync.Mutex
			now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
			start := now
			o.drains = drain.NewTracker(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
			var asked []time.Time
			o.hooks.DrainEnds = func(uid types.UID, at time.Time) { asked = append(asked, at) }
			with := func(ips ...string) *Desired {
				d := desired(kind, ips...)
				d.DrainPeriod = time.Minute
				return d
			}
			update := "UpdateBackendSet TCP-80"
			steps := []struct {
				name       string
				advance    time.Duration
				d          *Desired
				wantWrites []string
				wantAsked  []time.Time
				want       []string
			}{
				{name: "node 2 leaves: drain", d: with("10.0.0.1"), wantWrites: []string{update},
					wantAsked: []time.Time{start.Add(time.Minute)}, want: []string{"10.0.0.1:30080", "10.0.0.2:30080 drain"}},
				{name: "mid-drain resync writes nothing", advance: 30 * time.Second, d: with("10.0.0.1"),
					wantAsked: []time.Time{start.Add(time.Minute)}, want: []string{"10.0.0.1:30080", "10.0.0.2:30080 drain"}},
				{name: "drained: removed", advance: 30 * time.Second, d: with("10.0.0.1"), wantWrites: []string{update},
					want: []string{"10.0.0.1:30080"}},
				{name: "node 1 leaves as node 3 joins", d: with("10.0.0.3"), wantWrites: []string{update},
					wantAsked: []time.Time{start.Add(2 * time.Minute)}, want: []string{"10.0.0.1:30080 drain", "10.0.0.3:30080"}},
				{name: "node 1 back mid-drain: unmarked", advance: 10 * time.Second, d: with("10.0.0.1", "10.0.0.3"), wantWrites: []string{update},
					want: []string{"10.0.0.1:30080", "10.0.0.3:30080"}},
				{name: "drain period 0: out at once", d: desired(kind, "10.0.0.3"), wantWrites: []string{update},
					want: []string{"10.0.0.3:30080"}},
			}
			if _, err := o.Ensure(context.Background(), with("10.0.0.1", "10.0.0.2")); err != nil {
				t.Fatal(err)
			}
			for _, s := range steps {
				mu.Lock()
				now = now.Add(s.advance)
				mu.Unlock()
				env.resetWrites()
				asked = nil
				if _, err := o.Ensure(context.Background(), s.d); err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				if got := env.writesOf(); !slices.Equal(got, s.wantWrites) {
					t.Errorf("%s: writes = %v, want %v", s.name, got, s.wantWrites)
				}
				if !reflect.DeepEqual(asked, s.wantAsked) {
					t.Errorf("%s: OnDrain at %v, want %v", s.name, asked, s.wantAsked)
				}
				if got := env.backendsOf(kind, "TCP-80"); !slices.Equal(got, s.want) {
					t.Errorf("%s: backends = %v, want %v", s.name, got, s.want)
				}
				if diffs, err := o.Drift(context.Background(), s.d); err != nil || len(diffs) != 0 {
					t.Errorf("%s: drift = %v, %v; want none (draining is not drift)", s.name, diffs, err)
				}
			}
		})
	}
}
