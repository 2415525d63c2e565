//go:build e2e

package nodes

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccmkit/ccm/bench/report"
)

// TestBenchSmoke runs the whole benchmark at a small size and checks only
// correctness and the call budget, never time: every node initialized by
// both CCMs, the floor measured, a full sync that saw every node within
// 2*ceil(N/100) calls, no RequestLimitExceeded, no node deleted while
// NotReady, and a baseline that really made one call per node. make test
// runs it.
func TestBenchSmoke(t *testing.T) {
	dir, err := os.MkdirTemp("", "ccm-bench-smoke-")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("working directory (logs): %s", dir)
	cfg := DefaultConfig()
	cfg.Nodes = 200
	cfg.CCMBinary = ccmBinary(t, dir)
	cfg.WorkDir = dir
	cfg.CacheTTL = "5s" // shorter than the sync period, as in production
	cfg.StatusSyncEvery = 12 * time.Second
	cfg.NotReadyFor = 10 * time.Second
	cfg.PhaseTimeout = 3 * time.Minute
	cfg.Repeats = 1 // correctness only: one pair is enough

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := Run(ctx, cfg, testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	res.Print(&table)
	t.Log(table.String())
	if err := report.WriteJSON(filepath.Join(dir, "results.json"), res); err != nil {
		t.Fatal(err)
	}

	if res.InitSeconds <= 0 || res.FloorSeconds <= 0 || res.BaselineInitSeconds <= 0 {
		t.Errorf("a phase was not measured: %+v", res)
	}
	if res.DescribeCallsInit < 1 || res.DescribeCallsInit > res.CallBudget {
		t.Errorf("initialization took %d DescribeInstances calls, want 1..%d", res.DescribeCallsInit, res.CallBudget)
	}
	if res.SyncNodes != cfg.Nodes || res.SyncCalls < 1 || res.SyncCalls > res.CallBudget {
		t.Errorf("status sync of %d nodes took %d calls, want all %d nodes in 1..%d calls",
			res.SyncNodes, res.SyncCalls, cfg.Nodes, res.CallBudget)
	}
	if res.ThrottledResponses != 0 {
		t.Errorf("cloudsim answered RequestLimitExceeded %d times", res.ThrottledResponses)
	}
	if res.LifecycleCalls < 1 {
		t.Errorf("the lifecycle controller made no call for %d NotReady nodes", res.LifecycleNotReady)
	}
	if res.BaselineDescribeCallsInit < int64(cfg.Nodes) {
		t.Errorf("baseline made %d calls for %d nodes; it is meant to make one per node", res.BaselineDescribeCallsInit, cfg.Nodes)
	}
	if res.PeakRSSMiB <= 0 || res.CCMCPUSeconds <= 0 {
		t.Errorf("CCM resource use not measured: %.0f MiB, %.1f s", res.PeakRSSMiB, res.CCMCPUSeconds)
	}
}

// ccmBinary is $CCM_BINARY (make test builds it), or a fresh build.
func ccmBinary(t *testing.T, dir string) string {
	if bin := os.Getenv("CCM_BINARY"); bin != "" {
		return bin
	}
	bin := filepath.Join(dir, "cloud-controller-manager")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/cloud-controller-manager")
	cmd.Dir = repoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build cloud-controller-manager: %v\n%s", err, out)
	}
	return bin
}

// testWriter sends the benchmark's output to the test log; the table is
// written in pieces, so it is logged whole at the end.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
