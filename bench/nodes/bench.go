// Package nodes is the node section of `make bench` (go run ./bench): a real
// kube-apiserver and etcd (internal/testcluster), cloudsim with its
// documented rate limits, and the cloud-controller-manager as its own
// process. It measures, in one run:
//
//   - init: the time until N tainted nodes are initialized, and the
//     DescribeInstances calls that took;
//   - floor: the time a bare client takes to PATCH the same N nodes with the
//     same fields, as fast as the apiserver allows; init and floor run
//     Repeats times, interleaved (ours, floor, ours, floor, ...), and the
//     ratio is the median of the pairs';
//   - baseline: init again with the inventory off (one call per lookup, like
//     upstream and the public Tencent CCM);
//   - a steady-state full node status sync: calls and duration;
//   - 10% of the nodes NotReady for a minute: the lifecycle controller's calls;
//   - RequestLimitExceeded answers from cloudsim over the whole run;
//   - the CCM's peak RSS and CPU seconds.
//
// Run returns the numbers; Result.Print writes the table. It is a
// benchmark, not a test; `go test -tags e2e ./bench/nodes/` runs a small
// smoke version that checks correctness and the call budget only.
package nodes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// The simulated account and cluster.
const (
	secretID  = "AKIDccmkitBENCH000000000000000000000"
	secretKey = "ccmkit-bench-SECRET-KEY-do-not-print"
	region    = "ap-guangzhou"
	zone      = "ap-guangzhou-3"
	vpcID     = "vpc-bench001"
)

// RecommendedFlags are the CCM flags docs/scale.md recommends for large
// clusters; deploy/ and the chart should ship them. The benchmark runs the
// CCM (ours and the baseline alike) with them.
var RecommendedFlags = []string{
	// Node initialization workers: each waits on the apiserver (and, at
	// worst, on one shared inventory listing), so concurrency, not CPU,
	// is what bounds initialization. Also the status sync's workers.
	"--concurrent-node-syncs=100",
	// The lifecycle controller checks every NotReady node each period;
	// concurrent checks coalesce into batched calls.
	"--concurrent-node-lifecycle-syncs=100",
	// Upstream's 20/30 allows ~7 node initializations per second (an
	// update, a status patch and an event each); at 1000 the apiserver,
	// not the client, is the bottleneck (docs/scale.md has the numbers).
	"--kube-api-qps=1000",
	"--kube-api-burst=2000",
}

// Config is what one run measures.
type Config struct {
	Nodes           int
	CCMBinary       string
	WorkDir         string
	FloorWorkers    int
	StatusSyncEvery time.Duration
	CacheTTL        string
	NotReadyFor     time.Duration
	SkipBaseline    bool
	InitOnly        bool // skip the status sync and lifecycle phases
	// UpstreamFloor adds a third series to each pair: a bare client making
	// the writes upstream's node controller makes per node (the PATCHes and
	// the "Synced" Event), to tell our costs from upstream's.
	UpstreamFloor bool
	CCMFlags      []string // extra CCM flags; they override the recommended set
	// HeapProfile saves the first ours run's heap profile (heapprofile.go)
	// before the CCM stops: a diagnosis, off by default.
	HeapProfile bool
	// Repeats is how many (ours, floor) pairs run, interleaved: ours, floor,
	// ours, floor, ... The machine is shared, so one pair can be off by a
	// third; the ratio reported is the median of the pairs' ratios. Only
	// the first ours run goes on to the status sync and lifecycle phases.
	Repeats int
	// PhaseTimeout bounds each wait (initialization, a sync).
	PhaseTimeout time.Duration
	// ControlPlane, if set, is the apiserver and etcd to run on (the node
	// section runs every size on one); nil: the run starts its own.
	ControlPlane *ControlPlane
}

// DefaultConfig is the full-size run of `make bench`.
func DefaultConfig() Config {
	return Config{
		Nodes:        5000,
		CCMBinary:    "bin/cloud-controller-manager",
		FloorWorkers: 100,
		Repeats:      3,
		// Just over the CCM's 60 s instance cache TTL: a sync starts a
		// whole period after the last one ended (the node controller's
		// loop is sliding), so every entry has expired and the measured
		// sync reads the cloud, as the 5-minute production sync does. The
		// sync measures calls and duration, not the period: 65 s instead
		// of 80 s shortens the wait for two syncs by about 30 s.
		StatusSyncEvery: 65 * time.Second,
		NotReadyFor:     time.Minute,
		PhaseTimeout:    10 * time.Minute,
	}
}

