package lbsubset

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

type node struct{ name, zone string }

func nodeOf(n node) (string, string) { return n.name, n.zone }

// cluster makes n nodes spread over zones with the given weights.
func cluster(r *rand.Rand, n int, zones []string) []node {
	out := make([]node, n)
	for i := range out {
		out[i] = node{name: fmt.Sprintf("node-%04d", i), zone: zones[r.IntN(len(zones))]}
	}
	return out
}

func names(ns []node) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.name
	}
	return out
}

func perZone(ns []node) map[string]int {
	out := map[string]int{}
	for _, n := range ns {
		out[n.zone]++
	}
	return out
}

// moved counts the nodes of before that are not in after, except the
// ones in ignore.
func moved(before, after []node, ignore ...string) int {
	in := map[string]bool{}
	for _, n := range after {
		in[n.name] = true
	}
	c := 0
	for _, n := range before {
		if !in[n.name] && !slices.Contains(ignore, n.name) {
			c++
		}
	}
	return c
}

func TestSelectKeepsAllUnderTheLimit(t *testing.T) {
	ns := cluster(rand.New(rand.NewPCG(1, 1)), 10, []string{"a", "b"})
	for _, limit := range []int{0, -1, 10, 11, 500} {
		if got := Select(ns, "uid", limit, nodeOf); !slices.Equal(got, ns) {
			t.Errorf("limit %d: %d nodes kept, want all 10 in order", limit, len(got))
		}
	}
}

func TestSelectDeterministicAndOrdered(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	ns := cluster(r, 150, []string{"gz-3", "gz-4", "gz-6"})
	a := Select(ns, "uid-1", 100, nodeOf)
	if len(a) != 100 {
		t.Fatalf("chose %d nodes, want 100", len(a))
	}
	// The same inputs in another order choose the same nodes.
	shuffled := slices.Clone(ns)
	r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	b := Select(shuffled, "uid-1", 100, nodeOf)
	sa, sb := names(a), names(b)
	slices.Sort(sb)
	if !slices.Equal(sa, sb) {
		t.Fatal("the choice depends on the order of the input")
	}
	if !slices.IsSorted(sa) {
		t.Fatal("the chosen nodes are not in input order")
	}
	if again := names(Select(ns, "uid-1", 100, nodeOf)); !slices.Equal(again, sa) {
		t.Fatal("two calls chose differently")
	}
}

// Zone shares differ by at most one between zones that still have nodes
// left; a zone smaller than its share gives every node.
func TestSelectZoneBalance(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for trial := range 500 {
		zones := []string{"z1", "z2", "z3", "z4", "z5"}[:1+r.IntN(5)]
		var ns []node
		for zi, z := range zones {
			size := r.IntN(60)
			if zi == 0 {
				size += 1
			}
			for i := range size {
				ns = append(ns, node{name: fmt.Sprintf("%s-%03d", z, i), zone: z})
			}
		}
		limit := 1 + r.IntN(len(ns)+5)
		got := Select(ns, fmt.Sprintf("uid-%d", trial), limit, nodeOf)
		if want := min(limit, len(ns)); len(got) != want {
			t.Fatalf("trial %d: chose %d, want %d", trial, len(got), want)
		}
		have, chosen := perZone(ns), perZone(got)
		for _, a := range zones {
			for _, b := range zones {
				if chosen[a] < chosen[b]-1 && chosen[a] != have[a] {
					t.Fatalf("trial %d (limit %d): zone %s has %d of %d, zone %s has %d: not balanced within 1",
						trial, limit, a, chosen[a], have[a], b, chosen[b])
				}
			}
		}
	}
}

// Adding or removing one node moves at most one other target.
func TestSelectMinimalChurn(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	zones := []string{"gz-3", "gz-4", "gz-6"}
	worstAdd, worstRemove, totalMoved, changes := 0, 0, 0, 0
	for trial := range 300 {
		ns := cluster(r, 101+r.IntN(150), zones)
		// Skew the zones sometimes, so that small zones are exhausted.
		if trial%3 == 0 {
			for i := range ns[:len(ns)/2] {
				ns[i].zone = "gz-3"
			}
		}
		key := fmt.Sprintf("uid-%d", trial)
		limit := 100
		before := Select(ns, key, limit, nodeOf)

		added := append(slices.Clone(ns), node{name: "node-new", zone: zones[r.IntN(len(zones))]})
		m := moved(before, Select(added, key, limit, nodeOf))
		worstAdd, totalMoved, changes = max(worstAdd, m), totalMoved+m, changes+1

		gone := r.IntN(len(ns))
		removed := slices.Delete(slices.Clone(ns), gone, gone+1)
		m = moved(before, Select(removed, key, limit, nodeOf), ns[gone].name)
		worstRemove, totalMoved, changes = max(worstRemove, m), totalMoved+m, changes+1
	}
	t.Logf("targets moved per node change: worst %d on add, %d on removal; %.2f on average over %d changes",
		worstAdd, worstRemove, float64(totalMoved)/float64(changes), changes)
	if worstAdd > 1 || worstRemove > 1 {
		t.Fatalf("a node change moved more than one other target (add %d, remove %d)", worstAdd, worstRemove)
	}
}

// Different Services choose different subsets, and together they use every
// node about equally.
func TestSelectSpreadsServices(t *testing.T) {
	ns := cluster(rand.New(rand.NewPCG(5, 5)), 150, []string{"gz-3", "gz-4", "gz-6"})
	const services, limit = 300, 100
	uses := map[string]int{}
	first := names(Select(ns, "svc-0", limit, nodeOf))
	identical := 0
	for s := range services {
		got := names(Select(ns, fmt.Sprintf("svc-%d", s), limit, nodeOf))
		for _, n := range got {
			uses[n]++
		}
		if s > 0 && slices.Equal(got, first) {
			identical++
		}
	}
	if identical > 0 {
		t.Errorf("%d Services chose exactly the first Service's subset", identical)
	}
	// Zone balance favors the nodes of smaller zones, so compare each node
	// with the others of its zone.
	byZone := map[string][]int{}
	for _, n := range ns {
		byZone[n.zone] = append(byZone[n.zone], uses[n.name])
	}
	for zone, u := range byZone {
		sum := 0
		for _, v := range u {
			sum += v
		}
		mean := float64(sum) / float64(len(u))
		lo, hi := slices.Min(u), slices.Max(u)
		t.Logf("zone %s: %d nodes, each a target of %d to %d of %d Services (mean %.0f)", zone, len(u), lo, hi, services, mean)
		if float64(lo) < 0.8*mean || float64(hi) > 1.2*mean {
			t.Errorf("zone %s: uneven spread: a node backs %d to %d Services, want within 20%% of %.0f", zone, lo, hi, mean)
		}
	}
}
