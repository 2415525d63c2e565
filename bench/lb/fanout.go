package lb

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ccmkit/ccm/bench/nodes"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
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
	CCMBinary    string
	WorkDir      string
	Timeout      time.Duration
}

// DefaultFanoutConfig is the size: 100 Services on 100 nodes, then
// 100 more, with 20 service workers: with ten, each worker's Update (three
// reads, a write and its task, about 0.8 s at cloudsim's realistic latency)
// bounds a pass at about 13 Services/s, under CLB's 20 writes/s
// (docs/scale.md has both).
func DefaultFanoutConfig() FanoutConfig {
	return FanoutConfig{Services: 100, InitialNodes: 100, BurstNodes: 100, Syncs: 20,
		CCMBinary: "bin/cloud-controller-manager", Timeout: 10 * time.Minute}
}

// FanoutResult is the section's numbers; durations in seconds.
type FanoutResult struct {
	Services               int    `json:"services"`
	InitialNodes           int    `json:"initial_nodes"`
	BurstNodes             int    `json:"burst_nodes"`
	ConcurrentServiceSyncs int    `json:"concurrent_service_syncs"`
	Listeners              int    `json:"listeners"`
	TargetQuota            int    `json:"target_quota"` // cloudsim's TOTAL_TARGET_BIND_QUOTA for the run
	Latency                string `json:"cloudsim_latency"`
	// RegisterSeconds: from the burst's start until every new Node existed.
	RegisterSeconds float64 `json:"register_seconds"`
	// Seconds: from the burst's start until every CLB had every new node
	// on every listener.
	Seconds      float64 `json:"seconds"`
	FloorSeconds float64 `json:"floor_seconds"`
	TimeRatio    float64 `json:"time_vs_floor"`
	// Writes are the CLB write calls in that interval, by action.
	Writes      map[string]int `json:"writes"`
	WritesTotal int            `json:"writes_total"`
	FloorWrites int            `json:"floor_writes"`
	WriteRatio  float64        `json:"writes_vs_floor"`
	Reads       map[string]int `json:"reads"`
	// AfterWrites are the writes from convergence until the CCM went quiet
	// (passes still running over Services already complete).
	AfterWrites map[string]int `json:"writes_after_convergence"`
	// Service controller passes over every LB Service ("Syncing backends
	// for all LB services" in the CCM's log) from the burst until quiet.
	NodeSyncPasses int             `json:"node_sync_passes"`
	Throttled      map[string]int  `json:"throttled"` // RequestLimitExceeded answers, burst until quiet
	Busy           map[string]int  `json:"busy"`      // ResourceInOperating answers, burst until quiet
	Target         string          `json:"target"`
	Targets        map[string]bool `json:"targets"`
	Met            bool            `json:"met"`
	LogDir         string          `json:"log_dir"`
}

