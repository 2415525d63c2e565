// Command lb benchmarks the load balancer side of the cloud-controller-manager:
// a real kube-apiserver and etcd (internal/testcluster), cloudsim's CLB with its
// documented rate limits (20 requests/s per action), one task at a time per CLB
// and asynchronous tasks (200 ms by default), and the CCM as its own process
// with the shipped RBAC.
//
// For each --concurrent-service-syncs value it:
//
//   - creates N LoadBalancer Services at once and measures, per Service, the
//     time from creation to its ingress IP (and the CLB calls it took);
//   - restarts the CCM, whose service controller then ensures every Service
//     again with nothing changed: one unchanged resync, whose CLB calls are
//     counted (the target is zero write calls);
//   - waits for one pass of the periodic drift check and counts its calls.
//
// It prints a table and writes JSON (default bench/results/lb.json).
//
//	make build && go run ./bench/lb --services=100
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

const (
	benchID     = "AKIDccmkitLBBENCH00000000000000000"
	benchKey    = "ccmkit-lb-bench-key"
	benchRegion = "ap-guangzhou"
	benchVPC    = "vpc-lbbench1"
)

// writeActions are the CLB actions that change something.
var writeActions = []string{"CreateLoadBalancer", "DeleteLoadBalancer", "CreateListener", "ModifyListener", "DeleteListener",
	"DeleteLoadBalancerListeners", "BatchRegisterTargets", "BatchDeregisterTargets", "RegisterTargets", "DeregisterTargets"}

type config struct {
	Services    int
	Nodes       int
	Syncs       []int
	TaskLatency time.Duration
	CCMBinary   string
	Out         string
	WorkDir     string
	Timeout     time.Duration
	// DriftPeriod is the CCM's lb_drift_check_period: longer than the
	// creation phase, so that no drift check runs during it.
	DriftPeriod time.Duration
}

// result is one run's numbers; durations are in seconds in the JSON.
type result struct {
	Services               int            `json:"services"`
	Nodes                  int            `json:"nodes"`
	ConcurrentServiceSyncs int            `json:"concurrentServiceSyncs"`
	TaskLatencySeconds     float64        `json:"taskLatencySeconds"`
	Ingress                latencies      `json:"timeToIngress"`
	CreateCalls            map[string]int `json:"createCalls"` // action -> calls until every Service had its IP
	Throttled              map[string]int `json:"throttled"`   // action -> RequestLimitExceeded answers, whole run
	Busy                   map[string]int `json:"busy"`        // action -> ResourceInOperating answers, whole run
	Resync                 phaseCalls     `json:"unchangedResync"`
	Drift                  phaseCalls     `json:"driftCheck"`
	CLBs                   int            `json:"clbs"`
	LogDir                 string         `json:"logDir"`
}

type latencies struct {
	P50, P90, P99, Max, All float64 // All: first creation to last ingress
}

func (l latencies) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]float64{"p50": l.P50, "p90": l.P90, "p99": l.P99, "max": l.Max, "all": l.All})
}

type phaseCalls struct {
	Seconds float64        `json:"seconds"`
	Calls   map[string]int `json:"calls"`
	Reads   int            `json:"reads"`
	Writes  int            `json:"writes"`
}

