package preflight

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	cloudapi "k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccm/deploy"
)

func TestPermissionsOfShippedRBAC(t *testing.T) {
	perms, err := Permissions(deploy.RBAC)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, p := range perms {
		got[p.String()] = true
	}
	for _, want := range []string{
		"get nodes", "delete nodes", "patch nodes/status", "patch services/status", "list endpointslices.discovery.k8s.io",
		"create events", "create leases.coordination.k8s.io in kube-system",
		"update leases.coordination.k8s.io cloud-controller-manager in kube-system",
	} {
		if !got[want] {
			t.Errorf("the permissions of deploy/rbac.yaml lack %q; have %v", want, perms)
		}
	}
	if got["get leases.coordination.k8s.io in kube-system"] {
		t.Error("resourceNames lost: get on every lease")
	}
}

func TestPermissionsRejectsEmpty(t *testing.T) {
	if _, err := Permissions([]byte("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: x\n")); err == nil {
		t.Fatal("a manifest that grants nothing passed")
	}
}

func node(name, providerID string, tainted bool) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}}
	if tainted {
		n.Spec.Taints = []corev1.Taint{{Key: cloudapi.TaintExternalCloudProvider, Effect: corev1.TaintEffectNoSchedule}}
	}
	return n
}

func TestCheckNodes(t *testing.T) {
	owns := func(id string) bool { return strings.HasPrefix(id, "tencentcloud://") }
	cases := []struct {
		name   string
		nodes  []*corev1.Node
		status Status
		phrase string
	}{
		{"initialized and joining", []*corev1.Node{node("a", "tencentcloud:///z/ins-1", false), node("b", "", true)}, Pass, "1 with a providerID of tencentcloud, 1 waiting"},
		{"no nodes", nil, Warn, "no nodes"},
		{"not external", []*corev1.Node{node("a", "", false)}, Fail, "never initialize them): a"},
		{"foreign", []*corev1.Node{node("a", "aws:///us-east-1a/i-1", false)}, Fail, "another cloud's providerID: a (aws:///us-east-1a/i-1)"},
		{"both", []*corev1.Node{node("a", "aws:///x/i-1", false), node("b", "", false)}, Fail, "no providerID and no uninitialized taint: b"},
		{"many", []*corev1.Node{node("a", "", false), node("b", "", false), node("c", "", false), node("d", "", false), node("e", "", false), node("f", "", false), node("g", "", false)}, Fail, "a, b, c, d, e and 2 more"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var objs []corev1.Node
			for _, n := range tc.nodes {
				objs = append(objs, *n)
			}
			rep := &Report{}
			checkNodes(nodeList{items: objs}, owns, "tencentcloud", rep)
			res, _ := rep.Find("nodes")
			if res.Status != tc.status || !strings.Contains(res.Detail, tc.phrase) {
				t.Errorf("got %s %q, want %s containing %q", res.Status, res.Detail, tc.status, tc.phrase)
			}
			if res.Status != Pass && res.Fix == "" {
				t.Error("no hint")
			}
		})
	}
}

func TestCheckRBAC(t *testing.T) {
	cases := []struct {
		name   string
		deny   string // verb+" "+resource the fake server denies
		status Status
		phrase string
	}{
		{"all granted", "", Pass, "holds all"},
		{"delete nodes denied", "delete nodes", Fail, "may not: delete nodes"},
		{"lease update denied", "update leases", Fail, "may not: update leases.coordination.k8s.io cloud-controller-manager in kube-system"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kube := fake.NewSimpleClientset()
			kube.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
				r := a.(k8stesting.CreateAction).GetObject().(*authzv1.SelfSubjectAccessReview)
				attr := r.Spec.ResourceAttributes
				r.Status.Allowed = attr.Verb+" "+attr.Resource != tc.deny
				return true, r, nil
			})
			rep := &Report{}
			checkRBAC(context.Background(), kube, deploy.RBAC, rep)
			res, _ := rep.Find("RBAC")
			if res.Status != tc.status || !strings.Contains(res.Detail, tc.phrase) {
				t.Errorf("got %s %q, want %s containing %q", res.Status, res.Detail, tc.status, tc.phrase)
			}
		})
	}
}

func TestCheckClusterCIDR(t *testing.T) {
	nets := []Network{{"VPC vpc-1", netip.MustParsePrefix("10.0.0.0/16")}, {"route table cls-2", netip.MustParsePrefix("10.96.0.0/16")}}
	cases := []struct {
		cidr   string
		status Status
		phrase string
	}{
		{"", Skip, "not given"},
		{"10.244.0.0/16", Pass, "overlaps none of 2"},
		{"10.0.128.0/17", Fail, "overlaps VPC vpc-1"},
		{"10.0.0.0/8", Fail, "VPC vpc-1 (10.0.0.0/16), route table cls-2 (10.96.0.0/16)"},
	}
	for _, tc := range cases {
		var p netip.Prefix
		if tc.cidr != "" {
			p = netip.MustParsePrefix(tc.cidr)
		}
		rep := &Report{}
		CheckClusterCIDR(rep, p, nets)
		res := rep.Results[0]
		if res.Status != tc.status || !strings.Contains(res.Detail, tc.phrase) {
			t.Errorf("%s: got %s %q, want %s containing %q", tc.cidr, res.Status, res.Detail, tc.status, tc.phrase)
		}
	}
}

func TestClockMeasuresSkew(t *testing.T) {
	cases := []struct {
		ahead  time.Duration
		status Status
		phrase string
	}{
		{0, Pass, "agrees"},
		{90 * time.Second, Warn, "1m30s behind"},
		{-6 * time.Minute, Fail, "6m0s ahead of"},
		{10 * time.Minute, Fail, "refused"},
	}
	for _, tc := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Date", time.Now().Add(tc.ahead).UTC().Format(http.TimeFormat))
		}))
		clock := NewClock(nil, nil)
		resp, err := (&http.Client{Transport: clock}).Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		srv.Close()
		rep := &Report{}
		clock.Report(rep, "the API")
		res := rep.Results[0]
		if res.Status != tc.status || !strings.Contains(res.Detail, tc.phrase) {
			t.Errorf("%v: got %s %q, want %s containing %q", tc.ahead, res.Status, res.Detail, tc.status, tc.phrase)
		}
	}
	rep := &Report{}
	NewClock(nil, nil).Report(rep, "the API")
	if rep.Results[0].Status != Skip {
		t.Errorf("no answer: got %+v", rep.Results[0])
	}
}

func TestReportPrint(t *testing.T) {
	rep := &Report{}
	rep.Pass("credentials", "fine")
	rep.Fail("VPC", "vpc-1 not\nfound", "set vpc_id")
	var buf bytes.Buffer
	if err := rep.Print(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"CHECK", "HOW TO FIX", "vpc-1 not found", "set vpc_id", "preflight FAILED: 1 ok, 0 warn, 1 failed, 0 skipped"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !rep.Failed() {
		t.Error("Failed() is false")
	}
}

func TestRunUnknownProvider(t *testing.T) {
	rep := Run(context.Background(), Options{Provider: "nocloud"})
	if !rep.Failed() || !strings.Contains(rep.Results[0].Detail, "nocloud") {
		t.Errorf("got %+v", rep.Results)
	}
}
