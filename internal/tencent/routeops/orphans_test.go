package routeops

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// gatewayAnswers answers Released from a fixed set of IPs that no instance
// holds, and counts the lookups.
type gatewayAnswers struct {
	mu       sync.Mutex
	released []string
	err      error
	asked    [][]netip.Addr
}

func (g *gatewayAnswers) Released(_ context.Context, ips []netip.Addr) ([]netip.Addr, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.asked = append(g.asked, slices.Clone(ips))
	if g.err != nil {
		return nil, g.err
	}
	var out []netip.Addr
	for _, ip := range ips {
		if slices.Contains(g.released, ip.String()) {
			out = append(out, ip)
		}
	}
	return out, nil
}

func (g *gatewayAnswers) lookups() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.asked)
}

// After a restart, the route of a node deleted while the CCM was down is
// reclaimed only when its gateway is provably free; anything else stays
// foreign.
func TestListReclaimsOrphans(t *testing.T) {
	tests := []struct {
		name        string
		clusterCIDR netip.Prefix // zero: the table's CIDR
		released    []string
		err         error
		routes      []Route
		nodes       nodeMap
		want        []string
		wantLookups int
	}{
		{name: "a released gateway: reclaimed as a deleted node's route", released: []string{"10.0.0.9"},
			routes: []Route{rt("10.244.1.0/24", "10.0.0.1"), rt("10.244.9.0/24", "10.0.0.9")}, nodes: nodeMap{"10.0.0.1": "n1"},
			want: []string{"10.244.1.0/24 -> 10.0.0.1@n1", "10.244.9.0/24 -> 10.0.0.9@" + OrphanNode + "(gone)"}, wantLookups: 1},
		{name: "a gateway an instance holds: foreign",
			routes: []Route{rt("10.244.9.0/24", "10.0.0.9")}, nodes: nodeMap{}, wantLookups: 1},
		{name: "the lookup fails: foreign", err: errors.New("throttled"),
			routes: []Route{rt("10.244.9.0/24", "10.0.0.9")}, nodes: nodeMap{}, wantLookups: 1},
		// A TKE table holds only routes inside its own CIDR
		// (CidrOutOfRouteTable), so the cluster CIDR is the narrower one.
		{name: "outside the cluster CIDR: not even looked up", clusterCIDR: mustPrefix("10.244.0.0/17"), released: []string{"10.0.0.9"},
			routes: []Route{rt("10.244.200.0/24", "10.0.0.9")}, nodes: nodeMap{}},
		{name: "every route has a node: nothing to look up",
			routes: []Route{rt("10.244.1.0/24", "10.0.0.1")}, nodes: nodeMap{"10.0.0.1": "n1"}, want: []string{"10.244.1.0/24 -> 10.0.0.1@n1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &gatewayAnswers{released: tc.released, err: tc.err}
			m, _ := newManager(newRouteEnv(t, tc.routes...).tke(), Options{ClusterCIDR: tc.clusterCIDR, Gateways: g})
			got, err := m.List(context.Background(), tc.nodes)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(names(got), tc.want) {
				t.Errorf("List = %v, want %v", names(got), tc.want)
			}
			if n := g.lookups(); n != tc.wantLookups {
				t.Errorf("%d lookups, want %d", n, tc.wantLookups)
			}
		})
	}
}

// A reclaimed route can be deleted; a foreign gateway is looked up again
// only after orphanRecheck, and reclaimed once it is released.
func TestOrphanDeleteAndRecheck(t *testing.T) {
	ctx := context.Background()
	orphan, foreign := rt("10.244.9.0/24", "10.0.0.9"), rt("10.244.8.0/24", "10.0.0.8")
	e := newRouteEnv(t, orphan, foreign)
	g := &gatewayAnswers{released: []string{"10.0.0.9"}}
	m, clk := newManager(e.tke(), Options{Gateways: g})
	if _, err := m.List(ctx, nodeMap{}); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(ctx, orphan); err != nil || e.has(orphan) {
		t.Fatalf("Delete of the reclaimed route: %v (still there: %v)", err, e.has(orphan))
	}
	if err := m.Delete(ctx, foreign); err == nil || !e.has(foreign) {
		t.Fatalf("Delete of a foreign route = %v; it must be refused", err)
	}

	clk.Advance(time.Minute)
	if _, err := m.List(ctx, nodeMap{}); err != nil {
		t.Fatal(err)
	}
	if n := g.lookups(); n != 1 {
		t.Fatalf("%d lookups a minute later, want 1 (the foreign gateway is not re-read yet)", n)
	}
	g.mu.Lock()
	g.released = append(g.released, "10.0.0.8") // its instance is gone now
	g.mu.Unlock()
	clk.Advance(orphanRecheck)
	got, err := m.List(ctx, nodeMap{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"10.244.8.0/24 -> 10.0.0.8@" + OrphanNode + "(gone)"}; !slices.Equal(names(got), want) {
		t.Errorf("List after the recheck = %v, want %v", names(got), want)
	}
}

// A new node's route blocked by an orphan (an overlapping CIDR, or the
// same gateway) is created once the orphan is deleted, in the same call; a
// route blocked by a live instance's route is still refused with the hint.
func TestCreateClearsOrphanInTheWay(t *testing.T) {
	tests := []struct {
		name     string
		existing Route
		released []string
		want     Route
		wantErr  string
	}{
		{"an orphan with the pod CIDR", rt("10.244.9.0/24", "10.0.0.9"), []string{"10.0.0.9"}, rt("10.244.9.0/24", "10.0.0.10"), ""},
		{"an orphan with an overlapping CIDR", rt("10.244.9.0/25", "10.0.0.9"), []string{"10.0.0.9"}, rt("10.244.9.0/24", "10.0.0.10"), ""},
		{"a live instance's route", rt("10.244.9.0/24", "10.0.0.9"), nil, rt("10.244.9.0/24", "10.0.0.10"),
			"that route is not managed by this cluster"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newRouteEnv(t, tc.existing)
			m, _ := newManager(e.tke(), Options{Gateways: &gatewayAnswers{released: tc.released}})
			err := m.Create(context.Background(), "new", tc.want)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Create: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Create = %v, want %q", err, tc.wantErr)
			}
			if tc.wantErr == "" && (!e.has(tc.want) || e.has(tc.existing)) {
				t.Errorf("routes %v, want the new route and not the orphan", e.routes())
			}
			if tc.wantErr != "" && !e.has(tc.existing) {
				t.Error("a live instance's route was deleted")
			}
		})
	}
}
