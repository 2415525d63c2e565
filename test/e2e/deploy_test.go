//go:build e2e

package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"

	"github.com/ccmkit/ccm/internal/chartrender"
)

// The shipped manifests and the rendered chart pass the real apiserver's
// validation and admission (server-side dry-run): schema, defaults,
// PriorityClass, RBAC references.
func TestDeployManifestsDryRun(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot(), "deploy", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in deploy/: %v", err)
	}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			dryRun(t, f, data)
		})
	}
	// The patches, each merged into the shipped Deployment as kustomize's
	// strategic merge does.
	patches, err := filepath.Glob(filepath.Join(repoRoot(), "deploy", "patches", "*.yaml"))
	if err != nil || len(patches) == 0 {
		t.Fatalf("no patches in deploy/patches/: %v", err)
	}
	base, err := os.ReadFile(filepath.Join(repoRoot(), "deploy", "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range patches {
		t.Run("patches/"+filepath.Base(f), func(t *testing.T) {
			patch, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			baseJSON, err1 := yaml.YAMLToJSON(base)
			patchJSON, err2 := yaml.YAMLToJSON(patch)
			if err := errors.Join(err1, err2); err != nil {
				t.Fatal(err)
			}
			merged, err := strategicpatch.StrategicMergePatch(baseJSON, patchJSON, appsv1.Deployment{})
			if err != nil {
				t.Fatalf("merge into deploy/deployment.yaml: %v", err)
			}
			if string(merged) == string(baseJSON) {
				t.Fatal("the patch changes nothing in deploy/deployment.yaml")
			}
			dryRun(t, f, merged)
		})
	}
}

func TestChartDryRun(t *testing.T) {
	cases := map[string]map[string]any{
		"deployment":      nil,
		"daemonset":       {"kind": "DaemonSet"},
		"single-replica":  {"replicaCount": 1, "extraArgs": []any{"--v=4"}},
		"existing-secret": {"config": map[string]any{"existingSecret": "cloud-controller-manager-config"}},
		// The dashboard ConfigMap (the PrometheusRule needs the operator's
		// CRD, which this apiserver does not have; chart tests cover it).
		"grafana-dashboard": {"grafanaDashboard": map[string]any{"enabled": true}},
	}
	for name, values := range cases {
		t.Run(name, func(t *testing.T) {
			docs, err := chartrender.Render(filepath.Join(repoRoot(), "charts", "cloud-controller-manager"),
				"cloud-controller-manager", "kube-system", values)
			if err != nil {
				t.Fatal(err)
			}
			dryRun(t, "chart/"+name, []byte(strings.Join(docs, "---\n")))
		})
	}
}

func dryRun(t *testing.T, source string, data []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := suite.cluster.ApplyYAML(ctx, source, data, true); err != nil {
		t.Fatalf("server-side dry-run: %v", err)
	}
}