func main() {
	cfg := config{}
	syncs := flag.String("concurrent-service-syncs", "1,10", "comma-separated values of the CCM's --concurrent-service-syncs, one run each (upstream default: 1)")
	flag.IntVar(&cfg.Services, "services", 100, "LoadBalancer Services created at once")
	flag.IntVar(&cfg.Nodes, "nodes", 3, "nodes (targets of every CLB)")
	flag.DurationVar(&cfg.TaskLatency, "task-latency", 200*time.Millisecond, "cloudsim's asynchronous CLB task latency")
	flag.StringVar(&cfg.CCMBinary, "ccm-binary", "bin/cloud-controller-manager", "the cloud-controller-manager binary (make build)")
	flag.StringVar(&cfg.Out, "out", "bench/results/lb.json", "where to write the JSON results")
	flag.StringVar(&cfg.WorkDir, "work-dir", "", "directory for logs and kubeconfigs (default: a new temporary directory)")
	flag.DurationVar(&cfg.Timeout, "timeout", 10*time.Minute, "give up on a phase after this long")
	flag.DurationVar(&cfg.DriftPeriod, "drift-period", 2*time.Minute, "the CCM's lb_drift_check_period (longer than creating every Service takes)")
	flag.Parse()
	for _, s := range strings.Split(*syncs, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "lb: --concurrent-service-syncs: %q is not a positive integer\n", s)
			os.Exit(2)
		}
		cfg.Syncs = append(cfg.Syncs, n)
	}
	// envtest logs through controller-runtime, which warns without a logger.
	ctrllog.SetLogger(logr.Discard())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	begin := time.Now()
	var results []result
	for _, n := range cfg.Syncs {
		res, err := run(ctx, cfg, n)
		if err != nil {
			fmt.Fprintf(os.Stderr, "lb: --concurrent-service-syncs=%d: %v\n", n, err)
			os.Exit(1)
		}
		results = append(results, res)
	}
	printResults(os.Stdout, results)
	if err := writeResults(cfg.Out, results); err != nil {
		fmt.Fprintln(os.Stderr, "lb:", err)
		os.Exit(1)
	}
	fmt.Printf("\nwrote %s (whole run %s)\n", cfg.Out, time.Since(begin).Round(time.Second))
}

func run(ctx context.Context, cfg config, syncs int) (result, error) {
	res := result{Services: cfg.Services, Nodes: cfg.Nodes, ConcurrentServiceSyncs: syncs, TaskLatencySeconds: cfg.TaskLatency.Seconds(),
		Throttled: map[string]int{}, Busy: map[string]int{}}
	dir := cfg.WorkDir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "ccm-bench-lb-"); err != nil {
			return res, err
		}
	}
	dir = filepath.Join(dir, fmt.Sprintf("syncs-%d", syncs))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	res.LogDir = dir
	step := func(format string, args ...any) {
		fmt.Printf("[%s syncs=%d] %s\n", time.Now().Format("15:04:05"), syncs, fmt.Sprintf(format, args...))
	}

	step("starting etcd and kube-apiserver %s", testcluster.K8sVersion)
	cluster, err := testcluster.Start(dir)
	if err != nil {
		return res, err
	}
	defer func() { _ = cluster.Stop() }() // at exit: nothing is left to do about a failed stop
	if err := cluster.ApplyFile(ctx, filepath.Join("deploy", "rbac.yaml")); err != nil {
		return res, err
	}
	kubeconfig, err := cluster.ServiceAccountKubeconfig(ctx, "kube-system", "cloud-controller-manager")
	if err != nil {
		return res, err
	}

	// cloudsim with the documented limits; no data plane: this measures the
	// control plane, and 100 VIPs with health checks would only add noise.
	sim := cloudsim.New(cloudsim.Options{
		Region: benchRegion, Credentials: map[string]string{benchID: benchKey},
		TaskLatency: cfg.TaskLatency, DisableDataPlane: true,
	})
	simURL, err := sim.Start("127.0.0.1:0")
	if err != nil {
		return res, err
	}
	defer sim.Close()

	step("registering %d initialized nodes", cfg.Nodes)
	for i := range cfg.Nodes {
		ip := fmt.Sprintf("10.1.%d.%d", i/250, 1+i%250)
		added, err := sim.AddInstances(cloudsim.Instance{ID: fmt.Sprintf("ins-lbb%05d", i), PrivateIP: ip, VpcID: benchVPC, Zone: benchRegion + "-3"})
		if err != nil {
			return res, err
		}
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: ip},
			Spec:       corev1.NodeSpec{ProviderID: fmt.Sprintf("tencentcloud:///%s-3/%s", benchRegion, added[0].ID)},
			Status: corev1.NodeStatus{
				Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}},
			},
		}
		if _, err := cluster.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return res, err
		}
	}

	cloudConfig := filepath.Join(dir, "cloud.yaml")
	if err := os.WriteFile(cloudConfig, []byte(fmt.Sprintf("region: %s\nvpc_id: %s\nsecret_id: %s\nsecret_key: %s\napi_endpoint: %s\nlb_drift_check_period: %s\n",
		benchRegion, benchVPC, benchID, benchKey, simURL, cfg.DriftPeriod)), 0o600); err != nil {
		return res, err
	}
	startCCM := func(name string) (*testcluster.Process, error) {
		p, _, err := testcluster.CCM{
			Binary: cfg.CCMBinary, Provider: "tencentcloud", CloudConfig: cloudConfig, Kubeconfig: kubeconfig, Dir: dir, Name: name,
			ExtraArgs: []string{"--controllers=service", fmt.Sprintf("--concurrent-service-syncs=%d", syncs), "--v=2"},
		}.Start()
		if err != nil {
			return nil, err
		}
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		return p, p.WaitForOutput(wctx, "Starting service controller")
	}
	step("starting the CCM (service controller only, --concurrent-service-syncs=%d)", syncs)
	ccm, err := startCCM("ccm")
	if err != nil {
		return res, err
	}
	defer func() { ccm.Stop() }()

	// Phase 1: N Services at once.
	step("creating %d LoadBalancer Services at once", cfg.Services)
	sim.ResetCalls()
	created, err := createServices(ctx, cluster, cfg.Services)
	if err != nil {
		return res, err
	}
	ingress, err := waitIngress(ctx, cluster, created, cfg.Timeout)
	if err != nil {
		return res, err
	}
	res.Ingress = summarize(created, ingress)
	res.CreateCalls = clbCalls(sim.Calls())
	res.CLBs = len(sim.CLBs())
	step("every Service has its IP: p50 %.1fs, max %.1fs, all %.1fs", res.Ingress.P50, res.Ingress.Max, res.Ingress.All)
	countRefusals(sim.Calls(), res.Throttled, res.Busy)

	// Phase 2: one unchanged resync. A restarted service controller ensures
	// every LoadBalancer Service once; nothing has changed.
	step("restarting the CCM for one unchanged resync of %d Services", cfg.Services)
	ccm.Stop()
	time.Sleep(time.Second)
	sim.ResetCalls()
	start := time.Now()
	if ccm, err = startCCM("ccm-resync"); err != nil {
		return res, err
	}
	if err := waitQuiet(ctx, sim, "DescribeTargets", cfg.Services, cfg.Timeout); err != nil {
		return res, err
	}
	res.Resync = phase(sim.Calls(), time.Since(start))
	countRefusals(sim.Calls(), res.Throttled, res.Busy)
	step("resync: %d reads, %d writes", res.Resync.Reads, res.Resync.Writes)

	// Phase 3: one drift check pass (reads only).
	step("waiting for one drift check pass (period %s)", cfg.DriftPeriod)
	sim.ResetCalls()
	wctx, cancel := context.WithTimeout(ctx, cfg.DriftPeriod*3/2)
	defer cancel()
	if err := ccm.WaitForOutput(wctx, "Drift check done"); err != nil {
		return res, fmt.Errorf("drift check: %w", err)
	}
	res.Drift = phase(sim.Calls(), 0)
	res.Drift.Seconds = driftSeconds(ccm.Output())
	step("drift check: %d reads, %d writes", res.Drift.Reads, res.Drift.Writes)
	return res, nil
}

