package lb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/bench/nodes"
	"github.com/ccmkit/ccm/bench/report"
	ociconfig "github.com/ccmkit/ccm/internal/oci/config"
	"github.com/ccmkit/ccm/internal/oci/config/configtest"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// The lb-scale section: the lb section's measurement at a fleet's size, on
// both clouds, with the fan-out section's fixture (one TCP port per
// Service, the CCM's service and node controllers). Per cloud:
//
//  1. creation: S LoadBalancer Services at once on N initialized nodes;
//     the time from the first creation to the last ingress IP, against
//     the floor the writes made force at the documented write rate;
//  2. an unchanged resync (the CCM restarted): 0 writes, and each load
//     balancer read at most ceil(S / what one call of it can return);
//  3. one drift-check pass, with the same read budget;
//  4. one node joining: at most one write per load balancer, within 1.5x
//     the floor of those writes;
//  5. the CCM's peak RSS (VmHWM of each CCM process, the larger).
//
// Quotas are raised first, as a ticket would: cloudsim enforces Tencent's
// per-region CLB quota (tencent.DefaultCLBQuota, 100) and the targets per
// listener (tencent.DefaultTargetQuota, 100). cloudsim's OCI models no
// per-tenancy load balancer count (OCI's are service limits a tenancy
// raises by request; pkg/cloudsim/oci/limits.go has the per-load-balancer
// ones only, which this section stays within).

// ScaleConfig is what the lb-scale section measures.
type ScaleConfig struct {
	Services  int
	Nodes     int
	Syncs     int      // the CCM's --concurrent-service-syncs
	Clouds    []string // "tencent", "oci"
	CCMBinary string
	WorkDir   string
	Timeout   time.Duration // per phase
	// Parallel runs the clouds at once (--quick: a small check of every
	// section, whose times are not compared with a full run's); a full
	// run measures one cloud at a time.
	Parallel bool
}

// DefaultScaleConfig is the size: 1,000 Services on 200 nodes, 20
// service workers (the fan-out sections').
func DefaultScaleConfig() ScaleConfig {
	return ScaleConfig{Services: 1000, Nodes: 200, Syncs: 20, Clouds: []string{"tencent", "oci"},
		CCMBinary: "bin/cloud-controller-manager", Timeout: 15 * time.Minute}
}

// scaleDriftPeriod is the resync CCM's drift period. The first pass must
// come after the unchanged resync, and the second not before the node
// join is measured and the CLB calls have been quiet for 2 s: a pass reads
// each load balancer one after another (two paced reads each on Tencent:
// 108 s at 1,000), the join takes about as long, and with a period shorter
// than a pass the passes ran back to back and the calls never went quiet
// (the first 1,000-Service run). So 10 s plus 250 ms per Service: 260 s
// at 1,000 (a resync of about 51 s, then a pass and the join of about
// 160 s), 15 s at --quick's 20 (each phase a few seconds); 30 s plus as
// much made --quick's whole run over its 5 minutes.
func scaleDriftPeriod(services int) time.Duration {
	return 10*time.Second + time.Duration(services)*250*time.Millisecond
}

// ScaleResult is the section: one entry per cloud.
type ScaleResult struct {
	Services int          `json:"services"`
	Nodes    int          `json:"nodes"`
	Syncs    int          `json:"concurrent_service_syncs"`
	Clouds   []ScaleCloud `json:"clouds"`
	Met      bool         `json:"met"`
	// Parallel: the clouds ran at once (--quick), sharing the machine.
	Parallel bool `json:"clouds_in_parallel,omitempty"`
}

