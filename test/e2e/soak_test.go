//go:build e2e && soak

package e2e

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ccmkit/ccm/bench/report"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/internal/testcluster/traffic"
)

// TestSoak is `make soak` (docs/reliability.md, "The soak"): both clouds at
// once for SOAK_DURATION (30m by default), one cloudsim serving both, a
// Tencent CCM and an OCI CCM as real processes under the shipped RBAC,
// each on a control plane of its own (two CCMs on one cluster would each
// claim the other's Services: cloud_oci_test.go). Each cloud, in a loop
// until the time is up:
//
//   - one node replaced (soakRun.replace: join, in service, tainted,
//     drained, instance terminated, Node deleted, deregistered);
//   - one Service created (a CLB on Tencent; an LB and an NLB in turn on
//     OCI), answering from every node, with a load of its own; changed (its
//     health check interval) until the cloud shows it; deleted, and its
//     load balancer gone;
//
// while a client load runs through the persistent Services' VIPs the whole
// time. Every SOAK_SAMPLE (30s) each CCM's RSS and open file descriptors
// (/proc/<pid>) and goroutines (go_goroutines on its /metrics) are sampled.
//
// It passes when every series is flat after SOAK_WARMUP (report.FitTrend:
// no slope whose 95% interval lies above 0 with a fitted growth over the
// run beyond soakTolerances), no request failed, and the inventory of
// cloudsim against both clusters finds nothing stray or missing, before
// and after the teardown. It writes SOAK_OUT (JSON) and an SVG beside it.
// Its files carry the build tag soak besides e2e, so it is never part of
// `make test`; `make soak` builds with both.
func TestSoak(t *testing.T) {
	cfg := soakConfigFromEnv(t)
	started := time.Now()
	t.Logf("soak: %s, sampling every %s, fit after %s, into %s", cfg.duration, cfg.sample, cfg.warmup, cfg.out)

	clouds := []*soakCloud{soakTencent(t), soakOCI(t)}
	sampler := startSampler(clouds, cfg.sample)
	end := time.Now().Add(cfg.duration)
	t.Run("churn", func(t *testing.T) {
		for _, c := range clouds {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				c.run(t, end)
			})
		}
	})
	series := sampler.stop()

	doc := soakResult{Started: started.UTC().Format(time.RFC3339), DurationSeconds: cfg.duration.Seconds(),
		SampleSeconds: cfg.sample.Seconds(), WarmupSeconds: cfg.warmup.Seconds(), Traffic: map[string]traffic.Counts{}}
	for _, c := range clouds {
		doc.Churn = append(doc.Churn, c.counts)
		doc.Traffic[c.name] = c.traffic
		doc.Requests += c.traffic.Requests
		doc.RequestsFailed += c.traffic.RequestsFailed
		doc.Inventory = append(doc.Inventory, c.inventory)
		if len(c.inventory.Problems) > 0 || len(c.inventory.AfterTeardown) > 0 {
			doc.fail("%s inventory: %v; after the teardown: %v", c.name, c.inventory.Problems, c.inventory.AfterTeardown)
		}
	}
	if doc.RequestsFailed != 0 {
		doc.fail("%d of %d requests failed", doc.RequestsFailed, doc.Requests)
	}
	if t.Failed() {
		doc.fail("the churn failed (see the test log)")
	}
	var panels []report.TrendPanel
	for _, q := range soakQuantities {
		panel := report.TrendPanel{Title: q.title, YLabel: q.unit}
		for _, s := range series {
			x, y := s.after(cfg.warmup, q.value)
			tr := report.FitTrend(x, y, q.tol)
			doc.CCMs = append(doc.CCMs, soakSeries{CCM: s.name, Series: q.name, Unit: q.unit, Judged: !q.informational, Trend: tr, X: x, Y: y})
			panel.Lines = append(panel.Lines, report.TrendLine{Name: s.name, X: x, Y: y, Trend: tr})
			t.Logf("%s %s: %d samples, slope %+.3g %s/h, 95%% interval [%.3g, %.3g], growth %.3g (allowed %.3g): %s",
				s.name, q.name, tr.Samples, tr.Slope, q.unit, tr.SlopeCI95[0], tr.SlopeCI95[1], tr.Growth, tr.Allowed, tr.Verdict)
			if !tr.Pass && !q.informational {
				doc.fail("%s %s: %s", s.name, q.name, tr.Verdict)
			}
		}
		panels = append(panels, panel)
	}
	for _, s := range series {
		if s.err != "" {
			doc.fail("sampling %s: %s", s.name, s.err)
		}
	}
	doc.Pass = len(doc.Failures) == 0
	doc.WholeRunSeconds = time.Since(started).Seconds()
	t.Logf("traffic: %d requests, %d failed; %v", doc.Requests, doc.RequestsFailed, doc.Traffic)
	for _, ch := range doc.Churn {
		t.Logf("churn %s: %+v", ch.Cloud, ch)
	}
	for _, inv := range doc.Inventory {
		t.Logf("inventory %s: checked %v; problems %v; after the teardown %v", inv.Cloud, inv.Checked, inv.Problems, inv.AfterTeardown)
	}
	if err := writeSoak(cfg.out, doc, panels); err != nil {
		t.Error(err)
	}
	for _, f := range doc.Failures {
		t.Error(f)
	}
}

