package lb

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ccmkit/ccm/bench/report"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// The fan-out section: S LoadBalancer Services on N initialized nodes, all
// converged; then N2 more nodes join in one burst (each registered by its
// kubelet with the uninitialized taint, then initialized by the CCM's node
// controller), and the measure is the time from the burst's start until
// every CLB has every new node as a target on every listener (read from
// cloudsim's state), and the CLB write calls in that interval.
//
// The floor is the writes CLB's limits force: one BatchRegisterTargets per
// CLB and 500 targets (one per listener here, each Service having one
// port), at the action's documented rate (cloudsim's CLBActionQPS, 20/s).
//
// CLB binds at most TOTAL_TARGET_BIND_QUOTA targets to a listener (100 by
// default; a ticket raises it). With more nodes than that the CCM binds a
// subset, and "every CLB has every node" cannot hold; so the section raises
// cloudsim's quota to the cluster's size, which the CCM reads with
// DescribeQuota as it would on a raised account.

// FanoutConfig is what the fan-out run measures.
type FanoutConfig struct {
	Services     int
	InitialNodes int // initialized before the Services are created
	BurstNodes   int // joining at once after every CLB converged
	Syncs        int // the CCM's --concurrent-service-syncs
	// Repeats is how many times the whole section runs, each on a fresh
	// control plane and cloudsim: the machine is shared, and the ratios
	// reported are the medians.
	Repeats   int
	CCMBinary string
	WorkDir   string
	Timeout   time.Duration
}

// DefaultFanoutConfig is the size: 100 Services on 100 nodes, then
// 100 more, with 20 service workers: with ten, each worker's Update (three
// reads, a write and its task, about 0.8 s at cloudsim's realistic latency)
// bounds a pass at about 13 Services/s, under CLB's 20 writes/s
// (docs/scale.md has both).
func DefaultFanoutConfig() FanoutConfig {
	return FanoutConfig{Services: 100, InitialNodes: 100, BurstNodes: 100, Syncs: 20, Repeats: 3,
		CCMBinary: "bin/cloud-controller-manager", Timeout: 10 * time.Minute}
}

// FanoutResult is the section's numbers: each run's, their spread, the
// floor and the targets. Durations are in seconds.
type FanoutResult struct {
	Services               int    `json:"services"`
	InitialNodes           int    `json:"initial_nodes"`
	BurstNodes             int    `json:"burst_nodes"`
	ConcurrentServiceSyncs int    `json:"concurrent_service_syncs"`
	Listeners              int    `json:"listeners"`
	TargetQuota            int    `json:"target_quota"` // cloudsim's TOTAL_TARGET_BIND_QUOTA for the run
	Latency                string `json:"cloudsim_latency"`
	// The floor: the writes CLB's limits force, at the action's rate.
	FloorWrites  int     `json:"floor_writes"`
	FloorSeconds float64 `json:"floor_seconds"`
	FanoutSpread
	Throttled int             `json:"throttled"` // RequestLimitExceeded answers, every run
	Runs      []FanoutRun     `json:"runs"`
	Target    string          `json:"target"`
	Targets   map[string]bool `json:"targets"`
	Met       bool            `json:"met"`
}

// FanoutSpread is a fan-out section's median (min-max) over its runs.
type FanoutSpread struct {
	// Seconds: from the burst's start until every load balancer had every
	// new node (on every CLB listener, in every OCI backend set).
	Seconds    report.Stats `json:"seconds"`
	TimeRatio  report.Stats `json:"time_vs_floor"`
	Writes     report.Stats `json:"writes"`
	WriteRatio report.Stats `json:"writes_vs_floor"`
	// Initialized: from the burst's start until the CCM had initialized
	// every new node (set its providerID): no load balancer can take a
	// node before.
	Initialized report.Stats `json:"initialized_seconds"`
}

