// Package lb is the load balancer section of `make bench` (go run ./bench):
// the service controller against a real kube-apiserver and etcd (internal/testcluster), cloudsim's CLB with its
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
// Run returns the numbers; Result.Print writes the table. The fan-out
// section (fanout.go, RunFanout) shares this package's fixture and call
// counting.
package lb

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ccmkit/ccm/bench/report"
	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
	"github.com/ccmkit/ccm/pkg/cloudsim/testca"
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

// Config is what one run measures.
type Config struct {
	Services    int
	Nodes       int
	Syncs       []int // the CCM's --concurrent-service-syncs, one run each
	TaskLatency time.Duration
	CCMBinary   string
	WorkDir     string
	Timeout     time.Duration
	// DriftPeriod is the resync CCM's lb_drift_check_period: longer than
	// the resync, so that no drift check runs during it (the creating CCM
	// runs none).
	DriftPeriod time.Duration
}

// DefaultConfig is the full-size run of `make bench`: 100 Services with ten
// service workers (upstream's default of one only serializes the same calls;
// docs/loadbalancers.md has both). The unchanged resync takes about 8 s
// (6 s of calls, 2 s of quiet), with one worker or ten: a 25 s drift period
// stays clear of it.
func DefaultConfig() Config {
	return Config{Services: 100, Nodes: 3, Syncs: []int{10}, TaskLatency: 200 * time.Millisecond,
		CCMBinary: "bin/cloud-controller-manager", Timeout: 10 * time.Minute, DriftPeriod: 25 * time.Second}
}

// Result is the section's numbers: one run per --concurrent-service-syncs
// value, and the targets.
type Result struct {
	Services int             `json:"services"`
	Nodes    int             `json:"nodes"`
	Runs     []SyncsResult   `json:"runs"`
	Target   string          `json:"target"`
	Targets  map[string]bool `json:"targets"`
	Met      bool            `json:"met"`
}

// Run measures each configured --concurrent-service-syncs value, one fresh
// cluster each. Progress goes to log.
func Run(ctx context.Context, cfg Config, log io.Writer) (*Result, error) {
	res := &Result{Services: cfg.Services, Nodes: cfg.Nodes}
	for _, n := range cfg.Syncs {
		r, err := run(ctx, cfg, n, log)
		if err != nil {
			return nil, fmt.Errorf("--concurrent-service-syncs=%d: %w", n, err)
		}
		res.Runs = append(res.Runs, r)
	}
	res.evaluate()
	return res, nil
}

// The targets are the load balancer design's promises
// (docs/loadbalancers.md): a resync or a drift check of unchanged Services
// writes nothing, and client-side pacing keeps every CLB action under its
// limit.
func (r *Result) evaluate() {
	r.Target = "0 writes on an unchanged resync and in a drift check, 0 throttled"
	resync, drift, throttled := 0, 0, 0
	for _, s := range r.Runs {
		resync += s.Resync.Writes
		drift += s.Drift.Writes
		throttled += sum(s.Throttled)
	}
	r.Targets = map[string]bool{
		"no_writes_on_unchanged_resync": resync == 0,
		"no_writes_in_drift_check":      drift == 0,
		"no_request_limit_exceeded":     throttled == 0,
	}
	r.Met = report.AllMet(r.Targets)
}

