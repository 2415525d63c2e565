package lb

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ccmkit/ccm/bench/report"
	ociconfig "github.com/ccmkit/ccm/internal/oci/config"
	"github.com/ccmkit/ccm/internal/oci/config/configtest"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// The OCI fan-out section (oci-fanout): the fan-out section on OCI Load
// Balancing. S LoadBalancer Services (one TCP port each, so one listener
// and one backend set each) on N initialized nodes, all converged; then N2
// more nodes join in one burst, and the measure is the time from the
// burst's start until every load balancer's backend set has every new
// node's private IP as a backend (read from cloudsim's state), and the
// Load Balancing write calls in that interval.
//
// The floor is what OCI's documented limits force on this burst, and OCI
// documents two and no request rate:
//   - a load balancer runs its work requests one at a time (a change while
//     one runs answers 409 IncorrectState, which cloudsim models), so the cheapest way to add N2
//     nodes to a backend set is one UpdateBackendSet carrying the whole
//     backend list (lbops: backends are replaced, never added one by one),
//     one work request per load balancer;
//   - too many requests answer HTTP 429 TooManyRequests (API errors,
//     https://docs.oracle.com/iaas/Content/API/References/apierrors.htm),
//     at a rate OCI does not publish.
// Work requests alone bound the burst at one work request (0.3 s, cloudsim's
// latency): 100 writes at once, 333/s, a rate no source calls safe. The
// only rate any source names is the public OCI CCM's client limiter (20/s,
// burst 5: its rateLimitQPSWrite/rateLimitBucketWrite defaults, ours too),
// the rate cloudsim already assumes per operation for the node reads
// (simoci.NodeReadRateLimit). So the floor sends the one UpdateBackendSet
// per backend set at that rate and waits for the last work request:
// (writes - 5) / 20 + 0.3 s. It has no node initialization and no reads in
// it; the work-request bound is reported beside it.

// OCIFanoutResult is the section's numbers. Durations are in seconds.
type OCIFanoutResult struct {
	Services               int     `json:"services"`
	InitialNodes           int     `json:"initial_nodes"`
	BurstNodes             int     `json:"burst_nodes"`
	ConcurrentServiceSyncs int     `json:"concurrent_service_syncs"`
	BackendSets            int     `json:"backend_sets"`
	Latency                string  `json:"cloudsim_latency"`
	WorkRequestSeconds     float64 `json:"cloudsim_work_request_seconds"`
	// The floor: one UpdateBackendSet per backend set at 20/s (burst 5),
	// then the last one's work request (see above; FloorBasis says so in
	// the file). Until 2026-11-26 the floor was WorkRequestBoundSeconds
	// alone.
	FloorWrites  int     `json:"floor_writes"`
	FloorSeconds float64 `json:"floor_seconds"`
	FloorBasis   string  `json:"floor_basis"`
	// ClientWriteLimitSeconds is the floor's writes through a 20/s,
	// burst-5 bucket; WorkRequestBoundSeconds the work requests alone, all
	// load balancers at once (the floor before 2026-11-26).
	ClientWriteLimitSeconds float64 `json:"client_write_limit_seconds"`
	WorkRequestBoundSeconds float64 `json:"work_request_bound_seconds"`
	FanoutSpread
	Throttled int             `json:"http_429"` // TooManyRequests answers, every run
	Busy      int             `json:"http_409_busy"`
	Runs      []FanoutRun     `json:"runs"`
	Target    string          `json:"target"`
	Targets   map[string]bool `json:"targets"`
	Met       bool            `json:"met"`
}

func (r *OCIFanoutResult) evaluate() {
	r.Target = "time <= 1.5x floor, writes <= 1.2x floor (medians), 0 HTTP 429"
	r.FanoutSpread = spreadFanout(r.Runs, r.FloorSeconds, r.FloorWrites)
	r.Throttled, r.Busy = 0, 0
	for _, run := range r.Runs {
		r.Throttled += sum(run.Throttled)
		r.Busy += sum(run.Busy)
	}
	r.Targets = map[string]bool{
		"time_within_1.5x_floor":   r.TimeRatio.Median <= 1.5,
		"writes_within_1.2x_floor": r.WriteRatio.Median <= 1.2,
		"no_http_429":              r.Throttled == 0,
	}
	r.Met = report.AllMet(r.Targets)
}