func createServices(ctx context.Context, cluster *testcluster.Cluster, n int) (map[string]time.Time, error) {
	created := map[string]time.Time{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 20) // "at once", within the client's own QPS
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			svc := &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("svc-%03d", i)},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "x"},
					Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}}},
			}
			start := time.Now()
			if _, err := cluster.Client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
				errs <- err
				return
			}
			mu.Lock()
			created[svc.Name] = start
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(errs)
	return created, <-errs
}

// waitIngress polls the Service list until every Service has an IP, and
// returns when each was first seen with one.
func waitIngress(ctx context.Context, cluster *testcluster.Cluster, created map[string]time.Time, timeout time.Duration) (map[string]time.Time, error) {
	seen := map[string]time.Time{}
	deadline := time.Now().Add(timeout)
	for len(seen) < len(created) {
		list, err := cluster.Client.CoreV1().Services("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		now := time.Now()
		for _, s := range list.Items {
			if _, ok := seen[s.Name]; !ok && len(s.Status.LoadBalancer.Ingress) > 0 {
				seen[s.Name] = now
			}
		}
		if now.After(deadline) {
			return nil, fmt.Errorf("%d of %d Services got an IP within %s", len(seen), len(created), timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return seen, nil
}

// waitQuiet waits until action was called at least n times and no CLB call
// happened for two seconds.
func waitQuiet(ctx context.Context, sim *cloudsim.Sim, action string, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last, lastChange := -1, time.Now()
	for {
		calls := sim.Calls()
		total := 0
		for a, byCode := range calls {
			if isCLB(a) {
				total += sum(byCode)
			}
		}
		if total != last {
			last, lastChange = total, time.Now()
		}
		if sum(calls[action]) >= n && time.Since(lastChange) > 2*time.Second {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %d calls within %s, want %d", action, sum(calls[action]), timeout, n)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func isCLB(action string) bool {
	return action != "DescribeInstances" && !strings.Contains(action, "ClusterRoute")
}

func clbCalls(calls map[string]map[string]int) map[string]int {
	out := map[string]int{}
	for a, byCode := range calls {
		if isCLB(a) {
			out[a] = sum(byCode)
		}
	}
	return out
}

func phase(calls map[string]map[string]int, d time.Duration) phaseCalls {
	p := phaseCalls{Seconds: d.Seconds(), Calls: clbCalls(calls)}
	for a, n := range p.Calls {
		if slices.Contains(writeActions, a) {
			p.Writes += n
		} else {
			p.Reads += n
		}
	}
	return p
}

func countRefusals(calls map[string]map[string]int, throttled, busy map[string]int) {
	for a, byCode := range calls {
		for code, n := range byCode {
			switch {
			case strings.HasPrefix(code, "RequestLimitExceeded"):
				throttled[a] += n
			case code == "FailedOperation.ResourceInOperating":
				busy[a] += n
			}
		}
	}
}

// driftSeconds reads the duration of the last drift check from the log.
func driftSeconds(log string) float64 {
	i := strings.LastIndex(log, "Drift check done")
	if i < 0 {
		return 0
	}
	line := log[i:]
	if j := strings.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	_, v, ok := strings.Cut(line, "duration=")
	if !ok {
		return 0
	}
	d, err := time.ParseDuration(strings.Trim(strings.Fields(v)[0], `"`))
	if err != nil {
		return 0
	}
	return d.Seconds()
}

func summarize(created, ingress map[string]time.Time) latencies {
	var ds []float64
	first, last := time.Time{}, time.Time{}
	for name, c := range created {
		ds = append(ds, ingress[name].Sub(c).Seconds())
		if first.IsZero() || c.Before(first) {
			first = c
		}
		if ingress[name].After(last) {
			last = ingress[name]
		}
	}
	sort.Float64s(ds)
	pct := func(p float64) float64 { return round(ds[min(len(ds)-1, int(p*float64(len(ds))))]) }
	return latencies{P50: pct(0.5), P90: pct(0.9), P99: pct(0.99), Max: round(ds[len(ds)-1]), All: round(last.Sub(first).Seconds())}
}

func round(f float64) float64 { return float64(int(f*100+0.5)) / 100 }

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func printResults(w io.Writer, results []result) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "syncs\tservices\tnodes\tingress p50\tp90\tmax\tall\tcreate calls\tthrottled\tresync reads\tresync writes\tdrift reads\tdrift writes\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%.1fs\t%.1fs\t%.1fs\t%.1fs\t%d\t%d\t%d\t%d\t%d\t%d\t\n", r.ConcurrentServiceSyncs, r.Services, r.Nodes,
			r.Ingress.P50, r.Ingress.P90, r.Ingress.Max, r.Ingress.All, sum(r.CreateCalls), sum(r.Throttled),
			r.Resync.Reads, r.Resync.Writes, r.Drift.Reads, r.Drift.Writes)
	}
	_ = tw.Flush()
	for _, r := range results {
		fmt.Fprintf(w, "\nsyncs=%d resync calls: %s\n", r.ConcurrentServiceSyncs, callList(r.Resync.Calls))
		fmt.Fprintf(w, "syncs=%d drift check calls: %s\n", r.ConcurrentServiceSyncs, callList(r.Drift.Calls))
		fmt.Fprintf(w, "syncs=%d create calls: %s\n", r.ConcurrentServiceSyncs, callList(r.CreateCalls))
	}
}

func callList(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

func writeResults(path string, results []result) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return errors.Join(fmt.Errorf("write %s", path), err)
	}
	return nil
}