// ScaleCloud is one cloud's numbers. Durations are in seconds.
type ScaleCloud struct {
	Cloud string `json:"cloud"`
	// RaisedQuotas are cloudsim's quotas for the run (raised as a ticket
	// would), with QuotaNote saying what the defaults are.
	RaisedQuotas map[string]int `json:"raised_quotas"`
	QuotaNote    string         `json:"quota_note"`
	// WriteRate is the rate the floors use, WriteRateBasis its source.
	WriteRate      float64         `json:"write_rate_per_second"`
	WriteRateBasis string          `json:"write_rate_basis"`
	Create         ScaleTimed      `json:"create"`
	Resync         ScaleReads      `json:"unchanged_resync"`
	Drift          ScaleReads      `json:"drift_check"`
	Join           ScaleTimed      `json:"node_join"`
	PeakRSSMiB     float64         `json:"peak_rss_mib"`
	Throttled      map[string]int  `json:"throttled"` // 429 / RequestLimitExceeded answers, whole run
	LogDir         string          `json:"log_dir"`
	Target         string          `json:"target"`
	Targets        map[string]bool `json:"targets"`
	Met            bool            `json:"met"`
}

// ScaleTimed is a timed phase: its time, its writes and their floor.
type ScaleTimed struct {
	Seconds      float64        `json:"seconds"`
	FloorSeconds float64        `json:"floor_seconds"`
	Ratio        float64        `json:"time_vs_floor"`
	Writes       map[string]int `json:"writes"`
	WritesTotal  int            `json:"writes_total"`
	Reads        map[string]int `json:"reads"`
	// PacedFloorSeconds is the least time every call of the phase, reads
	// too, takes at its limit's rate, and PacedBy the limit that sets it
	// (Tencent's are per action: a write's task is read by
	// DescribeTaskStatus at the same 20/s; ours for OCI are one bucket for
	// writes and one per read operation); what bounds the ratio.
	PacedFloorSeconds float64 `json:"paced_floor_seconds,omitempty"`
	PacedBy           string  `json:"paced_by,omitempty"`
}

// ScaleReads is an untimed pass: its calls, and the read budget per load
// balancer read (action -> most calls allowed).
type ScaleReads struct {
	Seconds     float64        `json:"seconds"`
	Reads       map[string]int `json:"reads"`
	Writes      map[string]int `json:"writes"`
	WritesTotal int            `json:"writes_total"`
	Budget      map[string]int `json:"read_budget"`
	OverBudget  []string       `json:"over_budget"`
}

// readBudget is, per load balancer read action, ceil(services / what one
// call can return): perCall maps the action to the API's largest page or
// id list (1 for an action that takes one load balancer). Reads of other
// actions (node reads, security groups) have no budget here.
func readBudget(services int, perCall map[string]int) map[string]int {
	b := map[string]int{}
	for a, n := range perCall {
		b[a] = (services + n - 1) / n
	}
	return b
}

// overBudget lists the actions whose reads exceed their budget, sorted.
func overBudget(reads, budget map[string]int) []string {
	var over []string
	for a, limit := range budget {
		if reads[a] > limit {
			over = append(over, fmt.Sprintf("%s %d > %d", a, reads[a], limit))
		}
	}
	sort.Strings(over)
	return over
}

// tencentWriteFloor is the least time CLB's limits allow for writes: each
// action has its own 20 requests/s (cloudsim's CLBActionQPS, from the API
// reference's "默认接口请求频率限制：20次/秒" on each CLB action page; see
// /work/shared/reference), so the actions run side by side and the
// busiest bounds the time.
func tencentWriteFloor(writes map[string]int, rate func(action string) float64) float64 {
	floor := 0.0
	for a, n := range writes {
		if r := rate(a); r > 0 {
			floor = max(floor, float64(n)/r)
		}
	}
	return round(floor)
}

// busiestAction is the action whose calls take longest at its rate, and
// that time.
func busiestAction(calls map[string]int, rate func(action string) float64) (string, float64) {
	best, floor := "", 0.0
	for _, a := range slices.Sorted(maps.Keys(calls)) {
		if r := rate(a); r > 0 && float64(calls[a])/r > floor {
			best, floor = a, float64(calls[a])/r
		}
	}
	return best, round(floor)
}

// ociWriteFloor: OCI publishes no request rate (only HTTP 429); our
// client's write limiter (20/s, burst 5, the public OCI CCM's defaults)
// sends every write, then the last one's work request runs
// (ociFanoutFloor with one work request).
func ociWriteFloor(writes map[string]int) float64 {
	f, _, _ := ociFanoutFloor(sum(writes), 1, simoci.DefaultWorkRequestLatency.Seconds())
	return f
}

