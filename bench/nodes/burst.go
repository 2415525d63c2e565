package nodes

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/ccmkit/ccm/bench/report"
	"github.com/ccmkit/ccm/internal/inventory"
	"github.com/ccmkit/ccm/internal/testcluster"
)

// The burst section: a cluster autoscaler adds nodes at a steady rate to a
// cluster whose CCM is already running, and what users feel is each node's
// join latency: from its kubelet registering the Node to the uninitialized
// taint being removed (no pod schedules before). It shares this package's
// fixture (control plane, cloudsim, tracker, the CCM's command line) with
// the node section.
//
// Each node's machine is created in cloudsim Boot before its Node
// registers, as an autoscaler's machine boots before its kubelet starts
// (RunInstances, then the OS and the kubelet: 30 s and more on CVM; the
// default, 20 s, is on the short side). The CCM cannot have it from any
// listing made before the machine was created. With no boot time, the call
// budget cannot be met at 20/s together with the latency target: each node
// needs a call made after its machine exists, and within about a second
// (1.5x the floor's p99 + 1 s), so 50 s of joins take about 50 calls
// whatever one call answers, against a budget of 20.

// BurstConfig is what one burst run measures.
type BurstConfig struct {
	Nodes        int       // nodes per burst
	Rates        []float64 // nodes per second, one floor and one ours burst each
	CCMBinary    string
	WorkDir      string
	FloorWorkers int
	PhaseTimeout time.Duration
	CCMFlags     []string
	// Boot is how long before its Node registers a machine is created,
	// in our bursts (the floor reads no cloud).
	Boot time.Duration
}

// DefaultBurstConfig is the full-size run: 1,000 nodes at 20/s, then at
// 100/s.
func DefaultBurstConfig() BurstConfig {
	return BurstConfig{Nodes: 1000, Rates: []float64{20, 100}, CCMBinary: "bin/cloud-controller-manager",
		FloorWorkers: 100, PhaseTimeout: 10 * time.Minute, Boot: DefaultBoot}
}

// DefaultBoot is the burst's boot time: see the package comment of
// burst.go.
const DefaultBoot = 20 * time.Second

// BootSeconds is Boot for the JSON.
func (c BurstConfig) BootSeconds() float64 {
	return c.Boot.Seconds()
}

// BurstResult is the section's numbers, one run per rate.
type BurstResult struct {
	Nodes int `json:"nodes"`
	// BootSeconds is how long before its Node registered each machine
	// was created, in our bursts.
	BootSeconds float64    `json:"boot_seconds"`
	Runs        []BurstRun `json:"runs"`
	Target      string     `json:"target"`
	Met         bool       `json:"met"`
	WorkDir     string     `json:"work_dir"`
}

// BurstRun is one rate: the floor's and our join latencies.
type BurstRun struct {
	RatePerSecond float64 `json:"rate_per_second"`
	Ours          Joins   `json:"ours"`
	Floor         Joins   `json:"floor"`
	// DescribeInstances calls from the first node's registration until
	// every node was untainted, and the budget 2*ceil(N/100).
	DescribeCalls int64           `json:"describe_instances_calls"`
	CallBudget    int64           `json:"call_budget"`
	Throttled     int64           `json:"throttled_responses"`
	Targets       map[string]bool `json:"targets"`
	Met           bool            `json:"met"`
}

// Joins summarizes the join latencies of one burst, in seconds.
type Joins struct {
	P50 float64 `json:"p50_seconds"`
	P99 float64 `json:"p99_seconds"`
	Max float64 `json:"max_seconds"`
	// Seconds is from the first registration to the last node untainted.
	Seconds float64 `json:"seconds"`
	// Samples are every node's latency, for the CDF plot; not in the JSON.
	Samples []float64 `json:"-"`
}

