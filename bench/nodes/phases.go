package nodes

import (
	"context"
	"fmt"
	"time"

	"github.com/ccmkit/ccm/internal/testcluster"
)

// floor: a bare client PATCHes the N registered nodes with the CCM's fields.
func (b *bench) floor(ctx context.Context, res *Result) error {
	secs, err := floorRun(ctx, b, "floor", b.nodes, b.register, b.patchLikeTheCCM)
	if err != nil {
		return err
	}
	res.FloorRuns = append(res.FloorRuns, secs)
	return nil
}

// upstreamFloor: the floor plus the Event upstream's node controller posts
// for every node it initializes ("Synced"), the one write per node the
// bare-PATCH floor does not make and we cannot leave out.
func (b *bench) upstreamFloor(ctx context.Context, res *Result) error {
	secs, err := floorRun(ctx, b, "upstream floor", b.nodes, b.register, func(ctx context.Context, n nodeInfo) error {
		if err := b.patchLikeTheCCM(ctx, n); err != nil {
			return err
		}
		return b.postSyncedEvent(ctx, n.privateIP)
	})
	if err != nil {
		return err
	}
	res.UpstreamFloorRuns = append(res.UpstreamFloorRuns, secs)
	return nil
}

// floorRun registers the nodes, then PATCHes each with patch as fast as
// the apiserver allows, and returns the seconds until the tracker saw every
// one initialized; it deletes the nodes after. name marks the log lines.
func floorRun[N any](ctx context.Context, b *bench, name string, nodes []N, register func(context.Context) error, patch func(context.Context, N) error) (float64, error) {
	b.logf("%s: registering %d nodes, then patching them as fast as the apiserver allows", name, len(nodes))
	if err := register(ctx); err != nil {
		return 0, err
	}
	start := time.Now()
	if err := parallel(ctx, nodes, b.cfg.FloorWorkers, patch); err != nil {
		return 0, err
	}
	if err := b.tracker.waitFor(ctx, b.cfg.PhaseTimeout, "patched", func(c trackerCounts) bool {
		return c.initialized == len(nodes)
	}); err != nil {
		return 0, err
	}
	secs := time.Since(start).Seconds()
	b.logf("%s: %.1fs", name, secs)
	return secs, b.cleanUp(ctx)
}

// initialize registers the N nodes, starts the CCM and waits until every
// node is initialized. It returns the running CCM, the time from its start
// and the DescribeInstances calls made.
func (b *bench) initialize(ctx context.Context, name string, inventory bool) (*testcluster.Process, float64, int64, error) {
	if err := b.register(ctx); err != nil {
		return nil, 0, 0, err
	}
	before := b.calls.describe.Load()
	start := time.Now()
	p, err := b.startCCM(name, inventory)
	if err != nil {
		return nil, 0, 0, err
	}
	err = b.tracker.waitFor(ctx, b.cfg.PhaseTimeout, "initialized by the CCM", func(c trackerCounts) bool {
		return c.initialized == len(b.nodes)
	})
	if err != nil {
		p.Stop()
		return nil, 0, 0, fmt.Errorf("%s: %w (log: %s)", name, err, b.dir)
	}
	return p, time.Since(start).Seconds(), b.calls.describe.Load() - before, nil
}