// ociPaced: our client's limits (ociapi.Limits, the provider's defaults):
// every write through one bucket, every read operation through its own,
// each at 20/s. The busiest of them sets the floor.
func ociPaced(writes, reads map[string]int) (string, float64) {
	rate := ociconfig.DefaultRateLimitQPS
	by, floor := busiestAction(reads, func(string) float64 { return rate })
	if w := round(float64(sum(writes)) / rate); w > floor {
		by, floor = "writes (one bucket)", w
	}
	return by, floor
}

// scaleFixture is what one cloud brings to the section.
type scaleFixture struct {
	cloud    string
	sim      *cloudsim.Sim
	machine  func(k int) cloudsim.Instance // machine k, not yet added
	nodeName func(cloudsim.Instance) string
	node     func(added cloudsim.Instance) *corev1.Node // an initialized Node for an added machine
	config   func(driftPeriod time.Duration) string     // the CCM's cloud config
	provider string
	member   func(cloudsim.Instance) string // what a load balancer lists a node as
	waitDone func(ctx context.Context, n int, want []string, timeout time.Duration) (time.Time, error)
	split    func(map[string]map[string]int) (writes, reads map[string]int)
	refusals func(calls map[string]map[string]int, throttled, busy map[string]int)
	floor    func(writes map[string]int) float64
	// paced, if set, is the busiest limit of the phase's calls and its
	// floor: the time its calls take at its rate.
	paced func(writes, reads map[string]int) (string, float64)
	// The resync is over when quietOn was called quietN(S) times and then
	// nothing for 2 s (waitQuiet).
	quietOn   string
	quietN    func(services int) int
	perCall   map[string]int
	res       ScaleCloud
	createSvc func(ctx context.Context, cluster *testcluster.Cluster, n int) (map[string]time.Time, error)
}

