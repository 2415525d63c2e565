// Snapshot tests of the Helm chart, rendered with the Helm Go library. Run
// `go test ./charts -update` to rewrite the snapshots after a deliberate change.
package charts_test

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/ccmkit/ccm/internal/chartrender"
	"github.com/ccmkit/ccm/internal/provider"
)

var update = flag.Bool("update", false, "rewrite the snapshot files")

const chartDir = "cloud-controller-manager"

type rendered struct {
	docs []string
	objs []*unstructured.Unstructured
}

func render(t *testing.T, values map[string]any) rendered {
	t.Helper()
	docs, err := chartrender.Render(chartDir, "cloud-controller-manager", "kube-system", values)
	if err != nil {
		t.Fatal(err)
	}
	r := rendered{docs: docs}
	for _, d := range docs {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			t.Fatalf("rendered document is not YAML: %v\n%s", err, d)
		}
		r.objs = append(r.objs, &unstructured.Unstructured{Object: m})
	}
	return r
}

func (r rendered) find(kind, name string) *unstructured.Unstructured {
	for _, o := range r.objs {
		if o.GetKind() == kind && (name == "" || o.GetName() == name) {
			return o
		}
	}
	return nil
}

func decode[T any](t *testing.T, o *unstructured.Unstructured) *T {
	t.Helper()
	if o == nil {
		t.Fatal("object not rendered")
	}
	b, err := o.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := yaml.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

func container(t *testing.T, spec corev1.PodSpec) corev1.Container {
	t.Helper()
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(spec.Containers))
	}
	return spec.Containers[0]
}

// snapshot compares the rendered chart with testdata/<name>.yaml.
func snapshot(t *testing.T, name string, r rendered) {
	t.Helper()
	got := strings.Join(r.docs, "---\n")
	path := filepath.Join("testdata", name+".yaml")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./charts -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("rendered chart differs from %s (run go test ./charts -update if the change is deliberate)", path)
	}
}

