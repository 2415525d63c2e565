package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/ccmkit/ccm/bench/lb"
	"github.com/ccmkit/ccm/bench/nodes"
	"github.com/ccmkit/ccm/bench/report"
)

// --update keeps what this run does not measure, with the date it was
// measured; a section kept twice keeps its first date.
func TestPreviousKeepsOtherSections(t *testing.T) {
	path := filepath.Join(t.TempDir(), "latest.json")
	doc, kept, err := previous(path, []string{"lb"})
	if err != nil || doc.Result != nil || kept != nil {
		t.Fatalf("missing file: %+v %v %v, want an empty document", doc, kept, err)
	}
	first := document{Result: &nodes.Result{Nodes: 5000, InitSeconds: 40}, Fanout: &lb.FanoutResult{Services: 100},
		Run: runInfo{Sections: []string{"nodes", "fanout"}, Started: "2026-11-26T00:41:00Z"}}
	if err := report.WriteJSON(path, first); err != nil {
		t.Fatal(err)
	}
	// A run of fanout and lb keeps the node section, with its date.
	doc, kept, err = previous(path, []string{"fanout", "lb"})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Result == nil || doc.Result.Nodes != 5000 || doc.Result.InitSeconds != 40 {
		t.Errorf("node section %+v, want the earlier run's", doc.Result)
	}
	if want := []keptSection{{"nodes", "2026-11-26T00:41:00Z"}}; !slices.Equal(kept, want) {
		t.Errorf("kept %+v, want %+v", kept, want)
	}
	// That file, updated again by a later run: nodes keeps its first date.
	doc.Run = runInfo{Sections: []string{"fanout", "lb"}, Kept: kept, Started: "2026-11-26T02:00:00Z"}
	doc.LB = &lb.Result{}
	if err := report.WriteJSON(path, doc); err != nil {
		t.Fatal(err)
	}
	_, kept, err = previous(path, []string{"routes"})
	if err != nil {
		t.Fatal(err)
	}
	want := []keptSection{{"nodes", "2026-11-26T00:41:00Z"}, {"lb", "2026-11-26T02:00:00Z"}, {"fanout", "2026-11-26T02:00:00Z"}}
	if !slices.Equal(kept, want) {
		t.Errorf("kept %+v, want %+v", kept, want)
	}
}

// The baseline bound is N over the limit; an --update run keeps the
// durations of the sections it keeps, and only theirs.
func TestBaselineBoundAndKeptSeconds(t *testing.T) {
	for _, c := range []struct {
		n    int
		qps  float64
		want float64
	}{{1000, 40, 25}, {5000, 40, 125}, {2000, 0, 0}} {
		if got := baselineBound(c.n, c.qps); got != c.want {
			t.Errorf("baselineBound(%d, %v) = %v, want %v", c.n, c.qps, got, c.want)
		}
	}
	got := keptSeconds(map[string]float64{"nodes": 1198, "lb": 102}, []keptSection{{Section: "nodes"}, {Section: "burst"}})
	if len(got) != 1 || got["nodes"] != 1198 {
		t.Errorf("keptSeconds = %v, want only nodes: 1198", got)
	}
}