// spreadFanout summarizes the runs against the floor.
func spreadFanout(runs []FanoutRun, floorSeconds float64, floorWrites int) FanoutSpread {
	var secs, ratios, writes, wratios, inits []float64
	for _, run := range runs {
		secs = append(secs, run.Seconds)
		ratios = append(ratios, round(run.Seconds/floorSeconds))
		writes = append(writes, float64(run.WritesTotal))
		wratios = append(wratios, round(float64(run.WritesTotal)/float64(floorWrites)))
		inits = append(inits, run.InitializedSeconds)
	}
	return FanoutSpread{Seconds: report.Summarize(secs), TimeRatio: report.Summarize(ratios),
		Writes: report.Summarize(writes), WriteRatio: report.Summarize(wratios), Initialized: report.Summarize(inits)}
}

// FanoutRun is one run's numbers.
type FanoutRun struct {
	Seconds            float64 `json:"seconds"`
	InitializedSeconds float64 `json:"initialized_seconds"`
	RegisterSeconds    float64 `json:"register_seconds"` // until every new Node existed
	// Writes are the CLB write calls from the burst's start until every
	// CLB had every new node, by action.
	Writes      map[string]int `json:"writes"`
	WritesTotal int            `json:"writes_total"`
	Reads       map[string]int `json:"reads"`
	// AfterWrites are the writes from then until the CCM went quiet
	// (passes still running over Services already complete).
	AfterWrites map[string]int `json:"writes_after_convergence"`
	// Service controller passes over every LB Service ("Syncing backends
	// for all LB services" in the CCM's log) from the burst until quiet.
	NodeSyncPasses int            `json:"node_sync_passes"`
	Throttled      map[string]int `json:"throttled"` // RequestLimitExceeded answers, burst until quiet
	Busy           map[string]int `json:"busy"`      // ResourceInOperating answers, burst until quiet
	LogDir         string         `json:"log_dir"`
}

// The targets, on the medians: time within 1.5x the floor, writes
// within 1.2x; and no RequestLimitExceeded in any run.
func (r *FanoutResult) evaluate() {
	r.Target = "time <= 1.5x floor, writes <= 1.2x floor (medians), 0 RequestLimitExceeded"
	r.FanoutSpread = spreadFanout(r.Runs, r.FloorSeconds, r.FloorWrites)
	r.Throttled = 0
	for _, run := range r.Runs {
		r.Throttled += sum(run.Throttled)
	}
	r.Targets = map[string]bool{
		"time_within_1.5x_floor":    r.TimeRatio.Median <= 1.5,
		"writes_within_1.2x_floor":  r.WriteRatio.Median <= 1.2,
		"no_request_limit_exceeded": r.Throttled == 0,
	}
	r.Met = report.AllMet(r.Targets)
}

// maxBatchTargets is what one BatchRegisterTargets may carry ("一次批量
// 绑定的最大数量为500", BatchRegisterTargetsRequestParams.Targets in
// clb@v1.3.105 models.go); the floor counts calls with it.
const maxBatchTargets = 500

// fanoutInstance is burst or initial machine k: its instance and Node name.
func fanoutInstance(k int) cloudsim.Instance {
	ip := fmt.Sprintf("10.2.%d.%d", k/250, 1+k%250)
	return cloudsim.Instance{ID: fmt.Sprintf("ins-fan%05d", k), Name: ip, Type: "S5.MEDIUM4", Zone: benchRegion + "-3",
		PrivateIP: ip, PublicIP: fmt.Sprintf("100.70.%d.%d", k/250, 1+k%250), VpcID: benchVPC, SubnetID: "subnet-fanout01", State: "RUNNING"}
}