func TestChartSnapshots(t *testing.T) {
	cases := []struct {
		name   string
		values map[string]any
		check  func(t *testing.T, r rendered)
	}{
		{"default", nil, func(t *testing.T, r rendered) {
			d := decode[appsv1.Deployment](t, r.find("Deployment", ""))
			if *d.Spec.Replicas != 2 {
				t.Errorf("replicas = %d, want 2", *d.Spec.Replicas)
			}
			c := container(t, d.Spec.Template.Spec)
			for _, want := range []string{"--cloud-provider=tencentcloud", "--leader-elect=true", "--cloud-config=/etc/ccm/cloud.yaml"} {
				if !slices.Contains(c.Args, want) {
					t.Errorf("args %v lack %s", c.Args, want)
				}
			}
			checkHardening(t, d.Spec.Template.Spec)
			if s := r.find("Secret", "cloud-controller-manager-config"); s == nil {
				t.Error("no config Secret rendered")
			}
			if r.find("PodMonitor", "") != nil {
				t.Error("PodMonitor rendered although monitoring is off")
			}
			if r.find("ConfigMap", "") != nil || r.find("PrometheusRule", "") != nil {
				t.Error("dashboard ConfigMap or PrometheusRule rendered although both are off by default")
			}
		}},
		{"single-replica", map[string]any{"replicaCount": 1}, func(t *testing.T, r rendered) {
			d := decode[appsv1.Deployment](t, r.find("Deployment", ""))
			if c := container(t, d.Spec.Template.Spec); !slices.Contains(c.Args, "--leader-elect=false") {
				t.Errorf("single replica: args %v lack --leader-elect=false", c.Args)
			}
		}},
		{"daemonset", map[string]any{"kind": "DaemonSet"}, func(t *testing.T, r rendered) {
			if r.find("Deployment", "") != nil {
				t.Error("DaemonSet mode also rendered a Deployment")
			}
			ds := decode[appsv1.DaemonSet](t, r.find("DaemonSet", ""))
			if _, ok := ds.Spec.Template.Spec.NodeSelector["node-role.kubernetes.io/control-plane"]; !ok {
				t.Errorf("nodeSelector = %v, want control-plane nodes", ds.Spec.Template.Spec.NodeSelector)
			}
			if c := container(t, ds.Spec.Template.Spec); !slices.Contains(c.Args, "--leader-elect=true") {
				t.Errorf("args %v lack --leader-elect=true", c.Args)
			}
			checkHardening(t, ds.Spec.Template.Spec)
		}},
		{"existing-secret-extra-args", map[string]any{
			"config":    map[string]any{"existingSecret": "my-cloud-config"},
			"extraArgs": []any{"--v=4", "--controllers=cloud-node,cloud-node-lifecycle"},
		}, func(t *testing.T, r rendered) {
			if r.find("Secret", "") != nil {
				t.Error("a Secret was rendered although existingSecret is set")
			}
			d := decode[appsv1.Deployment](t, r.find("Deployment", ""))
			if got := d.Spec.Template.Spec.Volumes[0].Secret.SecretName; got != "my-cloud-config" {
				t.Errorf("config volume from Secret %q, want my-cloud-config", got)
			}
			c := container(t, d.Spec.Template.Spec)
			if n := len(c.Args); n < 2 || c.Args[n-2] != "--v=4" || c.Args[n-1] != "--controllers=cloud-node,cloud-node-lifecycle" {
				t.Errorf("extra args not appended last: %v", c.Args)
			}
		}},
		{"monitoring", map[string]any{"monitoring": map[string]any{"podMonitor": true, "tokenSecret": "prom-token"}}, func(t *testing.T, r rendered) {
			pm := r.find("PodMonitor", "")
			if pm == nil {
				t.Fatal("no PodMonitor")
			}
			eps, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
			if len(eps) != 1 || eps[0].(map[string]any)["port"] != "https" {
				t.Errorf("PodMonitor endpoints = %v, want the https port", eps)
			}
		}},
		{"observability", map[string]any{
			"grafanaDashboard": map[string]any{"enabled": true, "annotations": map[string]any{"grafana_folder": "Kubernetes"}},
			"prometheusRule":   map[string]any{"enabled": true, "labels": map[string]any{"release": "kube-prometheus-stack"}},
		}, func(t *testing.T, r rendered) {
			checkDashboardConfigMap(t, r.find("ConfigMap", "cloud-controller-manager-dashboard"))
			checkPrometheusRule(t, r.find("PrometheusRule", "cloud-controller-manager"))
		}},
		{"web-identity", map[string]any{
			"config":      map[string]any{"existingSecret": "ccm-web-identity-config"},
			"webIdentity": map[string]any{"enabled": true},
		}, func(t *testing.T, r rendered) {
			d := decode[appsv1.Deployment](t, r.find("Deployment", ""))
			spec := d.Spec.Template.Spec
			var projected *corev1.ProjectedVolumeSource
			for _, v := range spec.Volumes {
				if v.Name == "web-identity-token" {
					projected = v.Projected
				}
			}
			if projected == nil || len(projected.Sources) != 1 || projected.Sources[0].ServiceAccountToken == nil {
				t.Fatalf("volumes %+v lack the projected token", spec.Volumes)
			}
			if tok := projected.Sources[0].ServiceAccountToken; tok.Audience != "sts.cloud.tencent.com" || tok.Path != "token" ||
				tok.ExpirationSeconds == nil || *tok.ExpirationSeconds != 3600 {
				t.Errorf("projected token %+v, want audience sts.cloud.tencent.com, path token, 3600 s", tok)
			}
			mounted := false
			for _, m := range container(t, spec).VolumeMounts {
				mounted = mounted || (m.Name == "web-identity-token" && m.MountPath == "/var/run/secrets/tencentcloud")
			}
			if !mounted {
				t.Errorf("the token is not mounted at /var/run/secrets/tencentcloud: %+v", container(t, spec).VolumeMounts)
			}
			if def := render(t, nil); strings.Contains(strings.Join(def.docs, ""), "web-identity-token") {
				t.Error("the default chart mounts a web identity token")
			}
		}},
		// OCI with instance principals: the config holds no credential, so
		// the chart's own Secret may carry it (docs/credentials.md).
		{"oci", map[string]any{"provider": "oci", "config": map[string]any{"values": map[string]any{
			"useInstancePrincipals": true,
			"compartment":           "ocid1.compartment.oc1..aaaaaaaaexample",
			"vcn":                   "ocid1.vcn.oc1.iad.aaaaaaaaexample",
		}}}, func(t *testing.T, r rendered) {
			d := decode[appsv1.Deployment](t, r.find("Deployment", ""))
			c := container(t, d.Spec.Template.Spec)
			if !slices.Contains(c.Args, "--cloud-config=/etc/ccm/cloud-provider.yaml") || !slices.Contains(c.Args, "--cloud-provider=oci") {
				t.Errorf("oci args = %v", c.Args)
			}
			cfg, _, _ := unstructured.NestedString(r.find("Secret", "").Object, "stringData", "cloud-provider.yaml")
			if !strings.Contains(cfg, "useInstancePrincipals: true") || strings.Contains(cfg, "key") {
				t.Errorf("oci cloud config = %q, want instance principals and no key", cfg)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := render(t, tc.values)
			tc.check(t, r)
			snapshot(t, tc.name, r)
		})
	}
}

func checkHardening(t *testing.T, spec corev1.PodSpec) {
	t.Helper()
	if spec.PriorityClassName != "system-cluster-critical" {
		t.Errorf("priorityClassName = %q", spec.PriorityClassName)
	}
	if spec.SecurityContext == nil || spec.SecurityContext.RunAsNonRoot == nil || !*spec.SecurityContext.RunAsNonRoot {
		t.Error("pod does not run as non-root")
	}
	c := container(t, spec)
	if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Error("root filesystem is not read-only")
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.LivenessProbe.HTTPGet.Scheme != corev1.URISchemeHTTPS {
		t.Errorf("liveness probe = %+v, want HTTPS /healthz", c.LivenessProbe)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources = %+v, want requests and a memory limit", c.Resources)
	}
	var keys []string
	for _, tol := range spec.Tolerations {
		keys = append(keys, tol.Key)
	}
	for _, want := range []string{"node.cloudprovider.kubernetes.io/uninitialized", "node-role.kubernetes.io/control-plane", "node.kubernetes.io/not-ready"} {
		if !slices.Contains(keys, want) {
			t.Errorf("tolerations %v lack %s", keys, want)
		}
	}
}

func TestChartRejectsBadValues(t *testing.T) {
	tests := []struct {
		values  map[string]any
		wantErr string
	}{
		{map[string]any{"kind": "StatefulSet"}, `kind must be Deployment or DaemonSet, not "StatefulSet"`},
		{map[string]any{"provider": "aws"}, `provider must be one of ` + strings.Join(provider.Names(), ", ") + `, not "aws"`},
		{map[string]any{"provider": 7}, `provider must be one of ` + strings.Join(provider.Names(), ", ") + `, not "7"`},
	}
	for _, tc := range tests {
		_, err := chartrender.Render(chartDir, "ccm", "kube-system", tc.values)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("values %v: err = %v, want it to contain %q", tc.values, err, tc.wantErr)
		}
	}
}

