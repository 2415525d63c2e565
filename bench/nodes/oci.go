package nodes

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	cloudapi "k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccm/bench/report"
	"github.com/ccmkit/ccm/internal/oci/computelookup"
	"github.com/ccmkit/ccm/internal/oci/config/configtest"
	ociprovider "github.com/ccmkit/ccm/internal/provider/oci"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// The OCI node section (oci-nodes): N instances in one compartment and
// subnet, spread over three availability domains, every tenth with an
// ephemeral public IP; their kubelets register Nodes named by the
// instances' display names (the first rule of the node mapping) and
// without addresses, so that the addresses are the CCM's to set. It
// measures initialization against the bare-PATCH floor (interleaved
// pairs, as the Tencent node section), the OCI calls by action, cloudsim's
// HTTP 429 answers, and the CCM's peak RSS. cloudsim answers with its
// realistic default latency and limits the node reads to
// simoci.NodeReadRateLimit per operation; the CCM keeps its default client
// rate limiter (20 reads per second per read operation, burst 5).

// OCIListings are the listings an initialization needs, each through
// ceil(N / computelookup.PageSize) pages: the compartment's instances, its
// VNIC attachments, the subnet's private IPs, and the public IPs
// (ListPublicIps per availability domain and for the region: with a tenth
// of the nodes public, one page each, which the budget's +10 holds, with
// GetSubnet and ListIpv6s).
const OCIListings = 4

// OCIConfig is what one OCI node run measures.
type OCIConfig struct {
	Nodes        int
	Repeats      int // interleaved (ours, floor) pairs
	PublicEvery  int // every PublicEvery-th instance has a public IP (0: none)
	CCMBinary    string
	WorkDir      string
	FloorWorkers int
	PhaseTimeout time.Duration
	CCMFlags     []string
	HeapProfile  bool // save the first run's heap profile (heapprofile.go)
}

// DefaultOCIConfig is the full-size run: 5,000 nodes, three pairs.
func DefaultOCIConfig() OCIConfig {
	return OCIConfig{Nodes: 5000, Repeats: 3, PublicEvery: 10, CCMBinary: "bin/cloud-controller-manager",
		FloorWorkers: 100, PhaseTimeout: 10 * time.Minute}
}

// OCIResult is the section's numbers.
type OCIResult struct {
	Nodes        int          `json:"nodes"`
	InitSeconds  float64      `json:"init_seconds"`  // median
	FloorSeconds float64      `json:"floor_seconds"` // median
	InitVsFloor  float64      `json:"init_vs_floor"` // median of the pairs' ratios
	InitStats    report.Stats `json:"init_seconds_stats"`
	FloorStats   report.Stats `json:"floor_seconds_stats"`
	RatioStats   report.Stats `json:"init_vs_floor_stats"`
	InitRuns     []float64    `json:"init_seconds_runs"`
	FloorRuns    []float64    `json:"floor_seconds_runs"`
	// CallsInit is every OCI call made to initialize the nodes (the worst
	// run); CallsByAction splits that run's calls by operation.
	CallsInit     int64            `json:"calls_init"`
	CallsByAction map[string]int64 `json:"calls_by_action"`
	// CallBudget is OCIListings * ceil(N / computelookup.PageSize) + 10.
	CallBudget int64   `json:"call_budget"`
	HTTP429    int64   `json:"http_429_responses"`
	PeakRSSMiB float64 `json:"peak_rss_mib"`
	PublicIPs  int     `json:"instances_with_public_ip"`
	// CloudsimReadQPS is cloudsim's per-operation limit on the node reads.
	CloudsimReadQPS float64         `json:"cloudsim_node_read_qps"`
	Target          string          `json:"target"`
	Targets         map[string]bool `json:"targets"`
	Met             bool            `json:"met"`
	CCMFlags        []string        `json:"ccm_flags"`
	WorkDir         string          `json:"work_dir"`
	HeapProfile     string          `json:"heap_profile,omitempty"`
}

// ociNode is one simulated machine and its Node.
type ociNode struct {
	name, privateIP, publicIP, ad string
	ocid                          string // cloudsim assigns it
}

// ociCounter counts the OCI calls, by action, and the 429 answers.
type ociCounter struct {
	mu        sync.Mutex
	byAction  map[string]int64
	throttled int64
}

func (c *ociCounter) record(ci cloudsim.Call) {
	action, ok := strings.CutPrefix(ci.Action, simoci.ActionPrefix)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byAction[action]++
	if ci.Code == simoci.CodeTooManyRequests || ci.Code == "HTTP429" {
		c.throttled++
	}
}

