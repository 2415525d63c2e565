package lbops

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ccmkit/ccm/internal/lb/lbspec"
)

// ours lists the rules of a security list that carry the Service's marker,
// as "in|out peer proto port".
func ours(env *lbEnv, id string) []string {
	sl := env.securityList(id)
	var out []string
	for _, r := range sl.IngressSecurityRules {
		if deref(r.Description) == "ccmkit.io/service-uid=uid-1" {
			out = append(out, fmt.Sprintf("in %s %s %d", *r.Source, *r.Protocol, portOf(r.TcpOptions, r.UdpOptions)))
		}
	}
	for _, r := range sl.EgressSecurityRules {
		if deref(r.Description) == "ccmkit.io/service-uid=uid-1" {
			out = append(out, fmt.Sprintf("out %s %s %d", *r.Destination, *r.Protocol, portOf(r.TcpOptions, r.UdpOptions)))
		}
	}
	slices.Sort(out)
	return out
}

func TestSecurityListModes(t *testing.T) {
	tests := []struct {
		name               string
		mode               string
		kind               Kind
		preserve           bool
		udp                bool
		hcPort             int32
		wantLB, wantNodes  []string
		nodesUntouched     bool
		otherSubnetTouched bool
	}{
		{name: "Frontend: the listener only", mode: SecurityListFrontend, kind: KindLB,
			wantLB: []string{"in 0.0.0.0/0 6 80"}, nodesUntouched: true},
		{name: "All: the listener, and LB subnet to node subnet on the NodePort", mode: SecurityListAll, kind: KindLB,
			wantLB:    []string{"in 0.0.0.0/0 6 80", "out 10.0.0.0/24 6 30080"},
			wantNodes: []string{"in 10.0.100.0/24 6 30080"}},
		{name: "All with a health check port", mode: SecurityListAll, kind: KindLB, hcPort: 10256,
			wantLB:    []string{"in 0.0.0.0/0 6 80", "out 10.0.0.0/24 6 10256", "out 10.0.0.0/24 6 30080"},
			wantNodes: []string{"in 10.0.100.0/24 6 10256", "in 10.0.100.0/24 6 30080"}},
		{name: "All, NLB preserving the source: the nodes admit the clients", mode: SecurityListAll, kind: KindNLB, preserve: true,
			wantLB:    []string{"in 0.0.0.0/0 6 80", "out 10.0.0.0/24 6 30080"},
			wantNodes: []string{"in 0.0.0.0/0 6 30080", "in 10.0.100.0/24 6 30080"}},
		{name: "All, a UDP listener: the UDP NodePort and kube-proxy's health port", mode: SecurityListAll, kind: KindNLB, udp: true,
			wantLB:    []string{"in 0.0.0.0/0 17 53", "out 10.0.0.0/24 17 30053", "out 10.0.0.0/24 6 10256"},
			wantNodes: []string{"in 10.0.100.0/24 17 30053", "in 10.0.100.0/24 6 10256"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newLBEnv(t)
			o := newTestOps(env)
			d := desired(tc.kind, "10.0.0.1", "10.0.0.2")
			d.SecurityListMode, d.PreserveSource, d.HealthCheck.Port = tc.mode, tc.preserve, tc.hcPort
			if tc.udp {
				d.Listeners = []lbspec.Listener{{Protocol: lbspec.UDP, Port: 53, NodePort: 30053}}
			}
			if _, err := o.Ensure(context.Background(), d); err != nil {
				t.Fatal(err)
			}
			if got := ours(env, slA); !slices.Equal(got, tc.wantLB) {
				t.Errorf("LB subnet rules = %v, want %v", got, tc.wantLB)
			}
			if got := ours(env, slNodes); !slices.Equal(got, tc.wantNodes) {
				t.Errorf("node subnet rules = %v, want %v", got, tc.wantNodes)
			}
			if got := ours(env, slB); len(got) != 0 {
				t.Errorf("a subnet without nodes got rules: %v", got)
			}
			w := env.writesOf()
			if tc.nodesUntouched && slices.Contains(w, "UpdateSecurityList "+slNodes) {
				t.Errorf("mode %s wrote the node subnet's list", tc.mode)
			}
			if slices.Contains(w, "UpdateSecurityList "+slB) {
				t.Error("a list with nothing of ours to change was written")
			}
			// Other rules stay; an unchanged resync writes nothing.
			if rules := env.securityList(slA).IngressSecurityRules; *rules[0].Description != "someone else's" {
				t.Errorf("someone else's rule lost: %v", describe(rules))
			}
			env.resetWrites()
			if _, err := o.Ensure(context.Background(), d); err != nil {
				t.Fatal(err)
			}
			if w := env.writesOf(); len(w) != 0 {
				t.Errorf("unchanged resync wrote %v", w)
			}
			if err := o.Delete(context.Background(), d); err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{slA, slB, slNodes} {
				if got := ours(env, id); len(got) != 0 {
					t.Errorf("after delete, %s keeps %v", id, got)
				}
			}
		})
	}
}

func TestSecurityListAllMovesAndRefuses(t *testing.T) {
	env := newLBEnv(t)
	o := newTestOps(env)
	d := desired(KindLB, "10.0.0.1")
	d.SecurityListMode = SecurityListAll
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	// The node moves to subnet b: its rules follow, the old ones go.
	d.Backends = []lbspec.Backend{{NodeName: "n", Address: "10.0.101.7"}}
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if got := ours(env, slNodes); len(got) != 0 {
		t.Errorf("the old node subnet keeps %v", got)
	}
	if got, want := ours(env, slB), []string{"in 10.0.100.0/24 6 30080"}; !slices.Equal(got, want) {
		t.Errorf("the new node subnet has %v, want %v", got, want)
	}
	// A node outside the VCN's subnets: a clear error, nothing half done.
	d.Backends = append(d.Backends, lbspec.Backend{NodeName: "far", Address: "192.168.9.9"})
	_, err := o.Ensure(context.Background(), d)
	if err == nil || !strings.Contains(err.Error(), "node far (192.168.9.9) is in no subnet of VCN") || !strings.Contains(err.Error(), "mode Frontend") {
		t.Fatalf("err = %v", err)
	}
}