// RunScale runs the section on each configured cloud, one fresh control
// plane and cloudsim each. Progress goes to log.
func RunScale(ctx context.Context, cfg ScaleConfig, log io.Writer) (*ScaleResult, error) {
	if cfg.Services < 1 || cfg.Nodes < 1 {
		return nil, fmt.Errorf("lb-scale: need Services and nodes, not %d and %d", cfg.Services, cfg.Nodes)
	}
	dir := cfg.WorkDir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "ccm-bench-lb-scale-"); err != nil {
			return nil, err
		}
	}
	res := &ScaleResult{Services: cfg.Services, Nodes: cfg.Nodes, Syncs: cfg.Syncs, Met: true, Parallel: cfg.Parallel}
	var logMu sync.Mutex
	clouds := make([]ScaleCloud, len(cfg.Clouds))
	errs := make([]error, len(cfg.Clouds))
	run := func(i int) {
		cloud := cfg.Clouds[i]
		step := func(format string, args ...any) {
			logMu.Lock()
			defer logMu.Unlock()
			fmt.Fprintf(log, "[%s lb-scale %s] %s\n", time.Now().Format("15:04:05"), cloud, fmt.Sprintf(format, args...))
		}
		if clouds[i], errs[i] = runScale(ctx, cfg, cloud, filepath.Join(dir, cloud), step); errs[i] != nil {
			errs[i] = fmt.Errorf("lb-scale %s: %w", cloud, errs[i])
		}
	}
	var wg sync.WaitGroup
	for i := range cfg.Clouds {
		if cfg.Parallel {
			wg.Go(func() { run(i) })
		} else {
			run(i)
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, c := range clouds {
		res.Clouds = append(res.Clouds, c)
		res.Met = res.Met && c.Met
	}
	return res, nil
}

func newScaleFixture(cfg ScaleConfig, cloud string) (*scaleFixture, string, error) {
	joining := cfg.Nodes + 1
	switch cloud {
	case "tencent":
		quotas := map[string]int{"TOTAL_OPEN_CLB_QUOTA": max(tencent.DefaultCLBQuota, cfg.Services),
			"TOTAL_TARGET_BIND_QUOTA": max(tencent.DefaultTargetQuota, joining)}
		sim := cloudsim.New(cloudsim.Options{
			Region: benchRegion, DisableDataPlane: true,
			Tencent: cloudsim.TencentOptions{Credentials: map[string]string{benchID: benchKey},
				CLBQuotaOpen: quotas["TOTAL_OPEN_CLB_QUOTA"], CLBTargetQuota: quotas["TOTAL_TARGET_BIND_QUOTA"]},
		})
		simURL, err := sim.Start("127.0.0.1:0")
		if err != nil {
			return nil, "", err
		}
		rates := sim.Core().RateLimits()
		f := &scaleFixture{cloud: cloud, sim: sim, provider: "tencentcloud",
			machine:  fanoutInstance,
			nodeName: func(in cloudsim.Instance) string { return in.PrivateIP },
			node: func(in cloudsim.Instance) *corev1.Node {
				return initializedNode(in.PrivateIP, in.PrivateIP, fmt.Sprintf("tencentcloud:///%s/%s", in.Zone, in.ID))
			},
			config: func(drift time.Duration) string {
				return fmt.Sprintf("region: %s\nvpc_id: %s\nsecret_id: %s\nsecret_key: %s\napi_endpoint: %s\nlb_drift_check_period: %s\n",
					benchRegion, benchVPC, benchID, benchKey, simURL, drift)
			},
			member: func(in cloudsim.Instance) string { return in.ID },
			waitDone: func(ctx context.Context, n int, want []string, timeout time.Duration) (time.Time, error) {
				return waitTargets(ctx, sim, n, want, timeout)
			},
			split: splitCalls, refusals: countRefusals, createSvc: createPlainServices,
			floor: func(w map[string]int) float64 {
				return tencentWriteFloor(w, func(a string) float64 { return rates[a] })
			},
			// Every CLB action has its own limit, reads and writes alike.
			paced: func(writes, reads map[string]int) (string, float64) {
				all := maps.Clone(writes)
				for a, n := range reads {
					all[a] += n
				}
				return busiestAction(all, func(a string) float64 { return rates[a] })
			},
			// The budget, ⌈S / the API's maximum ids per call⌉:
			// clb@v1.3.105 models.go, DescribeLoadBalancersRequestParams
			// LoadBalancerIds "实例ID数量上限为20个" (a page, Limit, is "最大值为100":
			// the shared listing's ⌈S/100⌉ pages are well within it);
			// DescribeListeners and DescribeTargets take one LoadBalancerId.
			perCall: map[string]int{"DescribeLoadBalancers": 20, "DescribeListeners": 1, "DescribeTargets": 1},
		}
		// The resync reads each CLB's targets once.
		f.quietOn, f.quietN = "DescribeTargets", func(n int) int { return n }
		f.res = ScaleCloud{Cloud: cloud, RaisedQuotas: quotas, WriteRate: rates["CreateLoadBalancer"],
			QuotaNote: fmt.Sprintf("cloudsim's defaults are the documented %d CLBs per region and %d targets per listener; raised to fit the run",
				tencent.DefaultCLBQuota, tencent.DefaultTargetQuota),
			WriteRateBasis: "20 requests/s per CLB action (the API reference's default rate limit, cloudsim's CLBActionQPS; our pacing's); floor: the busiest write action's calls / its rate"}
		return f, simURL, nil
	case "oci":
		sim, simURL, ads, err := newOCISim()
		if err != nil {
			return nil, "", err
		}
		f := &scaleFixture{cloud: cloud, sim: sim, provider: "oci",
			machine:  func(k int) cloudsim.Instance { return ociFanoutNode(k, ads) },
			nodeName: func(in cloudsim.Instance) string { return in.Name },
			node: func(in cloudsim.Instance) *corev1.Node {
				return initializedNode(in.Name, in.PrivateIP, "oci://"+in.OCID)
			},
			config: func(drift time.Duration) string {
				return configtest.Valid(fmt.Sprintf("endpoint: %s\nloadBalancer:\n  subnet1: %s\nlbDriftCheckPeriod: %s\n", simURL, ociFanoutLBSubnet, drift))
			},
			member: func(in cloudsim.Instance) string { return in.PrivateIP },
			waitDone: func(ctx context.Context, n int, want []string, timeout time.Duration) (time.Time, error) {
				return waitBackends(ctx, sim, n, want, timeout)
			},
			split: splitOCICalls, refusals: countOCIRefusals, createSvc: createPlainServices,
			floor: ociWriteFloor, paced: ociPaced,
			// ListLoadBalancers pages (loadbalancer ListLoadBalancersRequest.Limit,
			// "the maximum number of results per page"; OCI documents no
			// maximum: lbops asks for 100, the page this budget uses). A
			// listed load balancer carries its listeners and backend sets.
			// ListNetworkLoadBalancers the same (networkloadbalancer
			// ListNetworkLoadBalancersRequest.Limit).
			perCall: map[string]int{"ListLoadBalancers": 100, "nlb:ListNetworkLoadBalancers": 100, "GetLoadBalancer": 1, "ListBackendSets": 1, "ListBackends": 1},
		}
		// The resync lists the load balancers at least once.
		f.quietOn, f.quietN = simoci.ActionPrefix+"ListLoadBalancers", func(int) int { return 1 }
		f.res = ScaleCloud{Cloud: cloud, RaisedQuotas: map[string]int{},
			QuotaNote:      "cloudsim's OCI enforces per-load-balancer limits (16 listeners and backend sets, 512 backends per set), which the run stays within, and no per-tenancy load balancer count: none to raise",
			WriteRate:      ociconfig.DefaultRateLimitQPS,
			WriteRateBasis: fmt.Sprintf("OCI publishes no rate (only HTTP 429); our client's write limiter, %g/s burst %d (the public OCI CCM's defaults); floor: (writes - burst) / rate + one work request (%s)", ociconfig.DefaultRateLimitQPS, ociconfig.DefaultRateLimitBucket, simoci.DefaultWorkRequestLatency)}
		return f, simURL, nil
	}
	return nil, "", fmt.Errorf("unknown cloud %q (want tencent or oci)", cloud)
}

// initializedNode is a Ready Node the CCM has initialized (its providerID
// set).
func initializedNode(name, ip, providerID string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.NodeSpec{ProviderID: providerID},
		Status: corev1.NodeStatus{
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}},
		},
	}
}

