package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccmkit/ccm/bench/lb"
	"github.com/ccmkit/ccm/bench/nodes"
	"github.com/ccmkit/ccm/bench/report"
)

// Every section with results gets its plot, and the SVGs hold the numbers'
// labels.
func TestWritePlotsNewSections(t *testing.T) {
	dir := t.TempDir()
	doc := document{
		Fanout: &lb.FanoutResult{Services: 100, BurstNodes: 100, FloorSeconds: 5, FloorWrites: 100,
			FanoutSpread: lb.FanoutSpread{Seconds: report.Stats{Min: 6.2, Median: 6.6, Max: 6.7, Runs: 3}, Writes: report.Stats{Min: 100, Median: 100, Max: 100, Runs: 3}}},
		OCIFanout: &lb.OCIFanoutResult{Services: 100, BurstNodes: 100, FloorSeconds: 5.05, FloorWrites: 100,
			FanoutSpread: lb.FanoutSpread{Seconds: report.Stats{Min: 11.8, Median: 12, Max: 12.1, Runs: 3}, Writes: report.Stats{Min: 120, Median: 120, Max: 120, Runs: 3}}},
		OCINodes: &nodes.OCIResult{Nodes: 5000, CallBudget: 200,
			CallsByAction: map[string]int64{"ListInstances": 51, "ListVnicAttachments": 51, "ListPrivateIps": 50}},
	}
	written, err := writePlots(dir, doc)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{plotFanout: "CLB writes, floor", plotOCIFanout: "UpdateBackendSet, floor", plotCallsOCI: "ListVnicAttachments"} {
		path := filepath.Join(dir, name)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s not written (wrote %v): %v", name, written, err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %q", name, want)
		}
	}
}