// RunBurst runs a floor burst and an ours burst at each rate, against one
// control plane. Progress goes to log.
func RunBurst(ctx context.Context, cfg BurstConfig, log io.Writer) (*BurstResult, error) {
	if cfg.Nodes < 10 {
		return nil, fmt.Errorf("burst: at least 10 nodes, not %d", cfg.Nodes)
	}
	b := &bench{log: log, calls: &callCounter{}, cfg: Config{
		CCMBinary: cfg.CCMBinary, WorkDir: cfg.WorkDir, FloorWorkers: cfg.FloorWorkers, PhaseTimeout: cfg.PhaseTimeout,
		CCMFlags: cfg.CCMFlags,
		// No status sync during a burst: it would add its calls to the
		// burst's.
		StatusSyncEvery: 5 * time.Minute,
	}}
	if err := b.setUp(ctx); err != nil {
		b.tearDown()
		return nil, err
	}
	defer b.tearDown()

	res := &BurstResult{Nodes: cfg.Nodes, BootSeconds: cfg.BootSeconds(), WorkDir: b.dir}
	next := 0 // machines handed out: every burst gets new ones
	take := func(n int) []nodeInfo {
		ns := nodeRange(next, n)
		next += n
		return ns
	}
	for _, rate := range cfg.Rates {
		run := BurstRun{RatePerSecond: rate, CallBudget: int64(2 * ((cfg.Nodes + 99) / 100))}
		var err error
		b.logf("burst floor: %d nodes at %.0f/s, a bare client patching each as it appears", cfg.Nodes, rate)
		if run.Floor, err = b.burstFloor(ctx, take(cfg.Nodes), rate); err != nil {
			return nil, err
		}
		b.logf("burst floor: p50 %.2fs p99 %.2fs max %.2fs", run.Floor.P50, run.Floor.P99, run.Floor.Max)
		b.logf("burst ours: %d nodes at %.0f/s into a running CCM", cfg.Nodes, rate)
		if err := b.burstOurs(ctx, take(1)[0], take(cfg.Nodes), cfg.Boot, &run); err != nil {
			return nil, err
		}
		b.logf("burst ours: p50 %.2fs p99 %.2fs max %.2fs, %d DescribeInstances calls, %d throttled",
			run.Ours.P50, run.Ours.P99, run.Ours.Max, run.DescribeCalls, run.Throttled)
		run.evaluate()
		res.Runs = append(res.Runs, run)
	}
	res.Target = "join p99 <= 1.5x the floor's p99 + 1 s, 0 throttled, DescribeInstances <= 2*ceil(N/100), at each rate"
	res.Met = true
	for _, r := range res.Runs {
		res.Met = res.Met && r.Met
	}
	return res, nil
}

// The targets for a burst.
func (r *BurstRun) evaluate() {
	r.Targets = map[string]bool{
		"p99_within_1.5x_floor_plus_1s": r.Ours.P99 <= 1.5*r.Floor.P99+1,
		"no_request_limit_exceeded":     r.Throttled == 0,
		"describe_calls_within_budget":  r.DescribeCalls <= r.CallBudget,
	}
	r.Met = report.AllMet(r.Targets)
}

// burstFloor: a bare client watches Nodes and patches each new one with the
// CCM's fields, with FloorWorkers workers.
func (b *bench) burstFloor(ctx context.Context, nodes []nodeInfo, rate float64) (Joins, error) {
	byName := make(map[string]nodeInfo, len(nodes))
	for _, n := range nodes {
		byName[n.privateIP] = n
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	queue := make(chan nodeInfo, len(nodes))
	factory := informers.NewSharedInformerFactory(b.client, 0)
	inf := factory.Core().V1().Nodes().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if node, ok := obj.(*corev1.Node); ok {
			if n, ours := byName[node.Name]; ours {
				queue <- n
			}
		}
	}}); err != nil {
		return Joins{}, err
	}
	factory.Start(wctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(wctx.Done(), inf.HasSynced) {
		return Joins{}, fmt.Errorf("burst floor: node informer did not sync")
	}
	patchErr := make(chan error, 1)
	var workers sync.WaitGroup
	for range b.cfg.FloorWorkers {
		workers.Go(func() {
			for {
				select {
				case <-wctx.Done():
					return
				case n := <-queue:
					if err := b.patchLikeTheCCM(wctx, n); err != nil && wctx.Err() == nil {
						select {
						case patchErr <- err:
						default:
						}
					}
				}
			}
		})
	}
	joins, err := b.burst(wctx, nodes, rate, 0, patchErr)
	cancel()
	workers.Wait()
	if err != nil {
		return joins, err
	}
	return joins, b.deleteAll(ctx)
}