// soakQuantities are the sampled series, each with its tolerance
// (report.Tolerance): the growth over the run that is still flat.
var soakQuantities = []struct {
	name, title, unit string
	value             func(soakSample) float64
	tol               report.Tolerance
	// informational: fitted and plotted, not judged.
	informational bool
}{
	// RSS: 10% of the mean, at least 4 MiB: the Go heap settles at a
	// multiple of the live heap (GOGC) and the OS takes pages back lazily.
	{"rss", "resident set size", "MiB", func(s soakSample) float64 { return s.RSSMiB }, report.Tolerance{Abs: 4, Rel: 0.10}, false},
	// Goroutines and descriptors: a few, or 5%: a leak of one per
	// Service or node churned is dozens over a run.
	{"goroutines", "goroutines (go_goroutines)", "goroutines", func(s soakSample) float64 { return s.Goroutines }, report.Tolerance{Abs: 5, Rel: 0.05}, false},
	{"fds", "open file descriptors", "fds", func(s soakSample) float64 { return s.FDs }, report.Tolerance{Abs: 3, Rel: 0.05}, false},
	// The Go heap in use (go_memstats_heap_inuse_bytes): tells heap
	// growth from the runtime's and the OS's handling of pages when RSS
	// moves.
	{"heap_inuse", "Go heap in use (go_memstats_heap_inuse_bytes)", "MiB", func(s soakSample) float64 { return s.HeapMiB }, report.Tolerance{Abs: 4, Rel: 0.10}, true},
}

type soakConfig struct {
	duration, sample, warmup time.Duration
	out                      string
}

func soakConfigFromEnv(t *testing.T) soakConfig {
	t.Helper()
	dur := func(key string, def time.Duration) time.Duration {
		v := os.Getenv(key)
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("%s=%q: want a positive duration such as 30m", key, v)
		}
		return d
	}
	cfg := soakConfig{duration: dur("SOAK_DURATION", 30*time.Minute), sample: dur("SOAK_SAMPLE", 30*time.Second),
		warmup: dur("SOAK_WARMUP", 3*time.Minute), out: os.Getenv("SOAK_OUT")}
	if cfg.out == "" {
		cfg.out = filepath.Join(repoRoot(), "bench", "results", "soak.json")
	} else if !filepath.IsAbs(cfg.out) {
		cfg.out = filepath.Join(repoRoot(), cfg.out)
	}
	if cfg.warmup >= cfg.duration {
		t.Fatalf("SOAK_WARMUP %s is not shorter than SOAK_DURATION %s", cfg.warmup, cfg.duration)
	}
	return cfg
}

// soakResult is soak.json.
type soakResult struct {
	Started         string                    `json:"started"`
	DurationSeconds float64                   `json:"duration_seconds"`
	WholeRunSeconds float64                   `json:"whole_run_seconds"`
	SampleSeconds   float64                   `json:"sample_seconds"`
	WarmupSeconds   float64                   `json:"warmup_seconds"`
	CCMs            []soakSeries              `json:"series"`
	Churn           []soakCounts              `json:"churn"`
	Requests        int64                     `json:"requests"`
	RequestsFailed  int64                     `json:"requests_failed"`
	Traffic         map[string]traffic.Counts `json:"traffic"`
	Inventory       []soakInventory           `json:"inventory"`
	Pass            bool                      `json:"pass"`
	Failures        []string                  `json:"failures,omitempty"`
}

func (r *soakResult) fail(format string, args ...any) {
	r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
}

// soakSeries is one CCM's series after the warm-up, with its judgement.
type soakSeries struct {
	CCM    string       `json:"ccm"`
	Series string       `json:"series"`
	Unit   string       `json:"unit"`
	Judged bool         `json:"judged"`
	Trend  report.Trend `json:"trend"`
	X      []float64    `json:"seconds"`
	Y      []float64    `json:"values"`
}

// soakCounts is what one cloud's churn did.
type soakCounts struct {
	Cloud             string `json:"cloud"`
	Iterations        int    `json:"iterations"`
	NodesReplaced     int    `json:"nodes_replaced"`
	ServicesCreated   int    `json:"services_created"`
	ServicesChanged   int    `json:"services_changed"`
	ServicesDeleted   int    `json:"services_deleted"`
	PersistentVIPs    int    `json:"persistent_vips"`
	TransientRequests int64  `json:"transient_requests"`
}

// soakInventory is the inventory of one cloud against its cluster: what
// was checked (by kind), what was stray or missing with the Services and
// Nodes in place, and what was left once they were deleted.
type soakInventory struct {
	Cloud         string         `json:"cloud"`
	Checked       map[string]int `json:"checked"`
	Problems      []string       `json:"problems"`
	AfterTeardown []string       `json:"left_after_teardown"`
}