// ociFanoutFloor is the section's floor (see above) for writes
// UpdateBackendSets, at most perLB on one load balancer, with work requests
// of workRequest seconds: the writes through a 20/s, burst-5 bucket, then
// the last one's work requests; and its two parts.
func ociFanoutFloor(writes, perLB int, workRequest float64) (floor, writeRate, workRequests float64) {
	workRequests = round(float64(perLB) * workRequest)
	writeRate = round(max(0, float64(writes-ociconfig.DefaultRateLimitBucket)) / ociconfig.DefaultRateLimitQPS)
	return round(writeRate + workRequests), writeRate, workRequests
}

// ociFanoutLBSubnet is the load balancers' subnet (config subnet1); the
// nodes live in configtest.Subnet.
const ociFanoutLBSubnet = "ocid1.subnet.oc1.iad.aaaafanoutlbsubnet"

// ociFanoutNode is machine k: its instance (the Node's name is its
// display name, the first rule of the OCI node mapping).
func ociFanoutNode(k int, ads []string) cloudsim.Instance {
	name := fmt.Sprintf("oci-fan-%05d", k)
	return cloudsim.Instance{Name: name, HostnameLabel: name, PrivateIP: fmt.Sprintf("10.0.%d.%d", k/250, 1+k%250),
		CompartmentID: configtest.Compartment, VpcID: configtest.VCN, SubnetID: configtest.Subnet, AvailabilityDomain: ads[k%len(ads)],
		Shape: simoci.DefaultShape, FaultDomain: simoci.DefaultFaultDomain, State: "RUNNING"}
}

// RunOCIFanout runs the OCI section Repeats times, each on a fresh control
// plane and cloudsim.
func RunOCIFanout(ctx context.Context, cfg FanoutConfig, log io.Writer) (*OCIFanoutResult, error) {
	if cfg.Services < 1 || cfg.InitialNodes < 1 || cfg.BurstNodes < 1 {
		return nil, fmt.Errorf("oci-fanout: need Services, initial and burst nodes, not %d, %d, %d", cfg.Services, cfg.InitialNodes, cfg.BurstNodes)
	}
	res := &OCIFanoutResult{Services: cfg.Services, InitialNodes: cfg.InitialNodes, BurstNodes: cfg.BurstNodes,
		ConcurrentServiceSyncs: cfg.Syncs, Latency: "cloudsim's realistic default", WorkRequestSeconds: simoci.DefaultWorkRequestLatency.Seconds()}
	runs, err := repeatFanout(cfg, "oci-fanout", log, func(dir string, step func(string, ...any)) (FanoutRun, error) {
		return runOCIFanout(ctx, cfg, res, dir, step)
	})
	if err != nil {
		return nil, err
	}
	res.Runs = runs
	res.evaluate()
	return res, nil
}

func runOCIFanout(ctx context.Context, cfg FanoutConfig, res *OCIFanoutResult, dir string, step func(string, ...any)) (FanoutRun, error) {
	return runFanoutOn(ctx, cfg, "oci-fanout", dir, step, func() (*fanoutCloud, error) { return ociFanout(cfg, res) })
}