// burstOurs starts the CCM, waits until it has initialized one warm-up
// node (so that its start-up is not in the measure: an autoscaler adds
// nodes to a running cluster), then runs the burst.
func (b *bench) burstOurs(ctx context.Context, warmUp nodeInfo, nodes []nodeInfo, boot time.Duration, run *BurstRun) error {
	// The floor's machines were created just now; a delta's margin
	// before the CCM's first listing would read them again, a cost of
	// this fixture (machines of no burst created as the CCM starts), not
	// of the burst.
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(inventory.DefaultDeltaMargin + time.Second):
	}
	p, err := b.startCCM(fmt.Sprintf("ccm-burst-%.0f", run.RatePerSecond), true)
	if err != nil {
		return err
	}
	defer p.Stop()
	if _, err := b.sim.AddInstances(warmUp.instance()); err != nil {
		return err
	}
	if _, err := b.cluster.RegisterNode(ctx, testcluster.NodeSpec{Name: warmUp.privateIP, InternalIP: warmUp.privateIP}); err != nil {
		return err
	}
	if err := b.tracker.waitFor(ctx, b.cfg.PhaseTimeout, "initialized (warm-up)", func(c trackerCounts) bool { return c.initialized == 1 }); err != nil {
		return fmt.Errorf("%w (log: %s)", err, b.dir)
	}
	if err := b.deleteAll(ctx); err != nil {
		return err
	}

	describe, throttled := b.calls.describe.Load(), b.calls.throttled.Load()
	if run.Ours, err = b.burst(ctx, nodes, run.RatePerSecond, boot, nil); err != nil {
		return fmt.Errorf("%w (log: %s)", err, b.dir)
	}
	run.DescribeCalls = b.calls.describe.Load() - describe
	run.Throttled = b.calls.throttled.Load() - throttled
	if exited, code := p.Exited(); exited {
		return fmt.Errorf("the CCM exited with code %d during the burst (log: %s)", code, b.dir)
	}
	p.Stop()
	return b.deleteAll(ctx)
}

// burst creates the nodes' machines at rate per second and registers each
// node boot after its machine, waits until every one has lost the
// uninitialized taint, and returns the join latencies: from the start of
// the node's registration to the tracker first seeing it untainted.
// failed, if not nil, fails the burst early.
func (b *bench) burst(ctx context.Context, nodes []nodeInfo, rate float64, boot time.Duration, failed <-chan error) (Joins, error) {
	registered := make([]time.Time, len(nodes))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	fail := func(err error) { once.Do(func() { first = err; cancel() }) }
	start := time.Now()
	for i, n := range nodes {
		due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(due)):
		}
		if ctx.Err() != nil {
			break
		}
		// Each machine in its own goroutine: a slow one must not hold up
		// the pace, as one kubelet does not wait for another.
		wg.Go(func() {
			if _, err := b.sim.AddInstances(n.instance()); err != nil {
				fail(fmt.Errorf("add instance %s: %w", n.id, err))
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(due.Add(boot))):
			}
			registered[i] = time.Now()
			if _, err := b.cluster.RegisterNode(ctx, testcluster.NodeSpec{Name: n.privateIP, InternalIP: n.privateIP}); err != nil {
				fail(fmt.Errorf("register node %s: %w", n.privateIP, err))
			}
		})
	}
	wg.Wait()
	if first != nil {
		return Joins{}, first
	}
	done := make(chan error, 1)
	go func() {
		done <- b.tracker.waitFor(ctx, b.cfg.PhaseTimeout, "untainted", func(c trackerCounts) bool { return c.untainted >= len(nodes) })
	}()
	select {
	case err := <-done:
		if err != nil {
			return Joins{}, err
		}
	case err := <-failed:
		return Joins{}, err
	}

	j := Joins{Samples: make([]float64, len(nodes))}
	last := start
	for i, n := range nodes {
		at, ok := b.tracker.untaintedAt(n.privateIP)
		if !ok {
			return Joins{}, fmt.Errorf("node %s: no untaint time", n.privateIP)
		}
		j.Samples[i] = at.Sub(registered[i]).Seconds()
		if at.After(last) {
			last = at
		}
	}
	j.P50, j.P99 = report.Percentile(j.Samples, 0.50), report.Percentile(j.Samples, 0.99)
	j.Max = report.Percentile(j.Samples, 1)
	j.Seconds = last.Sub(start.Add(boot)).Seconds()
	return j, nil
}

// Print writes the table.
func (r *BurstResult) Print(w io.Writer) {
	fmt.Fprintf(w, "\nBurst: %d nodes joining a running cluster at each rate, each machine created %.0f s before its Node; join = registration to taint removed\ntarget: %s\n\n",
		r.Nodes, r.BootSeconds, r.Target)
	for _, run := range r.Runs {
		fmt.Fprintf(w, "%.0f nodes/s:\n", run.RatePerSecond)
		fmt.Fprintf(w, "  join p50 / p99 / max   ours %.2f / %.2f / %.2f s   floor %.2f / %.2f / %.2f s   (p99 limit %.2f s)\n",
			run.Ours.P50, run.Ours.P99, run.Ours.Max, run.Floor.P50, run.Floor.P99, run.Floor.Max, 1.5*run.Floor.P99+1)
		fmt.Fprintf(w, "  all joined after       ours %.1f s   floor %.1f s\n", run.Ours.Seconds, run.Floor.Seconds)
		fmt.Fprintf(w, "  DescribeInstances %d (budget %d), RequestLimitExceeded %d; met: %v %v\n",
			run.DescribeCalls, run.CallBudget, run.Throttled, run.Met, run.Targets)
	}
}