func (c *ociCounter) snapshot() (map[string]int64, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.byAction), c.throttled
}

type ociBench struct {
	*bench
	ocfg  OCIConfig
	count *ociCounter
	nodes []ociNode
}

// RunOCI sets up a control plane and cloudsim's OCI dialect and measures
// the OCI node section.
func RunOCI(ctx context.Context, cfg OCIConfig, log io.Writer) (*OCIResult, error) {
	if cfg.Nodes < 10 {
		return nil, errors.New("oci-nodes: at least 10 nodes")
	}
	if _, err := os.Stat(cfg.CCMBinary); err != nil {
		return nil, fmt.Errorf("CCM binary: %w (run `make build`)", err)
	}
	b := &ociBench{
		bench: &bench{cfg: Config{Nodes: cfg.Nodes, CCMBinary: cfg.CCMBinary, WorkDir: cfg.WorkDir, FloorWorkers: cfg.FloorWorkers,
			PhaseTimeout: cfg.PhaseTimeout, CCMFlags: cfg.CCMFlags}, log: log},
		ocfg:  cfg,
		count: &ociCounter{byAction: map[string]int64{}},
	}
	if err := b.setUpOCI(ctx); err != nil {
		b.tearDown()
		return nil, err
	}
	defer b.tearDown()
	res := &OCIResult{Nodes: cfg.Nodes, CloudsimReadQPS: simoci.NodeReadRateLimit, CCMFlags: b.ccmFlags(5 * time.Minute), WorkDir: b.dir}
	for _, n := range b.nodes {
		if n.publicIP != "" {
			res.PublicIPs++
		}
	}
	runs := max(1, cfg.Repeats)
	for run := range runs {
		if err := b.oursOCI(ctx, res, run); err != nil {
			return nil, err
		}
		b.lastPhase = run == runs-1
		if err := b.floorOCI(ctx, res); err != nil {
			return nil, err
		}
	}
	_, res.HTTP429 = b.count.snapshot()
	res.evaluate()
	return res, nil
}

func (b *ociBench) setUpOCI(ctx context.Context) error {
	if err := b.startControlPlane(ctx); err != nil {
		return err
	}
	pub, err := publicKeyPEM()
	if err != nil {
		return err
	}
	b.sim = cloudsim.New(cloudsim.Options{
		OnCall:           b.count.record,
		DisableDataPlane: true,
		OCI: cloudsim.OCIOptions{
			Region: configtest.Region,
			Keys:   map[string]string{configtest.Tenancy + "/" + configtest.User + "/" + configtest.Fingerprint(): pub},
			Network: simoci.NetworkSeed{
				Compartments: []string{configtest.Compartment},
				VCNs:         []simoci.VCN{{ID: configtest.VCN, CompartmentID: configtest.Compartment, CIDRBlock: "10.0.0.0/16"}},
				Subnets:      []simoci.Subnet{{ID: configtest.Subnet, VCNID: configtest.VCN, CompartmentID: configtest.Compartment, CIDRBlock: "10.0.0.0/16"}},
			},
		},
	})
	if b.simURL, err = b.sim.Start("127.0.0.1:0"); err != nil {
		return err
	}
	state, err := b.sim.OCI().SeedNetwork(simoci.NetworkSeed{})
	if err != nil {
		return err
	}
	ads := state.AvailabilityDomains
	var in []cloudsim.Instance
	for k := range b.ocfg.Nodes {
		n := ociNode{name: fmt.Sprintf("oci-node-%05d", k), privateIP: fmt.Sprintf("10.0.%d.%d", k/250, 1+k%250), ad: ads[k%len(ads)]}
		if b.ocfg.PublicEvery > 0 && k%b.ocfg.PublicEvery == 0 {
			n.publicIP = fmt.Sprintf("100.%d.%d.%d", 64+k/62500, (k/250)%250, 1+k%250)
		}
		b.nodes = append(b.nodes, n)
		in = append(in, cloudsim.Instance{Name: n.name, PrivateIP: n.privateIP, PublicIP: n.publicIP, HostnameLabel: n.name,
			CompartmentID: configtest.Compartment, VpcID: configtest.VCN, SubnetID: configtest.Subnet, AvailabilityDomain: n.ad,
			Shape: simoci.DefaultShape, FaultDomain: simoci.DefaultFaultDomain, State: "RUNNING"})
	}
	added, err := b.sim.AddInstances(in...)
	if err != nil {
		return fmt.Errorf("add %d instances to cloudsim: %w", len(in), err)
	}
	for k := range added {
		b.nodes[k].ocid = added[k].OCID
	}
	b.tracker, err = startTrackerFor(ctx, b.client, ociInitialized)
	return err
}