func runScale(ctx context.Context, cfg ScaleConfig, cloud, dir string, step func(string, ...any)) (ScaleCloud, error) {
	cluster, kubeconfig, err := startFanoutCluster(ctx, dir, step)
	if err != nil {
		return ScaleCloud{}, err
	}
	defer func() { _ = cluster.Stop() }() // at exit: nothing is left to do about a failed stop
	f, _, err := newScaleFixture(cfg, cloud)
	if err != nil {
		return ScaleCloud{}, err
	}
	defer f.sim.Close()
	res := f.res
	res.LogDir, res.Throttled = dir, map[string]int{}
	busy := map[string]int{}
	sim := f.sim

	step("registering %d initialized nodes", cfg.Nodes)
	var want []string
	for k := range cfg.Nodes {
		added, err := sim.AddInstances(f.machine(k))
		if err != nil {
			return res, err
		}
		want = append(want, f.member(added[0]))
		if _, err := cluster.Client.CoreV1().Nodes().Create(ctx, f.node(added[0]), metav1.CreateOptions{}); err != nil {
			return res, fmt.Errorf("create node %s: %w", added[0].Name, err)
		}
	}

	startCCM := func(name string, drift time.Duration) (*testcluster.Process, error) {
		cloudConfig := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(cloudConfig, []byte(f.config(drift)), 0o600); err != nil {
			return nil, err
		}
		args := append(slices.Clone(nodes.RecommendedFlags), "--controllers=service,cloud-node",
			fmt.Sprintf("--concurrent-service-syncs=%d", cfg.Syncs), "--v=2")
		p, _, err := testcluster.CCM{Binary: cfg.CCMBinary, Provider: f.provider, CloudConfig: cloudConfig, Kubeconfig: kubeconfig,
			Dir: dir, Name: name, ExtraArgs: args}.Start()
		if err != nil {
			return nil, err
		}
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		return p, p.WaitForOutput(wctx, "Starting service controller")
	}
	rss := func(p *testcluster.Process) {
		if mib, err := nodes.PeakRSSMiB(p.Pid()); err == nil {
			res.PeakRSSMiB = max(res.PeakRSSMiB, round(mib))
		}
	}

	// 1. Creation.
	step("starting the CCM (--concurrent-service-syncs=%d)", cfg.Syncs)
	ccm, err := startCCM("ccm", time.Hour)
	if err != nil {
		return res, err
	}
	defer func() { ccm.Stop() }()
	step("creating %d LoadBalancer Services at once on %d nodes", cfg.Services, cfg.Nodes)
	sim.ResetCalls()
	created, err := f.createSvc(ctx, cluster, cfg.Services)
	if err != nil {
		return res, err
	}
	ingress, err := waitIngress(ctx, cluster, created, cfg.Timeout)
	if err != nil {
		return res, err
	}
	res.Create.Seconds = summarize(created, ingress).All
	res.Create.Writes, res.Create.Reads = f.split(sim.Calls())
	if _, err := f.waitDone(ctx, cfg.Services, want, cfg.Timeout); err != nil {
		return res, fmt.Errorf("after creation: %w", err)
	}
	if err := waitQuiet(ctx, sim, f.quietOn, 0, cfg.Timeout); err != nil {
		return res, err
	}
	f.refusals(sim.Calls(), res.Throttled, busy)
	res.Create.WritesTotal = sum(res.Create.Writes)
	res.Create.FloorSeconds = f.floor(res.Create.Writes)
	res.Create.Ratio = ratio(res.Create.Seconds, res.Create.FloorSeconds)
	res.Create.pace(f)
	step("every Service has its IP after %.1fs: %d writes (floor %.1fs, %.2fx)", res.Create.Seconds, res.Create.WritesTotal, res.Create.FloorSeconds, res.Create.Ratio)
	rss(ccm)

	// 2. An unchanged resync: a restarted CCM ensures every Service once.
	drift := scaleDriftPeriod(cfg.Services)
	step("restarting the CCM for one unchanged resync (drift period %s)", drift)
	ccm.Stop()
	time.Sleep(time.Second)
	sim.ResetCalls()
	start := time.Now()
	if ccm, err = startCCM("ccm-resync", drift); err != nil {
		return res, err
	}
	if err := waitQuiet(ctx, sim, f.quietOn, f.quietN(cfg.Services), cfg.Timeout); err != nil {
		return res, err
	}
	if strings.Contains(ccm.Output(), "Drift check done") {
		return res, fmt.Errorf("a drift check ran during the resync (period %s)", drift)
	}
	res.Resync = f.reads(sim.Calls(), cfg.Services, time.Since(start).Seconds()-2) // less waitQuiet's 2 s of quiet
	f.refusals(sim.Calls(), res.Throttled, busy)
	step("resync: %d reads (%s), %d writes", sum(res.Resync.Reads), callList(res.Resync.Reads), res.Resync.WritesTotal)

	// 3. One drift-check pass.
	step("waiting for one drift check pass")
	sim.ResetCalls()
	wctx, cancel := context.WithTimeout(ctx, drift+cfg.Timeout)
	defer cancel()
	if err := ccm.WaitForOutput(wctx, "Drift check done"); err != nil {
		return res, fmt.Errorf("drift check: %w", err)
	}
	res.Drift = f.reads(sim.Calls(), cfg.Services, driftSeconds(ccm.Output()))
	f.refusals(sim.Calls(), res.Throttled, busy)
	step("drift check: %d reads (%s), %d writes", sum(res.Drift.Reads), callList(res.Drift.Reads), res.Drift.WritesTotal)

	// 4. One node joins (registered by its kubelet, initialized by the CCM).
	joining := f.machine(cfg.Nodes)
	var run FanoutRun
	run.Throttled, run.Busy = res.Throttled, busy
	err = measureBurst(ctx, cluster, sim, ccm, &run, step, burstProbe{
		machines: []cloudsim.Instance{joining}, nodeName: f.nodeName, timeout: cfg.Timeout,
		waitDone: func() (time.Time, error) {
			return f.waitDone(ctx, cfg.Services, append(slices.Clone(want), f.member(joining)), cfg.Timeout)
		},
		split: f.split, refusals: f.refusals, quietIgnore: f.quietOn,
		converged: func(FanoutRun) {},
	})
	if err != nil {
		return res, fmt.Errorf("node join: %w", err)
	}
	res.Join = ScaleTimed{Seconds: run.Seconds, Writes: run.Writes, WritesTotal: run.WritesTotal, Reads: run.Reads}
	// The floor: one write per load balancer.
	res.Join.FloorSeconds = f.floor(map[string]int{joinWriteAction(cloud): cfg.Services})
	res.Join.Ratio = ratio(res.Join.Seconds, res.Join.FloorSeconds)
	res.Join.pace(f)
	step("node joined: every load balancer has it after %.1fs, %d writes (floor %.1fs, %.2fx)", res.Join.Seconds, res.Join.WritesTotal, res.Join.FloorSeconds, res.Join.Ratio)
	rss(ccm)
	res.evaluate(cfg.Services)
	return res, nil
}