// ociFanout is the OCI cloud of the oci-fanout section: cloudsim's
// realistic latency and work-request pace.
func ociFanout(cfg FanoutConfig, res *OCIFanoutResult) (*fanoutCloud, error) {
	sim, simURL, ads, err := newOCISim()
	if err != nil {
		return nil, err
	}
	return &fanoutCloud{
		provider: "oci", sim: sim,
		// No drift check during the run: its reads would share the limits.
		config:  configtest.Valid(fmt.Sprintf("endpoint: %s\nloadBalancer:\n  subnet1: %s\nlbDriftCheckPeriod: 1h\n", simURL, ociFanoutLBSubnet)),
		machine: func(k int) cloudsim.Instance { return ociFanoutNode(k, ads) },
		node: func(in cloudsim.Instance) *corev1.Node {
			return &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: in.Name},
				Spec:       corev1.NodeSpec{ProviderID: "oci://" + in.OCID},
				Status: corev1.NodeStatus{
					Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: in.PrivateIP}},
					Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}},
				},
			}
		},
		nodeName:  func(in cloudsim.Instance) string { return in.Name },
		member:    func(in cloudsim.Instance) string { return in.PrivateIP },
		createSvc: createPlainServices,
		waitDone: func(ctx context.Context, n int, want []string, timeout time.Duration) (time.Time, error) {
			return waitBackends(ctx, sim, n, want, timeout)
		},
		split: splitOCICalls, refusals: countOCIRefusals,
		converged: func() string {
			res.BackendSets, res.FloorWrites = 0, 0
			perLB := 0
			for _, lb := range sim.OCI().LoadBalancers() {
				res.BackendSets += len(lb.BackendSets)
				perLB = max(perLB, len(lb.BackendSets))
			}
			res.FloorWrites = res.BackendSets
			res.FloorSeconds, res.ClientWriteLimitSeconds, res.WorkRequestBoundSeconds = ociFanoutFloor(res.FloorWrites, perLB, res.WorkRequestSeconds)
			res.FloorBasis = fmt.Sprintf("one UpdateBackendSet per backend set at %g/s (burst %d: the public OCI CCM's write limiter; OCI publishes no rate, only 429), "+
				"then the last one's work request (%.1fs; work requests are serial per load balancer)",
				ociconfig.DefaultRateLimitQPS, ociconfig.DefaultRateLimitBucket, res.WorkRequestSeconds)
			return fmt.Sprintf("converged: %d load balancers, %d backend sets, each with %d backends", cfg.Services, res.BackendSets, cfg.InitialNodes)
		},
		done: func(run FanoutRun) string {
			return fmt.Sprintf("every load balancer has every new node after %.1fs (Nodes created in %.1fs, initialized in %.1fs): %d writes (floor %d, %.2fs)",
				run.Seconds, run.RegisterSeconds, run.InitializedSeconds, run.WritesTotal, res.FloorWrites, res.FloorSeconds)
		},
	}, nil
}

// newOCISim starts cloudsim with the bench's OCI tenancy: the API key,
// the VCN with the nodes' subnet and the load balancers' subnet, and
// cloudsim's realistic latency and work-request pace (Latency nil). It
// returns the sim, its URL and its availability domains; the caller closes
// the sim.
func newOCISim() (*cloudsim.Sim, string, []string, error) {
	der, err := x509.MarshalPKIXPublicKey(&configtest.Key().PublicKey)
	if err != nil {
		return nil, "", nil, err
	}
	sim := cloudsim.New(cloudsim.Options{
		DisableDataPlane: true,
		OCI: cloudsim.OCIOptions{
			Region: configtest.Region,
			Keys: map[string]string{configtest.Tenancy + "/" + configtest.User + "/" + configtest.Fingerprint(): string(pem.EncodeToMemory(&pem.Block{
				Type: "PUBLIC KEY", Bytes: der}))},
			Network: simoci.NetworkSeed{
				Compartments: []string{configtest.Compartment},
				VCNs:         []simoci.VCN{{ID: configtest.VCN, CompartmentID: configtest.Compartment, CIDRBlock: "10.0.0.0/16"}},
				Subnets: []simoci.Subnet{
					{ID: configtest.Subnet, VCNID: configtest.VCN, CompartmentID: configtest.Compartment, CIDRBlock: "10.0.0.0/17"},
					// A /17: room for the lb-scale section's 1,000 load
					// balancers' addresses.
					{ID: ociFanoutLBSubnet, VCNID: configtest.VCN, CompartmentID: configtest.Compartment, CIDRBlock: "10.0.128.0/17"},
				},
			},
		},
	})
	simURL, err := sim.Start("127.0.0.1:0")
	if err != nil {
		return nil, "", nil, err
	}
	state, err := sim.OCI().SeedNetwork(simoci.NetworkSeed{})
	if err != nil {
		sim.Close()
		return nil, "", nil, err
	}
	return sim, simURL, state.AvailabilityDomains, nil
}

// createPlainServices creates n LoadBalancer Services with one TCP port
// and no annotations, 20 at a time.
func createPlainServices(ctx context.Context, cluster *testcluster.Cluster, n int) (map[string]time.Time, error) {
	created := map[string]time.Time{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 20)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			svc := &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("svc-%03d", i)},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "x"},
					Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}}},
			}
			start := time.Now()
			if _, err := cluster.Client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
				errs <- fmt.Errorf("create Service %s: %w", svc.Name, err)
				return
			}
			mu.Lock()
			created[svc.Name] = start
			mu.Unlock()
		})
	}
	wg.Wait()
	close(errs)
	return created, <-errs
}