// RunFanout runs the section Repeats times, each on a fresh control plane
// and cloudsim. Progress goes to log.
func RunFanout(ctx context.Context, cfg FanoutConfig, log io.Writer) (*FanoutResult, error) {
	if cfg.Services < 1 || cfg.InitialNodes < 1 || cfg.BurstNodes < 1 {
		return nil, fmt.Errorf("fanout: need Services, initial and burst nodes, not %d, %d, %d", cfg.Services, cfg.InitialNodes, cfg.BurstNodes)
	}
	res := &FanoutResult{Services: cfg.Services, InitialNodes: cfg.InitialNodes, BurstNodes: cfg.BurstNodes,
		ConcurrentServiceSyncs: cfg.Syncs, TargetQuota: max(100, cfg.InitialNodes+cfg.BurstNodes), Latency: "cloudsim's realistic default"}
	runs, err := repeatFanout(cfg, "fanout", log, func(dir string, step func(string, ...any)) (FanoutRun, error) {
		return runFanout(ctx, cfg, res, dir, step)
	})
	if err != nil {
		return nil, err
	}
	res.Runs = runs
	res.evaluate()
	return res, nil
}

// repeatFanout runs one section's run Repeats times, each in its own
// directory under WorkDir (a new temporary one when unset), and returns
// the runs.
func repeatFanout(cfg FanoutConfig, name string, log io.Writer, one func(dir string, step func(string, ...any)) (FanoutRun, error)) ([]FanoutRun, error) {
	dir := cfg.WorkDir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "ccm-bench-"+name+"-"); err != nil {
			return nil, err
		}
	}
	var runs []FanoutRun
	for k := range max(1, cfg.Repeats) {
		step := func(format string, args ...any) {
			fmt.Fprintf(log, "[%s %s run %d] %s\n", time.Now().Format("15:04:05"), name, k+1, fmt.Sprintf(format, args...))
		}
		run, err := one(filepath.Join(dir, fmt.Sprintf("run-%d", k+1)), step)
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", k+1, err)
		}
		runs = append(runs, run)
	}
	return runs, nil
}

// startFanoutCluster starts a run's etcd and kube-apiserver in dir, with
// an unthrottled bench client (the burst's Nodes are created as fast as
// the apiserver allows) and the CCM's RBAC, and returns the CCM's
// kubeconfig. The caller stops the cluster.
func startFanoutCluster(ctx context.Context, dir string, step func(string, ...any)) (*testcluster.Cluster, string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	step("starting etcd and kube-apiserver %s", testcluster.K8sVersion)
	cluster, err := testcluster.Start(dir)
	if err != nil {
		return nil, "", err
	}
	fast := rest.CopyConfig(cluster.Admin)
	fast.QPS, fast.Burst = -1, 0
	client, err := kubernetes.NewForConfig(fast)
	if err != nil {
		_ = cluster.Stop()
		return nil, "", fmt.Errorf("bench client: %w", err)
	}
	cluster.Client = client
	if err := cluster.ApplyFile(ctx, filepath.Join("deploy", "rbac.yaml")); err != nil {
		_ = cluster.Stop()
		return nil, "", err
	}
	kubeconfig, err := cluster.ServiceAccountKubeconfig(ctx, "kube-system", "cloud-controller-manager")
	if err != nil {
		_ = cluster.Stop()
		return nil, "", err
	}
	return cluster, kubeconfig, nil
}

// runFanout is one run on a fresh control plane and cloudsim; it fills
// res's floor (the same every run).
func runFanout(ctx context.Context, cfg FanoutConfig, res *FanoutResult, dir string, step func(string, ...any)) (FanoutRun, error) {
	return runFanoutOn(ctx, cfg, "fanout", dir, step, func() (*fanoutCloud, error) { return tencentFanout(cfg, res) })
}