// bench is one run's shared state.
type bench struct {
	cfg        Config
	log        io.Writer
	dir        string
	cluster    *testcluster.Cluster
	client     kubernetes.Interface
	kubeconfig string
	sim        *cloudsim.Sim
	simURL     string
	calls      *callCounter
	nodes      []nodeInfo
	tracker    *tracker
	// sharedCluster: cluster is cfg.ControlPlane's, stopped by its owner.
	sharedCluster bool
	// lastPhase: the phase running is the run's last; cleanUp leaves its
	// Nodes.
	lastPhase bool
}

func (b *bench) logf(format string, a ...any) {
	fmt.Fprintf(b.log, "bench: "+format+"\n", a...)
}

// Run sets everything up, runs every phase and returns the results. Progress
// goes to log.
func Run(ctx context.Context, cfg Config, log io.Writer) (*Result, error) {
	if cfg.Nodes < 10 {
		return nil, errors.New("--nodes must be at least 10")
	}
	if _, err := os.Stat(cfg.CCMBinary); err != nil {
		return nil, fmt.Errorf("CCM binary: %w (run `make build`)", err)
	}
	b := &bench{cfg: cfg, log: log, calls: &callCounter{}}
	if err := b.setUp(ctx); err != nil {
		b.tearDown()
		return nil, err
	}
	defer b.tearDown()

	res := &Result{Nodes: cfg.Nodes, CloudsimDescribeQPS: cloudsimDescribeQPS(b.sim), InitOnly: cfg.InitOnly,
		CCMFlags: b.ccmFlags(cfg.StatusSyncEvery), WorkDir: b.dir, Started: time.Now().UTC().Format(time.RFC3339)}
	runs := max(1, cfg.Repeats)
	for run := range runs {
		if err := b.ours(ctx, res, run); err != nil {
			return nil, err
		}
		b.lastPhase = run == runs-1 && cfg.SkipBaseline && !cfg.UpstreamFloor
		if err := b.floor(ctx, res); err != nil {
			return nil, err
		}
		if cfg.UpstreamFloor {
			b.lastPhase = run == runs-1 && cfg.SkipBaseline
			if err := b.upstreamFloor(ctx, res); err != nil {
				return nil, err
			}
		}
	}
	if !cfg.SkipBaseline {
		b.lastPhase = true
		if err := b.baseline(ctx, res); err != nil {
			return nil, err
		}
	}
	res.ThrottledResponses = b.calls.throttled.Load()
	res.evaluate()
	return res, nil
}

// setUp starts the control plane and cloudsim, and fills the cloud.
func (b *bench) setUp(ctx context.Context) error {
	if cp := b.cfg.ControlPlane; cp != nil {
		if err := b.useControlPlane(ctx, cp); err != nil {
			return err
		}
	} else if err := b.startControlPlane(ctx); err != nil {
		return err
	}
	var err error
	// Default (documented) rate limits: DescribeInstances 40/s.
	b.sim = cloudsim.New(cloudsim.Options{
		Region:           region,
		OnCall:           b.calls.record,
		DisableDataPlane: true,
		Tencent: cloudsim.TencentOptions{
			Credentials: map[string]string{secretID: secretKey},
		},
	})
	if b.simURL, err = b.sim.Start("127.0.0.1:0"); err != nil {
		return err
	}
	// The burst section starts with an empty cloud (Nodes 0): its
	// instances appear as they join.
	b.nodes = makeNodes(b.cfg.Nodes)
	if len(b.nodes) > 0 {
		var in []cloudsim.Instance
		for _, n := range b.nodes {
			in = append(in, n.instance())
		}
		if _, err := b.sim.AddInstances(in...); err != nil {
			return fmt.Errorf("add %d instances to cloudsim: %w", len(in), err)
		}
	}
	if b.tracker, err = startTracker(ctx, b.client); err != nil {
		return err
	}
	return nil
}

// startControlPlane starts the apiserver and etcd, the bench's own client
// and the CCM's ServiceAccount kubeconfig: what every section shares.
func (b *bench) startControlPlane(ctx context.Context) error {
	if err := b.makeDir(); err != nil {
		return err
	}
	var err error
	start := time.Now()
	if b.cluster, err = testcluster.Start(b.dir); err != nil {
		return err
	}
	b.logf("control plane up in %s", time.Since(start).Round(time.Millisecond))

	// The bench's own client is not rate limited: registering nodes and the
	// floor must go as fast as the apiserver allows.
	fast := rest.CopyConfig(b.cluster.Admin)
	fast.QPS, fast.Burst = -1, 0
	if b.client, err = kubernetes.NewForConfig(fast); err != nil {
		return fmt.Errorf("bench client: %w", err)
	}
	b.cluster.Client = b.client

	setup, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := b.cluster.ApplyFile(setup, filepath.Join(repoRoot(), "deploy", "rbac.yaml")); err != nil {
		return err
	}
	if b.kubeconfig, err = b.cluster.ServiceAccountKubeconfig(setup, "kube-system", "cloud-controller-manager"); err != nil {
		return err
	}
	return nil
}