// publicKeyPEM is the config's API key, as cloudsim registers it.
func publicKeyPEM() (string, error) {
	der, err := x509.MarshalPKIXPublicKey(&configtest.Key().PublicKey)
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), nil
}

// ociInitialized: the CCM (or the floor) set the providerID and the
// addresses (the Nodes register without any) and removed the taint.
func ociInitialized(n *corev1.Node) bool {
	if n.Spec.ProviderID == "" || testcluster.HasTaint(n, cloudapi.TaintExternalCloudProvider) {
		return false
	}
	return slices.ContainsFunc(n.Status.Addresses, func(a corev1.NodeAddress) bool { return a.Type == corev1.NodeInternalIP })
}

// registerOCI creates every Node without addresses and waits until the
// tracker has seen them all.
func (b *ociBench) registerOCI(ctx context.Context) error {
	return registerAll(ctx, b.bench, "oci: ", b.nodes, func(n ociNode) testcluster.NodeSpec { return testcluster.NodeSpec{Name: n.name} })
}

// oursOCI: register, start the OCI CCM, wait until every node is
// initialized; count the calls, read the RSS, stop, delete the nodes.
func (b *ociBench) oursOCI(ctx context.Context, res *OCIResult, run int) error {
	b.logf("oci ours (run %d): registering %d nodes, then starting the CCM", run+1, len(b.nodes))
	if err := b.registerOCI(ctx); err != nil {
		return err
	}
	before, _ := b.count.snapshot()
	start := time.Now()
	name := fmt.Sprintf("ccm-oci-run%d", run+1)
	p, err := b.startOCICCM(name)
	if err != nil {
		return err
	}
	defer p.Stop()
	if err := b.tracker.waitFor(ctx, b.cfg.PhaseTimeout, "initialized by the OCI CCM", func(c trackerCounts) bool {
		return c.initialized == len(b.nodes)
	}); err != nil {
		return fmt.Errorf("%s: %w (log: %s)", name, err, b.dir)
	}
	secs := time.Since(start).Seconds()
	after, _ := b.count.snapshot()
	byAction, total := map[string]int64{}, int64(0)
	for a, c := range after {
		if d := c - before[a]; d > 0 {
			byAction[a] = d
			total += d
		}
	}
	res.InitRuns = append(res.InitRuns, secs)
	if total > res.CallsInit {
		res.CallsInit, res.CallsByAction = total, byAction
	}
	b.logf("oci ours (run %d): initialized in %.1fs with %d calls %v", run+1, secs, total, byAction)
	if b.ocfg.HeapProfile && res.HeapProfile == "" {
		path, err := b.heapProfile(ctx, p, name)
		if err != nil {
			return err
		}
		res.HeapProfile = path
		b.logf("oci ours (run %d): heap profile %s", run+1, path)
	}
	u, err := procUsage(p.Pid())
	if err != nil {
		return fmt.Errorf("CCM resource use: %w", err)
	}
	res.PeakRSSMiB = max(res.PeakRSSMiB, u.peakRSSMiB)
	p.Stop()
	return b.deleteAll(ctx)
}

// startOCICCM runs the OCI CCM (node controllers only, the recommended
// flags, load balancers off) against cloudsim.
func (b *ociBench) startOCICCM(name string) (*testcluster.Process, error) {
	cfg := configtest.Valid(fmt.Sprintf("endpoint: %s\nloadBalancer:\n  disabled: true\n", b.simURL))
	path := filepath.Join(b.dir, name+".yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	p, _, err := testcluster.CCM{
		Binary:      b.cfg.CCMBinary,
		Provider:    ociprovider.ProviderName,
		CloudConfig: path,
		Kubeconfig:  b.kubeconfig,
		Dir:         b.dir,
		Name:        name,
		// The status sync keeps upstream's 5 minutes: no sync adds calls
		// to initialization.
		ExtraArgs: b.ccmFlags(5 * time.Minute),
	}.Start()
	return p, err
}

// floorOCI: a bare client PATCHes the registered nodes with what the OCI
// CCM writes.
func (b *ociBench) floorOCI(ctx context.Context, res *OCIResult) error {
	secs, err := floorRun(ctx, b.bench, "oci floor", b.nodes, b.registerOCI, b.patchLikeTheOCICCM)
	if err != nil {
		return err
	}
	res.FloorRuns = append(res.FloorRuns, secs)
	return nil
}