// SyncsResult is one run's numbers; durations are in seconds in the JSON.
type SyncsResult struct {
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

func run(ctx context.Context, cfg Config, syncs int, log io.Writer) (SyncsResult, error) {
	res := SyncsResult{Services: cfg.Services, Nodes: cfg.Nodes, ConcurrentServiceSyncs: syncs, TaskLatencySeconds: cfg.TaskLatency.Seconds(),
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
		fmt.Fprintf(log, "[%s lb syncs=%d] %s\n", time.Now().Format("15:04:05"), syncs, fmt.Sprintf(format, args...))
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
		Region: benchRegion, DisableDataPlane: true,
		Tencent: cloudsim.TencentOptions{
			Credentials: map[string]string{benchID: benchKey},
			TaskLatency: cfg.TaskLatency,
		},
	})
	simURL, err := sim.Start("127.0.0.1:0")
	if err != nil {
		return res, err
	}
	defer sim.Close()

	if err := tlsSecret(ctx, cluster, sim); err != nil {
		return res, err
	}

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

	// The first CCM (creation) never runs a drift check: its period is an
	// hour. The resync CCM's period is DriftPeriod, which need only outlast
	// the resync (a few seconds), not the creation as well.
	startCCM := func(name string, driftPeriod time.Duration) (*testcluster.Process, error) {
		cloudConfig := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(cloudConfig, []byte(fmt.Sprintf("region: %s\nvpc_id: %s\nsecret_id: %s\nsecret_key: %s\napi_endpoint: %s\nlb_drift_check_period: %s\n",
			benchRegion, benchVPC, benchID, benchKey, simURL, driftPeriod)), 0o600); err != nil {
			return nil, err
		}
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
	ccm, err := startCCM("ccm", time.Hour)
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
	res.CLBs = len(sim.Tencent().CLB().LoadBalancers())
	step("every Service has its IP: p50 %.1fs, max %.1fs, all %.1fs", res.Ingress.P50, res.Ingress.Max, res.Ingress.All)
	countRefusals(sim.Calls(), res.Throttled, res.Busy)

	// Phase 2: one unchanged resync. A restarted service controller ensures
	// every LoadBalancer Service once; nothing has changed.
	step("restarting the CCM for one unchanged resync of %d Services", cfg.Services)
	ccm.Stop()
	time.Sleep(time.Second)
	sim.ResetCalls()
	start := time.Now()
	if ccm, err = startCCM("ccm-resync", cfg.DriftPeriod); err != nil {
		return res, err
	}
	if err := waitQuiet(ctx, sim, "DescribeTargets", cfg.Services, cfg.Timeout); err != nil {
		return res, err
	}
	if strings.Contains(ccm.Output(), "Drift check done") {
		return res, fmt.Errorf("a drift check ran during the resync, adding its reads: raise --lb-drift-period (%s)", cfg.DriftPeriod)
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

// featureAnnotations puts the Tencent features on some of the Services, so
// that the unchanged resync shows they cost no write either: every fourth
// (from the second) has TKE's creation-time settings, every fourth (from
// the third) is Local with endpoint-node binding and weights, every fourth
// (from the fourth) ends TLS at the CLB, every eighth of those (from the
// eighth) as an HTTPS listener with its one rule (and some have source
// ranges: sourceRanges), and the first is an HTTP listener with its rule.
func featureAnnotations(i int) map[string]string {
	switch {
	case i == 0:
		return map[string]string{string(annotations.TKESpecifyProtocol): `{"80":{"protocol":["HTTP"]}}`}
	case i%8 == 7:
		return map[string]string{
			string(annotations.TKESpecifyProtocol): `{"80":{"protocol":["HTTPS"],"tls":"` + benchTLSSecret + `"}}`,
		}
	}
	switch i % 4 {
	case 1:
		return map[string]string{
			annotations.TKEInternetChargeType.String():      "TRAFFIC_POSTPAID_BY_HOUR",
			annotations.TKEInternetMaxBandwidthOut.String(): "100",
			string(annotations.TKEExtensiveParameters):      `{"Tags":[{"TagKey":"bench","TagValue":"lb"}]}`,
		}
	case 2:
		return map[string]string{
			annotations.TKELocalOnlyBindNodeWithPod.String(): "true",
			annotations.TKELocalWeightedBalance.String():     "true",
		}
	case 3:
		// TLS ended at the CLB on port 80.
		return map[string]string{
			string(annotations.TKESpecifyProtocol): `{"80":{"protocol":["TCP_SSL"],"tls":"` + benchTLSSecret + `"}}`,
		}
	}
	return nil
}

// benchTLSSecret is TKE's certificate Secret the TLS Services name: its
// qcloud_cert_id is a certificate in cloudsim's store.
const benchTLSSecret = "bench-tls"

// tlsSecret puts a server certificate into cloudsim's certificate store and
// its id into benchTLSSecret, as a user does before using specify-protocol.
func tlsSecret(ctx context.Context, cluster *testcluster.Cluster, sim *cloudsim.Sim) error {
	ca, err := testca.New("bench CA")
	if err != nil {
		return err
	}
	leaf, err := ca.Server("bench.example")
	if err != nil {
		return err
	}
	cert, err := sim.Tencent().CLB().UploadCertificate(tencent.CertificateSpec{Name: "bench", Certificate: string(leaf.CertPEM), Key: string(leaf.KeyPEM)})
	if err != nil {
		return fmt.Errorf("upload the bench certificate: %w", err)
	}
	_, err = cluster.Client.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: benchTLSSecret}, Type: corev1.SecretTypeOpaque,
		StringData: map[string]string{"qcloud_cert_id": cert.ID}}, metav1.CreateOptions{})
	return err
}

// sourceRanges restricts every eighth Service (from the fourth) to two
// client ranges: its CLB gets the CCM's security group (a VPC write each,
// at creation only; fewer than every fourth, to stay clear of the VPC
// actions' 20 calls/s at the full 100 Services).
func sourceRanges(i int) []string {
	if i%8 == 3 {
		return []string{"127.0.0.0/8", "10.0.0.0/8"}
	}
	return nil
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
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("svc-%03d", i), Annotations: featureAnnotations(i)},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "x"},
					Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}}},
			}
			if i%4 == 2 {
				svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
			}
			svc.Spec.LoadBalancerSourceRanges = sourceRanges(i)
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

// isWrite: a listed write, or any call that does not only describe (the
// Tencent APIs' reads are all Describe*), so that a write the list misses
// is never counted as a read.
func isWrite(action string) bool {
	return slices.Contains(writeActions, action) || !strings.HasPrefix(action, "Describe")
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
		if isWrite(a) {
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

// Print writes the table.
func (r *Result) Print(w io.Writer) {
	fmt.Fprintf(w, "\nLoad balancer benchmark: %d Services, %d nodes; target: %s\n\n", r.Services, r.Nodes, r.Target)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "syncs\tservices\tnodes\tingress p50\tp90\tmax\tall\tcreate calls\tthrottled\tresync reads\tresync writes\tdrift reads\tdrift writes\t")
	for _, s := range r.Runs {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%.1fs\t%.1fs\t%.1fs\t%.1fs\t%d\t%d\t%d\t%d\t%d\t%d\t\n", s.ConcurrentServiceSyncs, s.Services, s.Nodes,
			s.Ingress.P50, s.Ingress.P90, s.Ingress.Max, s.Ingress.All, sum(s.CreateCalls), sum(s.Throttled),
			s.Resync.Reads, s.Resync.Writes, s.Drift.Reads, s.Drift.Writes)
	}
	_ = tw.Flush()
	for _, s := range r.Runs {
		fmt.Fprintf(w, "\nsyncs=%d resync calls: %s\n", s.ConcurrentServiceSyncs, callList(s.Resync.Calls))
		fmt.Fprintf(w, "syncs=%d drift check calls: %s\n", s.ConcurrentServiceSyncs, callList(s.Drift.Calls))
		fmt.Fprintf(w, "syncs=%d create calls: %s\n", s.ConcurrentServiceSyncs, callList(s.CreateCalls))
	}
	fmt.Fprintf(w, "met: %v %v\n", r.Met, r.Targets)
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
