package charts_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const dashboardFile = "cloud-controller-manager/dashboards/ccmkit.json"

// checkDashboardConfigMap: the ConfigMap carries the sidecar's label and
// exactly the dashboard file, which is a dashboard with queries.
func checkDashboardConfigMap(t *testing.T, cm *unstructured.Unstructured) {
	t.Helper()
	if cm == nil {
		t.Fatal("no dashboard ConfigMap rendered")
	}
	if got := cm.GetLabels()["grafana_dashboard"]; got != "1" {
		t.Errorf("ConfigMap label grafana_dashboard = %q, want \"1\" (the Grafana sidecar's selector)", got)
	}
	if got := cm.GetAnnotations()["grafana_folder"]; got != "Kubernetes" {
		t.Errorf("ConfigMap annotation grafana_folder = %q, want the value given", got)
	}
	data, _, _ := unstructured.NestedString(cm.Object, "data", "ccmkit.json")
	file, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(data) != strings.TrimSpace(string(file)) {
		t.Errorf("ConfigMap data ccmkit.json differs from %s", dashboardFile)
	}
	var dash struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal([]byte(data), &dash); err != nil {
		t.Fatalf("dashboard is not JSON: %v", err)
	}
	if dash.Title == "" || dash.UID == "" {
		t.Errorf("dashboard title %q, uid %q: both must be set", dash.Title, dash.UID)
	}
	queries := 0
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("panel %q has an empty query", p.Title)
			}
			queries++
		}
	}
	if queries < 10 {
		t.Errorf("dashboard has %d queries, want the panels of docs/operations.md (at least 10)", queries)
	}
}

// checkPrometheusRule: the rule carries the operator selector's labels, and
// every alert has a for, a severity and annotations whose runbook_url
// names an existing section of docs/operations.md.
func checkPrometheusRule(t *testing.T, pr *unstructured.Unstructured) {
	t.Helper()
	if pr == nil {
		t.Fatal("no PrometheusRule rendered")
	}
	if pr.GetAPIVersion() != "monitoring.coreos.com/v1" {
		t.Errorf("apiVersion = %s", pr.GetAPIVersion())
	}
	if got := pr.GetLabels()["release"]; got != "kube-prometheus-stack" {
		t.Errorf("label release = %q: prometheusRule.labels not applied", got)
	}
	if got := pr.GetLabels()["app.kubernetes.io/name"]; got != "cloud-controller-manager" {
		t.Errorf("label app.kubernetes.io/name = %q: the chart's labels are missing", got)
	}
	opsPath := filepath.Join("..", "docs", "operations.md")
	anchors := docAnchors(t, opsPath)
	opsBytes, err := os.ReadFile(opsPath)
	if err != nil {
		t.Fatal(err)
	}
	ops := string(opsBytes)
	groups, _, _ := unstructured.NestedSlice(pr.Object, "spec", "groups")
	if len(groups) == 0 {
		t.Fatal("PrometheusRule has no groups")
	}
	alerts := map[string]bool{}
	for _, g := range groups {
		g := g.(map[string]any)
		rules, _ := g["rules"].([]any)
		if len(rules) == 0 {
			t.Errorf("group %v has no rules", g["name"])
		}
		for _, r := range rules {
			r := r.(map[string]any)
			name, _ := r["alert"].(string)
			if name == "" || alerts[name] {
				t.Errorf("rule %v: missing or duplicate alert name", r)
			}
			alerts[name] = true
			if e, _ := r["expr"].(string); strings.TrimSpace(e) == "" {
				t.Errorf("%s: empty expr", name)
			}
			if f, _ := r["for"].(string); !regexp.MustCompile(`^[0-9]+[smh]$`).MatchString(f) {
				t.Errorf("%s: for = %q, want a duration", name, f)
			}
			labels, _ := r["labels"].(map[string]any)
			if s := labels["severity"]; s != "warning" && s != "critical" {
				t.Errorf("%s: severity = %v, want warning or critical", name, s)
			}
			ann, _ := r["annotations"].(map[string]any)
			for _, k := range []string{"summary", "description", "runbook_url"} {
				if v, _ := ann[k].(string); strings.TrimSpace(v) == "" {
					t.Errorf("%s: annotation %s missing", name, k)
				}
			}
			url, _ := ann["runbook_url"].(string)
			base, anchor, ok := strings.Cut(url, "#")
			if !ok || !strings.HasSuffix(base, "/docs/operations.md") || !anchors[anchor] {
				t.Errorf("%s: runbook_url %q does not name a section of docs/operations.md", name, url)
			}
			if !strings.Contains(ops, name) {
				t.Errorf("%s: docs/operations.md does not mention it", name)
			}
		}
	}
	for _, want := range []string{"CCMKitCloudAPIErrors", "CCMKitCloudAPIThrottled", "CCMKitLoadBalancerSyncFailing",
		"CCMKitLoadBalancerDriftRecurring", "CCMKitNodeInitializationBacklog", "CCMKitLeaderChanges"} {
		if !alerts[want] {
			t.Errorf("alert %s missing", want)
		}
	}
}

// docAnchors are the GitHub anchors of a Markdown file's headings.
func docAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	drop := regexp.MustCompile(`[^a-z0-9 _-]`)
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#")))
		out[strings.ReplaceAll(drop.ReplaceAllString(h, ""), " ", "-")] = true
	}
	return out
}