func writeSoak(path string, doc soakResult, panels []report.TrendPanel) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return report.TrendPlot(strings.TrimSuffix(path, ".json")+".svg", panels)
}

// A soakSample is one CCM at one moment.
type soakSample struct {
	At                               time.Duration
	RSSMiB, Goroutines, FDs, HeapMiB float64
}

type soakProcSeries struct {
	name    string
	samples []soakSample
	err     string // the first sampling error
}

// after is the series' value from the samples after the warm-up, x in
// seconds since the start.
func (s *soakProcSeries) after(warmup time.Duration, value func(soakSample) float64) (x, y []float64) {
	for _, smp := range s.samples {
		if smp.At >= warmup {
			x = append(x, smp.At.Seconds())
			y = append(y, value(smp))
		}
	}
	return x, y
}

type soakSampler struct {
	done   chan struct{}
	wg     sync.WaitGroup
	series []*soakProcSeries
}

// startSampler samples every CCM at once, now and every interval.
func startSampler(clouds []*soakCloud, interval time.Duration) *soakSampler {
	s := &soakSampler{done: make(chan struct{})}
	for _, c := range clouds {
		s.series = append(s.series, &soakProcSeries{name: "ccm-" + c.name})
	}
	begin := time.Now()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			for i, c := range clouds {
				smp, err := sampleProcess(c.ccm)
				smp.At = time.Since(begin)
				if err != nil {
					if s.series[i].err == "" {
						s.series[i].err = err.Error()
					}
					continue
				}
				s.series[i].samples = append(s.series[i].samples, smp)
			}
			select {
			case <-s.done:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *soakSampler) stop() []*soakProcSeries {
	close(s.done)
	s.wg.Wait()
	return s.series
}

// sampleProcess reads a CCM's RSS (VmRSS) and open descriptors from /proc
// and its goroutines from go_goroutines on its /metrics.
func sampleProcess(p *testcluster.Process) (soakSample, error) {
	var smp soakSample
	if exited, code := p.Exited(); exited {
		return smp, fmt.Errorf("the CCM exited (%d)", code)
	}
	proc := fmt.Sprintf("/proc/%d", p.Pid())
	status, err := os.ReadFile(proc + "/status")
	if err != nil {
		return smp, err
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err != nil {
				return smp, fmt.Errorf("%s/status: VmRSS %q: %w", proc, v, err)
			}
			smp.RSSMiB = kb / 1024
		}
	}
	fds, err := os.ReadDir(proc + "/fd")
	if err != nil {
		return smp, err
	}
	smp.FDs = float64(len(fds))
	smp.Goroutines, smp.HeapMiB, err = scrapeRuntime(p.SecurePort)
	return smp, err
}

var metricsClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
	TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the CCM's self-signed serving cert
}}

// scrapeRuntime reads go_goroutines and go_memstats_heap_inuse_bytes (in
// MiB) from the CCM's /metrics (open to anonymous reads by
// soakMetricsArgs, as it is to a Prometheus with a token).
func scrapeRuntime(port int) (goroutines, heapMiB float64, err error) {
	resp, err := metricsClient.Get(fmt.Sprintf("https://127.0.0.1:%d/metrics", port))
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return 0, 0, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	found := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if ok && (name == "go_goroutines" || name == "go_memstats_heap_inuse_bytes") {
			if found[name], err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
				return 0, 0, fmt.Errorf("GET /metrics: %s %q: %w", name, v, err)
			}
		}
	}
	g, okG := found["go_goroutines"]
	h, okH := found["go_memstats_heap_inuse_bytes"]
	if !okG || !okH {
		return 0, 0, fmt.Errorf("GET /metrics: no go_goroutines or go_memstats_heap_inuse_bytes (%v)", sc.Err())
	}
	return g, h / (1 << 20), nil
}

// soakMetricsArgs let the sampler read /metrics without a token; the
// CCM's RBAC is the shipped one all the same.
var soakMetricsArgs = []string{"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics"}

// soakCloud is one cloud under the soak: its cluster, its CCM, and what
// the churn needs from the cloud (upgradeCloud's fixtures).
type soakCloud struct {
	name   string
	client kubernetes.Interface
	ccm    *testcluster.Process
	cloud  upgradeCloud
	// persistent are the Services that take traffic the whole time;
	// transient(sel, i) is iteration i's Service, and its change: an
	// annotation and its new value.
	persistent []*corev1.Service
	transient  func(sel string, i int) (svc *corev1.Service, key, value string)
	// inventory finds what is stray or missing in the cloud against the
	// cluster's Services and Nodes; leftovers what the CCM left once they
	// are all deleted.
	inventoryOf func(svcs []corev1.Service, nodes []corev1.Node, checked map[string]int) []string
	leftovers   func() []string
	// Filled by run.
	counts    soakCounts
	traffic   traffic.Counts
	inventory soakInventory
}
