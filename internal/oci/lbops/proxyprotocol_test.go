package lbops

import (
	"context"
	"slices"
	"testing"

	"github.com/ccmkit/ccm/internal/lb/lbspec"
)

// TestProxyProtocol: the Service's PROXY protocol version reaches the
// listeners at creation (LB backendTcpProxyProtocolVersion, NLB
// isPpv2Enabled on TCP listeners only); each change, on or off, is one
// UpdateListener per listener that changes, and the resync after it writes
// nothing. Turning it off on an LB keeps the listener's idle timeout.
func TestProxyProtocol(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kind  Kind
		steps []int // the versions, the first at creation
	}{
		{"lb v1 off v2", KindLB, []int{1, 0, 2}},
		{"lb off v2 v1", KindLB, []int{0, 2, 1}},
		{"nlb v2 off v2", KindNLB, []int{2, 0, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newLBEnv(t)
			o := newTestOps(env)
			d := desired(tc.kind, "10.0.0.1")
			if tc.kind == KindNLB {
				d.Listeners = append(d.Listeners, lbspec.Listener{Protocol: lbspec.UDP, Port: 53, NodePort: 30053})
			}
			for i, v := range tc.steps {
				d.ProxyProtocol = v
				env.resetWrites()
				if _, err := o.Ensure(context.Background(), d); err != nil {
					t.Fatalf("version %d: %v", v, err)
				}
				want := []string{"UpdateListener TCP-80"}
				if i == 0 {
					want = []string{map[Kind]string{KindLB: "CreateLoadBalancer", KindNLB: "CreateNetworkLoadBalancer"}[tc.kind]}
				}
				if w := env.writesOf(); !slices.Equal(w, want) {
					t.Errorf("version %d: writes %v, want %v", v, w, want)
				}
				for _, l := range env.only(tc.kind).Listeners {
					wantV := v
					if l.Protocol == "UDP" {
						wantV = 0 // OCI's proxy protocol is for TCP listeners
					}
					if l.ProxyProtocolVersion != wantV {
						t.Errorf("version %d: listener %s has %d", v, l.Name, l.ProxyProtocolVersion)
					}
					if tc.kind == KindLB && i > 0 && l.IdleTimeoutSeconds != 300 {
						t.Errorf("version %d: listener %s idle timeout %d s, want OCI's 300 kept", v, l.Name, l.IdleTimeoutSeconds)
					}
				}
				env.resetWrites()
				if _, err := o.Ensure(context.Background(), d); err != nil {
					t.Fatal(err)
				}
				if w := env.writesOf(); len(w) != 0 {
					t.Errorf("version %d: an unchanged resync wrote %v", v, w)
				}
			}
		})
	}
}

// TestProxyProtocolWithIdleTimeout: a managed idle timeout goes with the
// version in one connection configuration; changing either is one write.
func TestProxyProtocolWithIdleTimeout(t *testing.T) {
	env := newLBEnv(t)
	o := newTestOps(env)
	d := desired(KindLB, "10.0.0.1")
	d.IdleTimeout, d.ProxyProtocol = 120e9, 2
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	check := func(idle int64, v int) {
		t.Helper()
		ls := env.only(KindLB).Listeners
		if len(ls) != 1 || ls[0].IdleTimeoutSeconds != idle || ls[0].ProxyProtocolVersion != v {
			t.Fatalf("listeners %+v, want idle %d s and version %d", ls, idle, v)
		}
	}
	check(120, 2)
	d.IdleTimeout = 0 // unmanaged: OCI's 120 stays
	env.resetWrites()
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if w := env.writesOf(); len(w) != 0 {
		t.Errorf("unmanaging the idle timeout wrote %v", w)
	}
	d.ProxyProtocol = 1
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	check(120, 1)
}