// The targets: time within 1.5x the floor, writes within 1.2x, no
// RequestLimitExceeded.
func (r *FanoutResult) evaluate() {
	r.Target = "time <= 1.5x floor, writes <= 1.2x floor, 0 RequestLimitExceeded"
	r.TimeRatio = round(r.Seconds / r.FloorSeconds)
	r.WriteRatio = round(float64(r.WritesTotal) / float64(r.FloorWrites))
	r.Targets = map[string]bool{
		"time_within_1.5x_floor":    r.Seconds <= 1.5*r.FloorSeconds,
		"writes_within_1.2x_floor":  float64(r.WritesTotal) <= 1.2*float64(r.FloorWrites),
		"no_request_limit_exceeded": sum(r.Throttled) == 0,
	}
	r.Met = true
	for _, ok := range r.Targets {
		r.Met = r.Met && ok
	}
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

// RunFanout runs the section on a fresh control plane. Progress goes to
// log.
func RunFanout(ctx context.Context, cfg FanoutConfig, log io.Writer) (*FanoutResult, error) {
	if cfg.Services < 1 || cfg.InitialNodes < 1 || cfg.BurstNodes < 1 {
		return nil, fmt.Errorf("fanout: need Services, initial and burst nodes, not %d, %d, %d", cfg.Services, cfg.InitialNodes, cfg.BurstNodes)
	}
	total := cfg.InitialNodes + cfg.BurstNodes
	res := &FanoutResult{Services: cfg.Services, InitialNodes: cfg.InitialNodes, BurstNodes: cfg.BurstNodes,
		ConcurrentServiceSyncs: cfg.Syncs, TargetQuota: max(100, total), Latency: "cloudsim's realistic default",
		Throttled: map[string]int{}, Busy: map[string]int{}}
	dir := cfg.WorkDir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "ccm-bench-fanout-"); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	res.LogDir = dir
	step := func(format string, args ...any) {
		fmt.Fprintf(log, "[%s fanout] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
	}

	step("starting etcd and kube-apiserver %s", testcluster.K8sVersion)
	cluster, err := testcluster.Start(dir)
	if err != nil {
		return nil, err
	}
	defer func() { _ = cluster.Stop() }() // at exit: nothing is left to do about a failed stop
	// The burst's Nodes are created as fast as the apiserver allows: the
	// bench's own client is not rate limited.
	fast := rest.CopyConfig(cluster.Admin)
	fast.QPS, fast.Burst = -1, 0
	client, err := kubernetes.NewForConfig(fast)
	if err != nil {
		return nil, fmt.Errorf("fanout: bench client: %w", err)
	}
	cluster.Client = client
	if err := cluster.ApplyFile(ctx, filepath.Join("deploy", "rbac.yaml")); err != nil {
		return nil, err
	}
	kubeconfig, err := cluster.ServiceAccountKubeconfig(ctx, "kube-system", "cloud-controller-manager")
	if err != nil {
		return nil, err
	}

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
	defer sim.Close()
	rate := sim.Core().RateLimits()["BatchRegisterTargets"]
	if rate <= 0 {
		return nil, fmt.Errorf("fanout: cloudsim has no BatchRegisterTargets rate limit to compute the floor with")
	}

	step("registering %d initialized nodes", cfg.InitialNodes)
	for k := range cfg.InitialNodes {
		in := fanoutInstance(k)
		if _, err := sim.AddInstances(in); err != nil {
			return nil, err
		}
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: in.PrivateIP},
			Spec:       corev1.NodeSpec{ProviderID: fmt.Sprintf("tencentcloud:///%s/%s", in.Zone, in.ID)},
			Status: corev1.NodeStatus{
				Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: in.PrivateIP}},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}},
			},
		}
		if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("fanout: create node %s: %w", node.Name, err)
		}
	}

	cloudConfig := filepath.Join(dir, "cloud.yaml")
	// No drift check during the run: its reads would share the rate limits.
	if err := os.WriteFile(cloudConfig, []byte(fmt.Sprintf("region: %s\nvpc_id: %s\nsecret_id: %s\nsecret_key: %s\napi_endpoint: %s\nlb_drift_check_period: 1h\n",
		benchRegion, benchVPC, benchID, benchKey, simURL)), 0o600); err != nil {
		return nil, err
	}
	args := append(slices.Clone(nodes.RecommendedFlags), "--controllers=service,cloud-node",
		fmt.Sprintf("--concurrent-service-syncs=%d", cfg.Syncs), "--v=2")
	step("starting the CCM (service and node controllers, --concurrent-service-syncs=%d)", cfg.Syncs)
	ccm, _, err := testcluster.CCM{
		Binary: cfg.CCMBinary, Provider: "tencentcloud", CloudConfig: cloudConfig, Kubeconfig: kubeconfig, Dir: dir, Name: "ccm",
		ExtraArgs: args,
	}.Start()
	if err != nil {
		return nil, err
	}
	defer ccm.Stop()
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	err = ccm.WaitForOutput(wctx, "Starting service controller")
	cancel()
	if err != nil {
		return nil, err
	}

	step("creating %d LoadBalancer Services on %d nodes", cfg.Services, cfg.InitialNodes)
	created, err := createServices(ctx, cluster, cfg.Services)
	if err != nil {
		return nil, err
	}
	if _, err := waitIngress(ctx, cluster, created, cfg.Timeout); err != nil {
		return nil, err
	}
	initial := make([]string, cfg.InitialNodes)
	for k := range initial {
		initial[k] = fanoutInstance(k).ID
	}
	if _, err := waitTargets(ctx, sim, cfg.Services, initial, cfg.Timeout); err != nil {
		return nil, fmt.Errorf("fanout: before the burst: %w", err)
	}
	if err := waitQuiet(ctx, sim, "DescribeTargets", 0, cfg.Timeout); err != nil {
		return nil, err
	}
	for _, lb := range sim.CLBs() {
		res.Listeners += len(lb.Listeners)
		// One batch call carries up to 500 targets across a CLB's listeners.
		res.FloorWrites += (len(lb.Listeners)*cfg.BurstNodes + maxBatchTargets - 1) / maxBatchTargets
	}
	res.FloorSeconds = round(float64(res.FloorWrites) / rate)
	step("converged: %d CLBs, %d listeners, each with %d targets", cfg.Services, res.Listeners, cfg.InitialNodes)

	// The burst: every new machine's instance, then its Node, as its
	// kubelet registers it, 32 at a time.
	passesBefore := countPasses(ccm.Output())
	burst := make([]cloudsim.Instance, cfg.BurstNodes)
	want := slices.Clone(initial)
	for i := range burst {
		burst[i] = fanoutInstance(cfg.InitialNodes + i)
		want = append(want, burst[i].ID)
	}
	step("burst: %d nodes join at once", cfg.BurstNodes)
	sim.ResetCalls()
	start := time.Now()
	registered := make(chan error, 1)
	go func() {
		err := register(ctx, sim, cluster, burst, 32)
		res.RegisterSeconds = round(time.Since(start).Seconds())
		registered <- err
	}()
	done, err := waitTargets(ctx, sim, cfg.Services, want, cfg.Timeout)
	if err != nil {
		return nil, fmt.Errorf("fanout: after the burst: %w", err)
	}
	if err := <-registered; err != nil {
		return nil, err
	}
	res.Seconds = round(done.Sub(start).Seconds())
	atConvergence := sim.Calls()
	res.Writes, res.Reads = splitCalls(atConvergence)
	res.WritesTotal = sum(res.Writes)
	step("every CLB has every new node after %.1fs (Nodes created in %.1fs): %d writes (floor %d, %.1fs)",
		res.Seconds, res.RegisterSeconds, res.WritesTotal, res.FloorWrites, res.FloorSeconds)

	if err := waitQuiet(ctx, sim, "DescribeTargets", 0, cfg.Timeout); err != nil {
		return nil, err
	}
	final := sim.Calls()
	after, _ := splitCalls(final)
	res.AfterWrites = map[string]int{}
	for a, n := range after {
		if d := n - res.Writes[a]; d > 0 {
			res.AfterWrites[a] = d
		}
	}
	countRefusals(final, res.Throttled, res.Busy)
	res.NodeSyncPasses = countPasses(ccm.Output()) - passesBefore
	res.evaluate()
	return res, nil
}