// joinWriteAction is the one write a node joining costs a load balancer.
func joinWriteAction(cloud string) string {
	if cloud == "oci" {
		return "UpdateBackendSet"
	}
	return "BatchRegisterTargets"
}

func (f *scaleFixture) reads(calls map[string]map[string]int, services int, seconds float64) ScaleReads {
	r := ScaleReads{Seconds: round(max(0, seconds)), Budget: readBudget(services, f.perCall)}
	r.Writes, r.Reads = f.split(calls)
	r.WritesTotal = sum(r.Writes)
	r.OverBudget = overBudget(r.Reads, r.Budget)
	return r
}

// pace sets the paced floor from the phase's calls, where the cloud's
// limits are per action (Tencent) or per operation and direction (OCI).
func (t *ScaleTimed) pace(f *scaleFixture) {
	if f.paced == nil {
		return
	}
	t.PacedBy, t.PacedFloorSeconds = f.paced(t.Writes, t.Reads)
}

func ratio(v, floor float64) float64 {
	if floor <= 0 {
		return 0
	}
	return round(v / floor)
}

// scaleRSSTarget is the memory target the node sections use (MiB).
const scaleRSSTarget = 300

func (c *ScaleCloud) evaluate(services int) {
	c.Target = fmt.Sprintf("creation <= 1.5x floor; resync and drift check: 0 writes, each load balancer read <= its budget; "+
		"node join: <= %d writes (one per load balancer), <= 1.5x floor; 0 throttled; peak RSS <= %d MiB", services, scaleRSSTarget)
	c.Targets = map[string]bool{
		"create_within_1.5x_floor":   c.Create.Ratio > 0 && c.Create.Ratio <= 1.5,
		"resync_no_writes":           c.Resync.WritesTotal == 0,
		"resync_reads_within_budget": len(c.Resync.OverBudget) == 0,
		"drift_no_writes":            c.Drift.WritesTotal == 0,
		"drift_reads_within_budget":  len(c.Drift.OverBudget) == 0,
		"join_one_write_per_lb":      c.Join.WritesTotal <= services,
		"join_within_1.5x_floor":     c.Join.Ratio > 0 && c.Join.Ratio <= 1.5,
		"no_throttled":               sum(c.Throttled) == 0,
		"peak_rss":                   c.PeakRSSMiB > 0 && c.PeakRSSMiB <= scaleRSSTarget,
	}
	c.Met = report.AllMet(c.Targets)
}

