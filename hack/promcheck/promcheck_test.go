package promcheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var (
	root          = filepath.Join("..", "..")
	metricsDoc    = filepath.Join(root, "docs", "metrics.md")
	dashboardFile = filepath.Join(root, "charts", "cloud-controller-manager", "dashboards", "ccmkit.json")
	// The chart rendered with grafanaDashboard and prometheusRule on:
	// charts/chart_test.go (TestChartSnapshots/observability) fails when
	// this file differs from what the chart renders.
	renderedChart = filepath.Join(root, "charts", "testdata", "observability.yaml")
)

func catalog(t *testing.T) *Catalog {
	t.Helper()
	b, err := os.ReadFile(metricsDoc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseCatalog(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var (
	legendLabel = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)
	alertLabel  = regexp.MustCompile(`\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)`)
)

type query struct {
	where, expr string
	uses        []string // labels the legend or the annotations print
}

type panel struct {
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"` // a collapsed row's panels
	Targets []struct {
		Expr         string `json:"expr"`
		LegendFormat string `json:"legendFormat"`
	} `json:"targets"`
}

func dashboardQueries(t *testing.T, data []byte) []query {
	t.Helper()
	var dash struct {
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var out []query
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for i, tg := range p.Targets {
				q := query{where: "dashboard panel " + p.Title + " target " + string(rune('A'+i)), expr: tg.Expr}
				for _, m := range legendLabel.FindAllStringSubmatch(tg.LegendFormat, -1) {
					q.uses = append(q.uses, m[1])
				}
				out = append(out, q)
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	return out
}

func ruleQueries(t *testing.T) []query {
	t.Helper()
	b, err := os.ReadFile(renderedChart)
	if err != nil {
		t.Fatal(err)
	}
	var out []query
	for _, doc := range strings.Split(string(b), "\n---") {
		var obj struct {
			Kind string `json:"kind"`
			Spec struct {
				Groups []struct {
					Rules []struct {
						Alert       string            `json:"alert"`
						Record      string            `json:"record"`
						Expr        string            `json:"expr"`
						Annotations map[string]string `json:"annotations"`
					} `json:"rules"`
				} `json:"groups"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("%s: %v", renderedChart, err)
		}
		if obj.Kind != "PrometheusRule" {
			continue
		}
		for _, g := range obj.Spec.Groups {
			for _, r := range g.Rules {
				q := query{where: "rule " + r.Alert + r.Record, expr: r.Expr}
				for _, a := range r.Annotations {
					for _, m := range alertLabel.FindAllStringSubmatch(a, -1) {
						q.uses = append(q.uses, m[1])
					}
				}
				out = append(out, q)
			}
		}
	}
	return out
}

// Every query of the chart's dashboard and alerts parses, and names only
// metrics and labels docs/metrics.md documents for those metrics; the labels
// a legend or an alert annotation prints are ones the query's result has.
func TestChartQueriesUseDocumentedMetrics(t *testing.T) {
	c := catalog(t)
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	dash := dashboardQueries(t, data)
	rules := ruleQueries(t)
	if len(dash) < 10 || len(rules) < 5 {
		t.Fatalf("found %d dashboard queries and %d rules: the files were not read as expected", len(dash), len(rules))
	}
	for _, q := range append(dash, rules...) {
		result, err := c.Check(q.expr)
		if err != nil {
			t.Errorf("%s: %v", q.where, err)
			continue
		}
		for _, l := range q.uses {
			if !slices.Contains(result, l) {
				t.Errorf("%s prints label %q, which the query's result does not have (it has %v)", q.where, l, result)
			}
		}
	}
}

const sampleDoc = "intro\n\n" +
	"| metric | type | labels | meaning |\n" +
	"|---|---|---|---|\n" +
	"| `a_total` | counter | `provider`, `code` | x |\n" +
	"| `b_seconds` | histogram | `action` | y |\n" +
	"| `c` | gauge | — | z |\n" +
	"| `d_total` | counter | `source` (`cache`, `cloud`) | w |\n" +
	"\n| target label | meaning |\n|---|---|\n| `pod` | the pod |\n"

func TestParseCatalog(t *testing.T) {
	c, err := ParseCatalog(sampleDoc)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"a_total":          {"provider", "code"},
		"b_seconds_bucket": {"action", "le"},
		"b_seconds_sum":    {"action"},
		"b_seconds_count":  {"action"},
		"c":                nil,
		"d_total":          {"source"},
	}
	if len(c.Series) != len(want) {
		t.Errorf("series = %v, want %v", c.Series, want)
	}
	for name, labels := range want {
		if got, ok := c.Series[name]; !ok || !slices.Equal(got, labels) {
			t.Errorf("%s: labels %v (documented: %v), want %v", name, got, ok, labels)
		}
	}
	if !slices.Equal(c.TargetLabels, []string{"pod"}) {
		t.Errorf("target labels = %v, want [pod]", c.TargetLabels)
	}
	for _, bad := range []string{
		"| metric | type | labels |\n|---|---|---|\n| `x` | summary | — |\n",
		"| metric | type | labels |\n|---|---|---|\n| x | counter | — |\n",
		"| metric | type | labels |\n|---|---|---|\n| `x` | counter | — |\n| `x` | gauge | — |\n",
		"no tables",
	} {
		if _, err := ParseCatalog(bad); err == nil {
			t.Errorf("ParseCatalog(%q) accepted it", bad)
		}
	}
}

func TestCheck(t *testing.T) {
	c, err := ParseCatalog(sampleDoc)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		query   string
		result  []string // labels of the result, when valid
		wantErr string   // substring of the error, when not
	}{
		{query: `sum by (provider) (rate(a_total{code!="OK"}[$__rate_interval]))`, result: []string{"provider"}},
		{query: `sum without (code) (rate(a_total[5m]))`, result: []string{"pod", "provider"}},
		{query: `histogram_quantile(0.9, sum by (action, le) (rate(b_seconds_bucket[5m])))`, result: []string{"action"}},
		{query: `sum(rate(b_seconds_sum[5m])) / sum(rate(b_seconds_count[5m]))`, result: []string{}},
		{query: `max by (pod) (c) > 3`, result: []string{"pod"}},
		{query: `2 * sum by (source) (d_total{source="cache"})`, result: []string{"source"}},
		{query: `sum by (provider) (a_total) / on (provider) group_left sum by (provider) (a_total)`, result: []string{"provider"}},
		{query: `{__name__="c"}`, result: []string{"pod"}},
		{query: `sum(rate(a_total[5m]`, wantErr: "parse"},
		{query: `rate(unknown_total[5m])`, wantErr: "unknown_total is not documented"},
		{query: `b_seconds`, wantErr: "b_seconds is not documented"},
		{query: `a_total{action="x"}`, wantErr: `label "action" is not documented`},
		{query: `sum by (action) (a_total)`, wantErr: `label "action" is not documented`},
		{query: `sum without (action) (a_total)`, wantErr: `label "action" is not documented`},
		{query: `sum by (provider) (sum by (code) (a_total))`, wantErr: `label "provider" is not documented`},
		{query: `sum by (le) (rate(b_seconds_count[5m]))`, wantErr: `label "le" is not documented`},
		{query: `histogram_quantile(0.9, sum by (action) (rate(b_seconds_bucket[5m])))`, wantErr: "without le"},
		{query: `sum by (code) (a_total) / on (kind) sum by (code) (a_total)`, wantErr: `label "kind" is on neither side`},
		{query: `{__name__=~"a_.*"}`, wantErr: "matched exactly"},
	}
	for _, tc := range cases {
		got, err := c.Check(tc.query)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("Check(%s): %v", tc.query, err)
		case tc.wantErr == "" && !slices.Equal(got, tc.result):
			t.Errorf("Check(%s) = %v, want %v", tc.query, got, tc.result)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("Check(%s) error = %v, want one containing %q", tc.query, err, tc.wantErr)
		}
	}
}