// register adds each machine to cloudsim and registers its Node (tainted,
// as a kubelet with --cloud-provider=external), with the given workers.
func register(ctx context.Context, sim *cloudsim.Sim, cluster *testcluster.Cluster, machines []cloudsim.Instance, workers int) error {
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
					errs <- fmt.Errorf("fanout: add instance %s: %w", in.ID, err)
					return
				}
				if _, err := cluster.RegisterNode(ctx, testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP}); err != nil {
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
	deadline := time.Now().Add(timeout)
	for {
		lbs := sim.CLBs()
		missing := 0
		for _, lb := range lbs {
			for _, l := range lb.Listeners {
				have := make(map[string]bool, len(l.Targets))
				for _, t := range l.Targets {
					have[t.InstanceID] = true
				}
				for _, id := range want {
					if !have[id] {
						missing++
					}
				}
			}
		}
		now := time.Now()
		if len(lbs) == clbs && missing == 0 {
			return now, nil
		}
		if now.After(deadline) {
			return now, fmt.Errorf("%d of %d CLBs; %d targets still missing after %s", len(lbs), clbs, missing, timeout)
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
		if slices.Contains(writeActions, a) {
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
	fmt.Fprintf(w, "\nLoad balancer fan-out: %d Services on %d nodes, %d more join at once (--concurrent-service-syncs=%d, target quota %d, %s latency)\n",
		r.Services, r.InitialNodes, r.BurstNodes, r.ConcurrentServiceSyncs, r.TargetQuota, r.Latency)
	fmt.Fprintf(w, "target: %s\n\n", r.Target)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tmeasured\tfloor\tratio\ttarget\tmet\t")
	fmt.Fprintf(tw, "every CLB has every new node\t%.1fs\t%.1fs\t%.2fx\t<= 1.5x\t%v\t\n", r.Seconds, r.FloorSeconds, r.TimeRatio, r.Targets["time_within_1.5x_floor"])
	fmt.Fprintf(tw, "CLB writes in that time\t%d\t%d\t%.2fx\t<= 1.2x\t%v\t\n", r.WritesTotal, r.FloorWrites, r.WriteRatio, r.Targets["writes_within_1.2x_floor"])
	fmt.Fprintf(tw, "RequestLimitExceeded\t%d\t0\t\t0\t%v\t\n", sum(r.Throttled), r.Targets["no_request_limit_exceeded"])
	_ = tw.Flush()
	fmt.Fprintf(w, "\nwrites: %s\nreads: %s\nwrites after convergence: %s\nResourceInOperating: %s\n",
		callList(r.Writes), callList(r.Reads), callList(r.AfterWrites), callList(r.Busy))
	fmt.Fprintf(w, "Nodes created in %.1fs; %d service controller passes over every LB Service; met: %v\n", r.RegisterSeconds, r.NodeSyncPasses, r.Met)
}