// Every provider the binary registers installs with the chart, its cloud
// config mounted under the provider's ConfigFile unless config.key says
// otherwise: templates/_providers.tpl is generated from the same list.
func TestChartInstallsEveryProvider(t *testing.T) {
	for _, p := range provider.All {
		for _, key := range []string{"", "custom.yaml"} {
			want := p.ConfigFile
			if key != "" {
				want = key
			}
			r := render(t, map[string]any{"provider": p.Name, "config": map[string]any{"key": key, "values": map[string]any{"region": "r"}}})
			c := container(t, decode[appsv1.Deployment](t, r.find("Deployment", "")).Spec.Template.Spec)
			for _, arg := range []string{"--cloud-provider=" + p.Name, "--cloud-config=/etc/ccm/" + want} {
				if !slices.Contains(c.Args, arg) {
					t.Errorf("provider %s, config.key %q: args %v lack %s", p.Name, key, c.Args, arg)
				}
			}
			secret := decode[corev1.Secret](t, r.find("Secret", "cloud-controller-manager-config"))
			if _, ok := secret.StringData[want]; !ok {
				t.Errorf("provider %s, config.key %q: the config Secret's keys %v lack %s", p.Name, key, secret.StringData, want)
			}
		}
	}
}

// The chart's ClusterRole must grant exactly what deploy/rbac.yaml grants:
// the e2e suite proves the latter sufficient and minimal.
func TestChartRBACMatchesDeploy(t *testing.T) {
	r := render(t, nil)
	chartRole := decode[rbacv1.ClusterRole](t, r.find("ClusterRole", "ccmkit:cloud-controller-manager"))
	data, err := os.ReadFile(filepath.Join("..", "deploy", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var deployRole *rbacv1.ClusterRole
	for _, doc := range strings.Split(string(data), "\n---") {
		var cr rbacv1.ClusterRole
		if err := yaml.Unmarshal([]byte(doc), &cr); err == nil && cr.Kind == "ClusterRole" {
			deployRole = &cr
		}
	}
	if deployRole == nil {
		t.Fatal("deploy/rbac.yaml has no ClusterRole")
	}
	if got, want := mustYAML(t, chartRole.Rules), mustYAML(t, deployRole.Rules); got != want {
		t.Errorf("chart ClusterRole rules differ from deploy/rbac.yaml:\nchart:\n%s\ndeploy:\n%s", got, want)
	}
}

func mustYAML(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