// patchLikeTheOCICCM makes the OCI CCM's writes: providerID, labels and
// the taint removal, then the addresses.
func (b *ociBench) patchLikeTheOCICCM(ctx context.Context, n ociNode) error {
	zone := n.ad[strings.IndexByte(n.ad, ':')+1:]
	labels := map[string]string{
		corev1.LabelInstanceType: simoci.DefaultShape, corev1.LabelInstanceTypeStable: simoci.DefaultShape,
		corev1.LabelFailureDomainBetaZone: zone, corev1.LabelTopologyZone: zone,
		corev1.LabelFailureDomainBetaRegion: configtest.Region, corev1.LabelTopologyRegion: configtest.Region,
		ociprovider.LabelFaultDomain: simoci.DefaultFaultDomain,
	}
	meta, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"labels": labels},
		"spec":     map[string]any{"providerID": "oci://" + n.ocid, "taints": []any{}},
	})
	nodes := b.client.CoreV1().Nodes()
	if _, err := nodes.Patch(ctx, n.name, types.MergePatchType, meta, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("oci floor: patch node %s: %w", n.name, err)
	}
	addrs := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: n.privateIP}}
	if n.publicIP != "" {
		addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: n.publicIP})
	}
	addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeHostName, Address: n.name})
	status, _ := json.Marshal(map[string]any{"status": map[string]any{"addresses": addrs}})
	if _, err := nodes.Patch(ctx, n.name, types.MergePatchType, status, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("oci floor: patch node %s status: %w", n.name, err)
	}
	return nil
}

// evaluate fills the medians and checks the targets.
func (r *OCIResult) evaluate() {
	r.CallBudget = int64(OCIListings*((r.Nodes+computelookup.PageSize-1)/computelookup.PageSize) + 10)
	r.InitStats, r.FloorStats, r.RatioStats = pairStats(r.InitRuns, r.FloorRuns)
	r.InitSeconds, r.FloorSeconds, r.InitVsFloor = r.InitStats.Median, r.FloorStats.Median, r.RatioStats.Median
	r.Target = fmt.Sprintf("init <= 1.2x floor (median of the pairs); OCI calls to initialize <= %d*ceil(N/%d)+10; 0 HTTP 429; peak RSS <= 300 MiB",
		OCIListings, computelookup.PageSize)
	r.Targets = map[string]bool{
		"init_vs_floor": r.InitVsFloor > 0 && r.InitVsFloor <= 1.2,
		"calls":         r.CallsInit <= r.CallBudget,
		"http_429":      r.HTTP429 == 0,
		"rss":           r.PeakRSSMiB > 0 && r.PeakRSSMiB <= 300,
	}
	r.Met = report.AllMet(r.Targets)
}

// Print writes the section's table.
func (r *OCIResult) Print(w io.Writer) {
	fmt.Fprintf(w, "\nOCI node initialization, %d nodes (%d with a public IP); cloudsim's realistic latency, node reads limited to %.0f/s each\n\n",
		r.Nodes, r.PublicIPs, r.CloudsimReadQPS)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "measure\tvalue\ttarget\tmet")
	fmt.Fprintf(tw, "init, ours (s)\t%s\t\t\n", r.InitStats.Spread("%.1f"))
	fmt.Fprintf(tw, "floor: bare PATCH (s)\t%s\t\t\n", r.FloorStats.Spread("%.1f"))
	fmt.Fprintf(tw, "ours / floor\t%s\t<= 1.2\t%v\n", r.RatioStats.Spread("%.2fx"), r.Targets["init_vs_floor"])
	actions := slices.Sorted(maps.Keys(r.CallsByAction))
	parts := make([]string, len(actions))
	for k, a := range actions {
		parts[k] = fmt.Sprintf("%s %d", a, r.CallsByAction[a])
	}
	fmt.Fprintf(tw, "OCI calls to initialize\t%d (%s)\t<= %d\t%v\n", r.CallsInit, strings.Join(parts, ", "), r.CallBudget, r.Targets["calls"])
	fmt.Fprintf(tw, "HTTP 429 from cloudsim\t%d\t0\t%v\n", r.HTTP429, r.Targets["http_429"])
	fmt.Fprintf(tw, "CCM peak RSS (MiB)\t%.0f\t<= 300\t%v\n", r.PeakRSSMiB, r.Targets["rss"])
	_ = tw.Flush()
}