// Print writes the table.
func (r *ScaleResult) Print(w io.Writer) {
	fmt.Fprintf(w, "\nLoad balancers at scale: %d Services on %d nodes, then a resync, a drift check, one node joining (--concurrent-service-syncs=%d)\n",
		r.Services, r.Nodes, r.Syncs)
	for _, c := range r.Clouds {
		fmt.Fprintf(w, "\n%s: quotas %v (%s)\nwrite rate: %s\n\n", c.Cloud, c.RaisedQuotas, c.QuotaNote, c.WriteRateBasis)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "\tmeasured\tfloor / budget\tratio\ttarget\tmet\t")
		fmt.Fprintf(tw, "creation: all ingress IPs (s)\t%.1f\t%.1f\t%.2fx\t<= 1.5x\t%v\t\n", c.Create.Seconds, c.Create.FloorSeconds, c.Create.Ratio, c.Targets["create_within_1.5x_floor"])
		fmt.Fprintf(tw, "creation writes\t%d\t\t\t\t\t\n", c.Create.WritesTotal)
		fmt.Fprintf(tw, "resync writes\t%d\t0\t\t0\t%v\t\n", c.Resync.WritesTotal, c.Targets["resync_no_writes"])
		fmt.Fprintf(tw, "resync reads over budget\t%d\t0\t\t0\t%v\t\n", len(c.Resync.OverBudget), c.Targets["resync_reads_within_budget"])
		fmt.Fprintf(tw, "drift check writes\t%d\t0\t\t0\t%v\t\n", c.Drift.WritesTotal, c.Targets["drift_no_writes"])
		fmt.Fprintf(tw, "drift reads over budget\t%d\t0\t\t0\t%v\t\n", len(c.Drift.OverBudget), c.Targets["drift_reads_within_budget"])
		fmt.Fprintf(tw, "node join: every LB has it (s)\t%.1f\t%.1f\t%.2fx\t<= 1.5x\t%v\t\n", c.Join.Seconds, c.Join.FloorSeconds, c.Join.Ratio, c.Targets["join_within_1.5x_floor"])
		fmt.Fprintf(tw, "node join writes\t%d\t%d\t\t<= %d\t%v\t\n", c.Join.WritesTotal, r.Services, r.Services, c.Targets["join_one_write_per_lb"])
		fmt.Fprintf(tw, "throttled\t%d\t0\t\t0\t%v\t\n", sum(c.Throttled), c.Targets["no_throttled"])
		fmt.Fprintf(tw, "CCM peak RSS (MiB)\t%.0f\t\t\t<= %d\t%v\t\n", c.PeakRSSMiB, scaleRSSTarget, c.Targets["peak_rss"])
		_ = tw.Flush()
		fmt.Fprintf(w, "creation writes: %s; reads: %s\n", callList(c.Create.Writes), callList(c.Create.Reads))
		for _, p := range []struct {
			name string
			t    ScaleTimed
		}{{"creation", c.Create}, {"node join", c.Join}} {
			if p.t.PacedBy != "" {
				fmt.Fprintf(w, "%s: every call at its action's rate takes %.1fs (%s), %.2fx the write floor\n",
					p.name, p.t.PacedFloorSeconds, p.t.PacedBy, ratio(p.t.PacedFloorSeconds, p.t.FloorSeconds))
			}
		}
		fmt.Fprintf(w, "resync (%.1fs) reads: %s; budget: %s; over: %v\n", c.Resync.Seconds, callList(c.Resync.Reads), callList(c.Resync.Budget), c.Resync.OverBudget)
		fmt.Fprintf(w, "drift check (%.1fs) reads: %s; over: %v\n", c.Drift.Seconds, callList(c.Drift.Reads), c.Drift.OverBudget)
		fmt.Fprintf(w, "node join writes: %s; reads: %s\n", callList(c.Join.Writes), callList(c.Join.Reads))
		fmt.Fprintf(w, "met: %v\n", c.Met)
	}
}