// ours: initialization with the inventory; on the first run, then a
// steady-state status sync and 10% of the nodes NotReady, then the CCM's
// resource use. Each run has a fresh CCM process.
func (b *bench) ours(ctx context.Context, res *Result, run int) error {
	name := "ccm"
	if run > 0 {
		name = fmt.Sprintf("ccm-run%d", run+1)
	}
	b.logf("ours (run %d): registering %d nodes, then starting the CCM", run+1, len(b.nodes))
	p, secs, calls, err := b.initialize(ctx, name, true)
	if err != nil {
		return err
	}
	defer p.Stop()
	res.InitRuns = append(res.InitRuns, secs)
	// The budget holds for every run: the worst counts.
	res.DescribeCallsInit = max(res.DescribeCallsInit, calls)
	b.logf("ours (run %d): initialized in %.1fs with %d DescribeInstances calls", run+1, secs, calls)
	if run > 0 || b.cfg.InitOnly {
		return b.stopAndMeasure(ctx, p, res)
	}

	// A full status sync with a cold inventory, as in production where the
	// 5-minute sync outlasts the cache: the first sync after
	// initialization, a whole period after the CCM started, when the
	// start's listing and every entry are older than the TTL. (The second
	// sync, measured until 2026-11-26, starts as cold and cost the same.)
	b.logf("sync: waiting for the next node status sync (every %s)", b.cfg.StatusSyncEvery)
	before := b.calls.describe.Load()
	sync, _, err := b.waitSync(ctx, p, len(syncs(p)))
	if err != nil {
		return err
	}
	res.SyncCalls, res.SyncSeconds, res.SyncNodes = b.calls.describe.Load()-before, sync.duration.Seconds(), sync.nodes
	b.logf("sync: %d nodes in %s with %d DescribeInstances calls", sync.nodes, sync.duration, res.SyncCalls)

	if err := b.lifecycle(ctx, res); err != nil {
		return err
	}
	return b.stopAndMeasure(ctx, p, res)
}

// stopAndMeasure reads the CCM's resource use, stops it and removes the nodes.
func (b *bench) stopAndMeasure(ctx context.Context, p *testcluster.Process, res *Result) error {
	if b.cfg.HeapProfile && res.HeapProfile == "" {
		path, err := b.heapProfile(ctx, p, "ccm")
		if err != nil {
			return err
		}
		res.HeapProfile = path
		b.logf("ours: heap profile %s (go tool pprof -top -sample_index=inuse_space %s)", path, path)
	}
	u, err := procUsage(p.Pid())
	if err != nil {
		return fmt.Errorf("CCM resource use: %w", err)
	}
	// Peak RSS: the largest of any run. CPU seconds: the first run's,
	// the only one with the sync and lifecycle phases.
	res.PeakRSSMiB = max(res.PeakRSSMiB, u.peakRSSMiB)
	if res.CCMCPUSeconds == 0 {
		res.CCMCPUSeconds = u.cpuSeconds
	}
	b.logf("ours: CCM peak RSS %.0f MiB, %.1f CPU seconds", u.peakRSSMiB, u.cpuSeconds)
	p.Stop()
	return b.deleteAll(ctx)
}

// lifecycle makes 10% of the nodes NotReady for NotReadyFor and counts the
// lifecycle controller's calls; no node may be deleted.
func (b *bench) lifecycle(ctx context.Context, res *Result) error {
	notReady := b.nodes[:max(1, len(b.nodes)/10)]
	b.logf("lifecycle: %d nodes NotReady for %s", len(notReady), b.cfg.NotReadyFor)
	before := b.calls.describe.Load()
	start := time.Now()
	setReady := func(ready bool) error {
		return parallel(ctx, notReady, 16, func(ctx context.Context, n nodeInfo) error {
			return b.cluster.SetNodeReady(ctx, n.privateIP, ready)
		})
	}
	if err := setReady(false); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(b.cfg.NotReadyFor - time.Since(start)):
	}
	res.LifecycleCalls = b.calls.describe.Load() - before
	res.LifecycleNotReady = len(notReady)
	res.LifecycleSeconds = time.Since(start).Seconds()
	if c := b.tracker.counts(); c.present != len(b.nodes) {
		return fmt.Errorf("lifecycle: %d of %d nodes left: the CCM deleted nodes of running instances", c.present, len(b.nodes))
	}
	b.logf("lifecycle: %d DescribeInstances calls in %.0fs", res.LifecycleCalls, res.LifecycleSeconds)
	return setReady(true)
}

// baseline: initialization with the inventory off.
func (b *bench) baseline(ctx context.Context, res *Result) error {
	b.logf("baseline: registering %d nodes, then starting the CCM with the inventory off", len(b.nodes))
	p, secs, calls, err := b.initialize(ctx, "ccm-baseline", false)
	if err != nil {
		return err
	}
	res.BaselineInitSeconds, res.BaselineDescribeCallsInit = secs, calls
	b.logf("baseline: initialized in %.1fs with %d DescribeInstances calls", secs, calls)
	p.Stop()
	return b.cleanUp(ctx)
}