// tencentFanout is the Tencent cloud of the fanout section.
func tencentFanout(cfg FanoutConfig, res *FanoutResult) (*fanoutCloud, error) {
	// The documented CLB limits and cloudsim's realistic latency (Latency
	// nil); the target quota raised to the cluster's size (see above).
	sim := cloudsim.New(cloudsim.Options{
		Region: benchRegion, DisableDataPlane: true,
		Tencent: cloudsim.TencentOptions{
			Credentials:    map[string]string{benchID: benchKey},
			CLBTargetQuota: res.TargetQuota,
		},
	})
	simURL, err := sim.Start("127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rate := sim.Core().RateLimits()["BatchRegisterTargets"]
	if rate <= 0 {
		sim.Close()
		return nil, fmt.Errorf("fanout: cloudsim has no BatchRegisterTargets rate limit to compute the floor with")
	}
	return &fanoutCloud{
		provider: "tencentcloud", sim: sim,
		// No drift check during the run: its reads would share the rate limits.
		config: fmt.Sprintf("region: %s\nvpc_id: %s\nsecret_id: %s\nsecret_key: %s\napi_endpoint: %s\nlb_drift_check_period: 1h\n",
			benchRegion, benchVPC, benchID, benchKey, simURL),
		machine: fanoutInstance,
		node: func(in cloudsim.Instance) *corev1.Node {
			return &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: in.PrivateIP},
				Spec:       corev1.NodeSpec{ProviderID: fmt.Sprintf("tencentcloud:///%s/%s", in.Zone, in.ID)},
				Status: corev1.NodeStatus{
					Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: in.PrivateIP}},
					Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}},
				},
			}
		},
		nodeName: func(in cloudsim.Instance) string { return in.PrivateIP },
		member:   func(in cloudsim.Instance) string { return in.ID },
		// Every fourth Service ends TLS at the CLB, as in the lb section.
		before:    func(ctx context.Context, cluster *testcluster.Cluster) error { return tlsSecret(ctx, cluster, sim) },
		createSvc: createServices,
		waitDone: func(ctx context.Context, n int, want []string, timeout time.Duration) (time.Time, error) {
			return waitTargets(ctx, sim, n, want, timeout)
		},
		quietBefore: "DescribeTargets", quietIgnore: "DescribeTargets",
		split: splitCalls, refusals: countRefusals,
		converged: func() string {
			res.Listeners, res.FloorWrites = 0, 0
			for _, lb := range sim.Tencent().CLB().LoadBalancers() {
				res.Listeners += len(lb.Listeners)
				// One batch call carries up to 500 targets across a CLB's listeners.
				res.FloorWrites += (len(lb.Listeners)*cfg.BurstNodes + maxBatchTargets - 1) / maxBatchTargets
			}
			res.FloorSeconds = round(float64(res.FloorWrites) / rate)
			return fmt.Sprintf("converged: %d CLBs, %d listeners, each with %d targets", cfg.Services, res.Listeners, cfg.InitialNodes)
		},
		done: func(run FanoutRun) string {
			return fmt.Sprintf("every CLB has every new node after %.1fs (Nodes created in %.1fs, initialized in %.1fs): %d writes (floor %d, %.1fs)",
				run.Seconds, run.RegisterSeconds, run.InitializedSeconds, run.WritesTotal, res.FloorWrites, res.FloorSeconds)
		},
	}, nil
}

// burstProbe is what measuring a fan-out burst needs from each cloud.
type burstProbe struct {
	machines []cloudsim.Instance
	nodeName func(cloudsim.Instance) string // the Node name the cloud's CCM maps to the machine
	timeout  time.Duration
	// waitDone returns when every load balancer had every node.
	waitDone func() (time.Time, error)
	// split parts cloudsim's calls into the load balancer writes and
	// reads, by action; refusals counts the throttled and busy answers.
	split       func(map[string]map[string]int) (writes, reads map[string]int)
	refusals    func(calls map[string]map[string]int, throttled, busy map[string]int)
	quietIgnore string // an action the CCM polls even when quiet
	converged   func(FanoutRun)
}