// makeDir makes the run's working directory (logs, kubeconfigs).
func (b *bench) makeDir() error {
	var err error
	b.dir = b.cfg.WorkDir
	if b.dir == "" {
		if b.dir, err = os.MkdirTemp("", "ccm-bench-"); err != nil {
			return err
		}
	} else if err = os.MkdirAll(b.dir, 0o755); err != nil {
		return err
	}
	b.logf("working directory (logs, kubeconfigs): %s", b.dir)
	return nil
}

// ControlPlane is a running apiserver and etcd with the bench's client and
// the CCM's kubeconfig. Starting one takes 5-10 s on 2 cores; the node
// section starts one for all its sizes. Each run starts as on a fresh one:
// useControlPlane deletes the Nodes the last run's last phase left and the
// Events its CCMs posted (Node Events go to "default").
type ControlPlane struct {
	cluster    *testcluster.Cluster
	client     kubernetes.Interface
	kubeconfig string
	stopOnce   sync.Once
	stopErr    error
}

// StartControlPlane starts a control plane whose kubeconfigs go to dir (a
// temporary directory if empty).
func StartControlPlane(ctx context.Context, dir string, log io.Writer) (*ControlPlane, error) {
	b := &bench{cfg: Config{WorkDir: dir}, log: log}
	if err := b.startControlPlane(ctx); err != nil {
		if b.cluster != nil {
			_ = b.cluster.Stop()
		}
		return nil, err
	}
	return &ControlPlane{cluster: b.cluster, client: b.client, kubeconfig: b.kubeconfig}, nil
}

// Stop stops the apiserver and etcd; later calls do nothing.
func (c *ControlPlane) Stop() error {
	c.stopOnce.Do(func() { c.stopErr = c.cluster.Stop() })
	return c.stopErr
}

// useControlPlane runs on cp: a run starts with no Nodes and no Events,
// as on a fresh one.
func (b *bench) useControlPlane(ctx context.Context, cp *ControlPlane) error {
	if err := b.makeDir(); err != nil {
		return err
	}
	b.cluster, b.client, b.kubeconfig, b.sharedCluster = cp.cluster, cp.client, cp.kubeconfig, true
	// The last run's last phase left its Nodes (cleanUp).
	start := time.Now()
	n, err := b.deleteNodes(ctx)
	if err != nil {
		return fmt.Errorf("shared control plane: %w", err)
	}
	for left := n; left > 0; {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		nodes, err := b.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return fmt.Errorf("shared control plane: list nodes: %w", err)
		}
		left = len(nodes.Items)
	}
	if n > 0 {
		b.logf("deleted the %d nodes the last run left in %s", n, time.Since(start).Round(time.Millisecond))
	}
	if err := b.client.CoreV1().Events(metav1.NamespaceDefault).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("shared control plane: delete events: %w", err)
	}
	return nil
}

func (b *bench) tearDown() {
	if b.tracker != nil {
		b.tracker.stop()
	}
	if b.sim != nil {
		_ = b.sim.Close()
	}
	if b.cluster != nil && !b.sharedCluster {
		_ = b.cluster.Stop()
	}
}

// callCounter counts cloudsim's answers; it is never reset, phases read
// differences.
type callCounter struct {
	describe  atomic.Int64
	throttled atomic.Int64
	all       atomic.Int64
}

func (c *callCounter) record(ci cloudsim.Call) {
	c.all.Add(1)
	if ci.Action == "DescribeInstances" {
		c.describe.Add(1)
	}
	if ci.Code == "RequestLimitExceeded" || strings.HasPrefix(ci.Code, "RequestLimitExceeded.") {
		c.throttled.Add(1)
	}
}

// cloudsimDescribeQPS is the limit cloudsim enforces on DescribeInstances.
func cloudsimDescribeQPS(s *cloudsim.Sim) float64 {
	return s.Core().RateLimits()["DescribeInstances"]
}

func repoRoot() string {
	// The benchmark runs from the repository root (make bench) or from
	// bench/nodes (go test).
	for _, dir := range []string{".", "../.."} {
		if _, err := os.Stat(filepath.Join(dir, "deploy", "rbac.yaml")); err == nil {
			abs, _ := filepath.Abs(dir)
			return abs
		}
	}
	return "."
}
