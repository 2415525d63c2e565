package routeops

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

// The gateways are looked up with the provider's own Gateways, CVM
// DescribeInstances against the same cloudsim: a gateway is released when
// no instance of the VPC holds it, or only a TERMINATING one.

// After a restart, the route of a node deleted while the CCM was down is
// reclaimed only when its gateway is provably free; anything else stays
// foreign.
func TestListReclaimsOrphans(t *testing.T) {
	tests := []struct {
		name        string
		clusterCIDR netip.Prefix // zero: the table's CIDR
		held        []string     // gateways an instance holds (the others are released)
		failCode    string       // DescribeInstances answers this error
		routes      []Route
		nodes       nodeMap
		want        []string
		wantLookups int
	}{
		{name: "a released gateway: reclaimed as a deleted node's route",
			routes: []Route{rt("10.244.1.0/24", "10.0.0.1"), rt("10.244.9.0/24", "10.0.0.9")}, nodes: nodeMap{"10.0.0.1": "n1"},
			want: []string{"10.244.1.0/24 -> 10.0.0.1@n1", "10.244.9.0/24 -> 10.0.0.9@" + OrphanNode + "(gone)"}, wantLookups: 1},
		{name: "a gateway an instance holds: foreign", held: []string{"10.0.0.9"},
			routes: []Route{rt("10.244.9.0/24", "10.0.0.9")}, nodes: nodeMap{}, wantLookups: 1},
		{name: "the lookup fails: foreign", failCode: "RequestLimitExceeded",
			routes: []Route{rt("10.244.9.0/24", "10.0.0.9")}, nodes: nodeMap{}, wantLookups: 1},
		// A TKE table holds only routes inside its own CIDR
		// (CidrOutOfRouteTable), so the cluster CIDR is the narrower one.
		{name: "outside the cluster CIDR: not even looked up", clusterCIDR: mustPrefix("10.244.0.0/17"),
			routes: []Route{rt("10.244.200.0/24", "10.0.0.9")}, nodes: nodeMap{}},
		{name: "every route has a node: nothing to look up",
			routes: []Route{rt("10.244.1.0/24", "10.0.0.1")}, nodes: nodeMap{"10.0.0.1": "n1"}, want: []string{"10.244.1.0/24 -> 10.0.0.1@n1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newRouteEnv(t, tc.routes...)
			e.addInstances(tc.held...)
			if tc.failCode != "" {
				e.fail("DescribeInstances", tc.failCode, 0)
			}
			m, _ := newManager(e.tke(), Options{ClusterCIDR: tc.clusterCIDR, Gateways: e.gateways()})
			got, err := m.List(context.Background(), tc.nodes)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(names(got), tc.want) {
				t.Errorf("List = %v, want %v", names(got), tc.want)
			}
			if n := e.count("DescribeInstances"); n != tc.wantLookups {
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
	holder := e.addInstances("10.0.0.8")[0] // 10.0.0.9 is released
	m, clk := newManager(e.tke(), Options{Gateways: e.gateways()})
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
	if n := e.count("DescribeInstances"); n != 1 {
		t.Fatalf("%d lookups a minute later, want 1 (the foreign gateway is not re-read yet)", n)
	}
	// Its instance is being released now.
	if err := e.sim.SetInstanceState(holder.ID, "TERMINATING"); err != nil {
		t.Fatal(err)
	}
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
		held     []string // gateways an instance holds
		want     Route
		wantErr  string
	}{
		{"an orphan with the pod CIDR", rt("10.244.9.0/24", "10.0.0.9"), nil, rt("10.244.9.0/24", "10.0.0.10"), ""},
		{"an orphan with an overlapping CIDR", rt("10.244.9.0/25", "10.0.0.9"), nil, rt("10.244.9.0/24", "10.0.0.10"), ""},
		{"a live instance's route", rt("10.244.9.0/24", "10.0.0.9"), []string{"10.0.0.9"}, rt("10.244.9.0/24", "10.0.0.10"),
			"that route is not managed by this cluster"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newRouteEnv(t, tc.existing)
			e.addInstances(tc.held...)
			m, _ := newManager(e.tke(), Options{Gateways: e.gateways()})
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
