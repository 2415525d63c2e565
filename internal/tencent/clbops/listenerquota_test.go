package clbops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ccmkit/ccm/internal/lb/lbspec"
)

// withTCPPorts gives the spec n TCP ports from first on.
func withTCPPorts(first, n int) specOpt {
	return func(s *Desired) {
		s.Listeners = nil
		for i := range n {
			s.Listeners = append(s.Listeners, lbspec.Listener{Protocol: lbspec.TCP, Port: int32(first + i), NodePort: int32(30000 + first + i)})
		}
	}
}

// checkListenerQuota reads the quota only above the documented default,
// and a raised quota lets more listeners through.
func TestCheckListenerQuota(t *testing.T) {
	for _, tt := range []struct {
		name      string
		need      int
		quota     func(context.Context) int // nil: none configured
		wantErr   bool
		wantReads int
	}{
		{"at the default: no read", DefaultListenerQuota, func(context.Context) int { return 10 }, false, 0},
		{"above the default, no reader", DefaultListenerQuota + 1, nil, true, 0},
		{"above the default quota", DefaultListenerQuota + 1, func(context.Context) int { return DefaultListenerQuota }, true, 1},
		{"within a raised quota", 80, func(context.Context) int { return 100 }, false, 1},
		{"above a raised quota", 101, func(context.Context) int { return 100 }, true, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reads := 0
			o := &Ops{}
			if tt.quota != nil {
				o.listenerQuota = func(ctx context.Context) int { reads++; return tt.quota(ctx) }
			}
			err := o.checkListenerQuota(context.Background(), tt.need, "its ports alone")
			if got := err != nil; got != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err != nil && (!errors.Is(err, ErrListenerQuota) || !strings.Contains(err.Error(), QuotaListener) ||
				!strings.Contains(err.Error(), fmt.Sprintf("%d listeners", tt.need))) {
				t.Errorf("err = %q, want ErrListenerQuota naming %s and %d listeners", err, QuotaListener, tt.need)
			}
			if reads != tt.wantReads {
				t.Errorf("quota read %d times, want %d", reads, tt.wantReads)
			}
		})
	}
}

// Against cloudsim, which enforces TOTAL_LISTENER_QUOTA (50): what would
// overflow it is refused before any write, and what already works stays.
func TestEnsureListenerQuota(t *testing.T) {
	foreign := func(env *clbEnv, n int) string {
		id := env.addLB(testVPC, map[string]string{"team": "web"})
		for i := range n {
			env.addListener(id, fmt.Sprintf("theirs-%d", i), "TCP", 20000+i)
		}
		return id
	}
	for _, tt := range []struct {
		name string
		// setup prepares the cloud and returns the spec to ensure and the
		// CLB to look at afterwards ("" : the Service's own).
		setup   func(t *testing.T, env *clbEnv, o *Ops) (*Desired, string)
		wantErr bool
		// listeners on the CLB afterwards; -1: no CLB at all.
		wantListeners int
	}{
		{"new Service with 51 ports: no CLB", func(_ *testing.T, _ *clbEnv, _ *Ops) (*Desired, string) {
			return testSpec(withTCPPorts(1000, 51)), ""
		}, true, -1},
		{"new Service with 50 ports", func(_ *testing.T, _ *clbEnv, _ *Ops) (*Desired, string) {
			return testSpec(withTCPPorts(1000, 50)), ""
		}, false, 50},
		{"working Service grows to 51 ports: kept as it is", func(t *testing.T, _ *clbEnv, o *Ops) (*Desired, string) {
			mustEnsure(t, o, testSpec())
			return testSpec(withTCPPorts(1000, 51)), ""
		}, true, 3},
		{"adopted CLB with 45 other listeners, 6 ports", func(_ *testing.T, env *clbEnv, _ *Ops) (*Desired, string) {
			id := foreign(env, 45)
			return testSpec(withAdopt(id), withTCPPorts(1000, 6)), id
		}, true, 45},
		{"adopted CLB with 45 other listeners, 5 ports", func(_ *testing.T, env *clbEnv, _ *Ops) (*Desired, string) {
			id := foreign(env, 45)
			return testSpec(withAdopt(id), withTCPPorts(1000, 5)), id
		}, false, 50},
		{"full CLB, 5 ports moved: deleted before created", func(t *testing.T, _ *clbEnv, o *Ops) (*Desired, string) {
			mustEnsure(t, o, testSpec(withTCPPorts(1000, 50)))
			return testSpec(withTCPPorts(1005, 50)), ""
		}, false, 50},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := newCLBEnv(t)
			o := newTestOps(env)
			spec, lbID := tt.setup(t, env, o)
			env.resetCalls()
			_, err := o.Ensure(context.Background(), spec)
			if tt.wantErr {
				if !errors.Is(err, ErrListenerQuota) {
					t.Fatalf("Ensure = %v, want ErrListenerQuota", err)
				}
				if w := env.writes(); len(w) != 0 {
					t.Errorf("writes %v, want none", w)
				}
			} else if err != nil {
				t.Fatalf("Ensure: %v", err)
			}
			if lbID == "" {
				if ids := env.lbIDs(); len(ids) > 0 {
					lbID = ids[0]
				}
			}
			got := -1
			if lbID != "" {
				got = len(env.lb(lbID).Listeners)
			}
			if got != tt.wantListeners {
				t.Errorf("listeners on the CLB = %d, want %d", got, tt.wantListeners)
			}
			if acts := env.actions(); slices.Contains(acts, "DeleteListener") &&
				slices.Index(acts, "DeleteListener") > slices.Index(acts, "CreateListener") {
				t.Errorf("calls %v: on a full CLB the deletions must go first", acts)
			}
		})
	}
}