// measureBurst is the fan-out sections' burst: every new machine's
// instance, then its Node, as its kubelet registers it, 32 at a time; the
// time until every load balancer has every new node, and the calls until
// then and until the CCM is quiet, into run.
func measureBurst(ctx context.Context, cluster *testcluster.Cluster, sim *cloudsim.Sim, ccm *testcluster.Process, run *FanoutRun,
	step func(string, ...any), p burstProbe) error {
	passesBefore := countPasses(ccm.Output())
	names := make([]string, len(p.machines))
	for k, m := range p.machines {
		names[k] = p.nodeName(m)
	}
	step("burst: %d nodes join at once", len(p.machines))
	sim.ResetCalls()
	start := time.Now()
	initialized := make(chan time.Time, 1)
	ictx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	go func() { initialized <- waitInitialized(ictx, cluster.Client, names, p.timeout) }()
	registered := make(chan error, 1)
	var registerSeconds float64
	go func() {
		err := register(ctx, sim, cluster, p.machines, 32, p.nodeName)
		registerSeconds = round(time.Since(start).Seconds())
		registered <- err
	}()
	done, err := p.waitDone()
	if err != nil {
		return fmt.Errorf("after the burst: %w", err)
	}
	if err := <-registered; err != nil {
		return err
	}
	run.RegisterSeconds = registerSeconds
	run.Seconds = round(done.Sub(start).Seconds())
	run.InitializedSeconds = round((<-initialized).Sub(start).Seconds())
	run.Writes, run.Reads = p.split(sim.Calls())
	run.WritesTotal = sum(run.Writes)
	p.converged(*run)

	if err := waitQuiet(ctx, sim, p.quietIgnore, 0, p.timeout); err != nil {
		return err
	}
	final := sim.Calls()
	after, _ := p.split(final)
	run.AfterWrites = map[string]int{}
	for a, n := range after {
		if d := n - run.Writes[a]; d > 0 {
			run.AfterWrites[a] = d
		}
	}
	p.refusals(final, run.Throttled, run.Busy)
	run.NodeSyncPasses = countPasses(ccm.Output()) - passesBefore
	return nil
}