// waitBackends polls cloudsim until there are n load balancers and every
// backend set of each has a backend at every IP in want.
func waitBackends(ctx context.Context, sim *cloudsim.Sim, n int, want []string, timeout time.Duration) (time.Time, error) {
	return waitAll(ctx, timeout, "load balancers", "backends", n, func() (int, int) {
		lbs := sim.OCI().LoadBalancers()
		missing := 0
		for _, lb := range lbs {
			for _, bs := range lb.BackendSets {
				have := make(map[string]bool, len(bs.Backends))
				for _, b := range bs.Backends {
					have[b.IPAddress] = true
				}
				missing += countMissing(have, want)
			}
		}
		return len(lbs), missing
	})
}

// splitOCICalls returns the OCI calls by operation (without the "oci:"
// prefix), writes (Create, Update, Delete, Change) and reads apart.
func splitOCICalls(calls map[string]map[string]int) (writes, reads map[string]int) {
	writes, reads = map[string]int{}, map[string]int{}
	for a, byCode := range calls {
		op, ok := strings.CutPrefix(a, simoci.ActionPrefix)
		if !ok {
			continue
		}
		name := strings.TrimPrefix(op, "nlb:")
		if slices.ContainsFunc([]string{"Create", "Update", "Delete", "Change"}, func(p string) bool { return strings.HasPrefix(name, p) }) {
			writes[op] = sum(byCode)
		} else {
			reads[op] = sum(byCode)
		}
	}
	return writes, reads
}

// countOCIRefusals counts the 429 answers and the 409s of a load balancer
// busy with another work request, by operation.
func countOCIRefusals(calls map[string]map[string]int, throttled, busy map[string]int) {
	for a, byCode := range calls {
		op := strings.TrimPrefix(a, simoci.ActionPrefix)
		for code, n := range byCode {
			switch code {
			case simoci.CodeTooManyRequests, "HTTP429":
				throttled[op] += n
			case "IncorrectState", "Conflict":
				busy[op] += n
			}
		}
	}
}

// Print writes the table.
func (r *OCIFanoutResult) Print(w io.Writer) {
	fmt.Fprintf(w, "\nOCI load balancer fan-out: %d Services on %d nodes, %d more join at once (--concurrent-service-syncs=%d, %s latency, work requests %.1fs; median (min-max) of %d runs)\n",
		r.Services, r.InitialNodes, r.BurstNodes, r.ConcurrentServiceSyncs, r.Latency, r.WorkRequestSeconds, len(r.Runs))
	fmt.Fprintf(w, "target: %s\nfloor: %s\n\n", r.Target, r.FloorBasis)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tmeasured\tfloor\tratio\ttarget\tmet\t")
	fmt.Fprintf(tw, "every LB has every new node (s)\t%s\t%.1f\t%s\t<= 1.5x\t%v\t\n", r.Seconds.Spread("%.1f"), r.FloorSeconds, r.TimeRatio.Spread("%.2fx"), r.Targets["time_within_1.5x_floor"])
	fmt.Fprintf(tw, "LB writes in that time\t%s\t%d\t%s\t<= 1.2x\t%v\t\n", r.Writes.Spread("%.0f"), r.FloorWrites, r.WriteRatio.Spread("%.2fx"), r.Targets["writes_within_1.2x_floor"])
	fmt.Fprintf(tw, "HTTP 429\t%d\t0\t\t0\t%v\t\n", r.Throttled, r.Targets["no_http_429"])
	fmt.Fprintf(tw, "409 busy (work request in flight)\t%d\t\t\t\t\t\n", r.Busy)
	fmt.Fprintf(tw, "the floor's writes through a 20/s, burst-5 bucket (s)\t%.2f\t\t\t\t\t\n", r.ClientWriteLimitSeconds)
	fmt.Fprintf(tw, "work requests alone, every LB at once (s)\t%.1f\t\t\t\t\t\n", r.WorkRequestBoundSeconds)
	fmt.Fprintf(tw, "new nodes initialized (s)\t%s\t\t\t\t\t\n", r.Initialized.Spread("%.1f"))
	_ = tw.Flush()
	for k, run := range r.Runs {
		fmt.Fprintf(w, "\nrun %d: %.1fs (initialized %.1fs, Nodes created %.1fs), %d passes; writes: %s; reads: %s; writes after convergence: %s; 409: %s\n",
			k+1, run.Seconds, run.InitializedSeconds, run.RegisterSeconds, run.NodeSyncPasses, callList(run.Writes), callList(run.Reads), callList(run.AfterWrites), callList(run.Busy))
	}
	fmt.Fprintf(w, "met: %v %v\n", r.Met, r.Targets)
}
