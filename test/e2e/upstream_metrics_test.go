//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// docMetric is one row of a metric table of docs/metrics.md.
type docMetric struct {
	name, typ string
	labels    []string
	upstream  bool // in the "Upstream metrics" section
}

var (
	docBackticked = regexp.MustCompile("`([^`]+)`")
	docParens     = regexp.MustCompile(`\([^)]*\)`)
)

// docMetrics reads the metric tables of docs/metrics.md (the same format
// hack/promcheck checks the chart's queries against).
func docMetrics(t *testing.T) []docMetric {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []docMetric
	upstream, inTable := false, false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "## ") {
			upstream = strings.HasPrefix(line, "## Upstream metrics")
		}
		if !strings.HasPrefix(line, "|") {
			inTable = false
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if cells[0] == "metric" {
			inTable = true
			continue
		}
		if !inTable || strings.Trim(cells[0], "-") == "" {
			continue
		}
		m := docMetric{name: strings.Trim(cells[0], "`"), typ: cells[1], upstream: upstream}
		for _, l := range docBackticked.FindAllStringSubmatch(docParens.ReplaceAllString(cells[2], ""), -1) {
			m.labels = append(m.labels, l[1])
		}
		out = append(out, m)
	}
	return out
}

// servedFamily is a metric family as served: its type and the label names
// its series carry (a histogram's without le).
type servedFamily struct {
	typ    string
	labels []string
}

func servedFamilies(t *testing.T, body string) map[string]servedFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	out := map[string]servedFamily{}
	for name, f := range fams {
		var labels []string
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				if !slices.Contains(labels, lp.GetName()) {
					labels = append(labels, lp.GetName())
				}
			}
		}
		sort.Strings(labels)
		out[name] = servedFamily{typ: strings.ToLower(f.GetType().String()), labels: labels}
	}
	return out
}

// Every metric docs/metrics.md lists as upstream, which the chart's
// dashboard and alerts rely on, is served by a running CCM with exactly the
// documented labels; every ccmkit metric served carries exactly its
// documented labels. The suite's CCM (every controller, routes on) and a
// second, leader-electing CCM are scraped as a metrics reader would.
func TestUpstreamMetricsServed(t *testing.T) {
	token := metricsReaderToken(t)
	leader, err := startCCM("ccm-upstream-metrics",
		writeCloudConfig(suite.dir, "cloud-upstream-metrics.yaml", upstreamMetricsSecretID, secretKey),
		"--controllers=cloud-node",
		"--leader-elect=true",
		"--leader-elect-lease-duration=4s",
		"--leader-elect-renew-deadline=3s",
		"--leader-elect-retry-period=1s")
	if err != nil {
		t.Fatal(err)
	}
	defer leader.Stop()

	docs := docMetrics(t)
	var upstream []docMetric
	for _, m := range docs {
		if m.upstream {
			upstream = append(upstream, m)
		}
	}
	if len(upstream) < 5 {
		t.Fatalf("docs/metrics.md lists %d upstream metrics; the section was not found", len(upstream))
	}

	// The route controller's counter appears after its first reconcile, the
	// leader's gauge once it holds the lease: wait for every documented
	// upstream metric, up to a minute.
	var served map[string]servedFamily
	var missing []string
	deadline := time.Now().Add(60 * time.Second)
	for {
		served = map[string]servedFamily{}
		for _, p := range []struct {
			name string
			port int
		}{{"suite CCM", suite.ccm.SecurePort}, {"leader-electing CCM", leader.SecurePort}} {
			code, body := scrape(t, p.port, "/metrics", token)
			if code != 200 {
				t.Fatalf("GET /metrics of the %s as a metrics reader: HTTP %d", p.name, code)
			}
			for name, f := range servedFamilies(t, body) {
				if prev, ok := served[name]; ok {
					// A family may have fewer series on one CCM.
					f.labels = union(prev.labels, f.labels)
				}
				served[name] = f
			}
		}
		missing = missing[:0]
		for _, m := range upstream {
			if _, ok := served[m.name]; !ok {
				missing = append(missing, m.name)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	if len(missing) > 0 {
		t.Errorf("documented upstream metrics not served: %v", missing)
	}
	checked := 0
	for _, m := range docs {
		f, ok := served[m.name]
		if !ok {
			continue // e.g. the OCI metrics, on a Tencent Cloud CCM
		}
		want := slices.Clone(m.labels)
		sort.Strings(want)
		if f.typ != m.typ || !slices.Equal(f.labels, want) {
			t.Errorf("%s is served as a %s with labels %v; docs/metrics.md documents a %s with %v", m.name, f.typ, f.labels, m.typ, want)
		}
		checked++
	}
	t.Logf("%d documented metrics served as documented", checked)
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}