// waitInitialized polls the Nodes until every named one has its
// providerID (set by the CCM's node controller), and returns when it saw
// that; the zero time after timeout.
func waitInitialized(ctx context.Context, client kubernetes.Interface, names []string, timeout time.Duration) time.Time {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err == nil {
			initialized := map[string]bool{}
			for _, n := range list.Items {
				initialized[n.Name] = n.Spec.ProviderID != ""
			}
			all := true
			for _, name := range names {
				all = all && initialized[name]
			}
			if all {
				return time.Now()
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Time{}
}

// register adds each machine to cloudsim and registers its Node (tainted,
// as a kubelet with --cloud-provider=external), with the given workers.
// The Node is named by nodeName (the CCM's mapping rule of each cloud).
func register(ctx context.Context, sim *cloudsim.Sim, cluster *testcluster.Cluster, machines []cloudsim.Instance, workers int,
	nodeName func(cloudsim.Instance) string) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= len(machines) || ctx.Err() != nil {
					return
				}
				in := machines[k]
				if _, err := sim.AddInstances(in); err != nil {
					errs <- fmt.Errorf("add instance %s: %w", nodeName(in), err)
					return
				}
				if _, err := cluster.RegisterNode(ctx, testcluster.NodeSpec{Name: nodeName(in), InternalIP: in.PrivateIP}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// waitTargets polls cloudsim until there are clbs CLBs and each listener of
// each has every instance in want as a target, and returns when it saw
// that.
func waitTargets(ctx context.Context, sim *cloudsim.Sim, clbs int, want []string, timeout time.Duration) (time.Time, error) {
	return waitAll(ctx, timeout, "CLBs", "targets", clbs, func() (int, int) {
		lbs := sim.Tencent().CLB().LoadBalancers()
		missing := 0
		for _, lb := range lbs {
			for _, l := range lb.Listeners {
				// A layer-7 listener's targets are its rules'.
				sets := [][]tencent.CLBTarget{l.Targets}
				if len(l.Rules) > 0 {
					sets = sets[:0]
					for _, r := range l.Rules {
						sets = append(sets, r.Targets)
					}
				}
				for _, targets := range sets {
					have := make(map[string]bool, len(targets))
					for _, t := range targets {
						have[t.InstanceID] = true
					}
					missing += countMissing(have, want)
				}
			}
		}
		return len(lbs), missing
	})
}

// countMissing counts the items of want not in have.
func countMissing(have map[string]bool, want []string) int {
	n := 0
	for _, w := range want {
		if !have[w] {
			n++
		}
	}
	return n
}

// waitAll polls check (load balancers seen, members missing) every 50 ms
// until it sees n load balancers and nothing missing, and returns when it
// saw that.
func waitAll(ctx context.Context, timeout time.Duration, lbsName, membersName string, n int, check func() (int, int)) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		lbs, missing := check()
		now := time.Now()
		if lbs == n && missing == 0 {
			return now, nil
		}
		if now.After(deadline) {
			return now, fmt.Errorf("%d of %d %s; %d %s still missing after %s", lbs, n, lbsName, missing, membersName, timeout)
		}
		select {
		case <-ctx.Done():
			return now, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// splitCalls returns the CLB calls by action, writes and reads apart.
func splitCalls(calls map[string]map[string]int) (writes, reads map[string]int) {
	writes, reads = map[string]int{}, map[string]int{}
	for a, n := range clbCalls(calls) {
		if isWrite(a) {
			writes[a] = n
		} else {
			reads[a] = n
		}
	}
	return writes, reads
}

// countPasses counts the service controller's passes over every LB
// Service logged so far (upstream logs this at -v=2 before each).
func countPasses(log string) int {
	return strings.Count(log, "Syncing backends for all LB services")
}

// Print writes the table.
func (r *FanoutResult) Print(w io.Writer) {
	fmt.Fprintf(w, "\nLoad balancer fan-out: %d Services on %d nodes, %d more join at once (--concurrent-service-syncs=%d, target quota %d, %s latency; median (min-max) of %d runs)\n",
		r.Services, r.InitialNodes, r.BurstNodes, r.ConcurrentServiceSyncs, r.TargetQuota, r.Latency, len(r.Runs))
	fmt.Fprintf(w, "target: %s\n\n", r.Target)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tmeasured\tfloor\tratio\ttarget\tmet\t")
	fmt.Fprintf(tw, "every CLB has every new node (s)\t%s\t%.1f\t%s\t<= 1.5x\t%v\t\n", r.Seconds.Spread("%.1f"), r.FloorSeconds, r.TimeRatio.Spread("%.2fx"), r.Targets["time_within_1.5x_floor"])
	fmt.Fprintf(tw, "CLB writes in that time\t%s\t%d\t%s\t<= 1.2x\t%v\t\n", r.Writes.Spread("%.0f"), r.FloorWrites, r.WriteRatio.Spread("%.2fx"), r.Targets["writes_within_1.2x_floor"])
	fmt.Fprintf(tw, "RequestLimitExceeded\t%d\t0\t\t0\t%v\t\n", r.Throttled, r.Targets["no_request_limit_exceeded"])
	fmt.Fprintf(tw, "new nodes initialized (s)\t%s\t\t\t\t\t\n", r.Initialized.Spread("%.1f"))
	_ = tw.Flush()
	for k, run := range r.Runs {
		fmt.Fprintf(w, "\nrun %d: %.1fs (initialized %.1fs, Nodes created %.1fs), %d passes; writes: %s; reads: %s; writes after convergence: %s; ResourceInOperating: %s\n",
			k+1, run.Seconds, run.InitializedSeconds, run.RegisterSeconds, run.NodeSyncPasses, callList(run.Writes), callList(run.Reads), callList(run.AfterWrites), callList(run.Busy))
	}
	fmt.Fprintf(w, "met: %v %v\n", r.Met, r.Targets)
}
