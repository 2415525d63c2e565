package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ccmkit/ccm/internal/lb/lbkit"
)

// Bad command lines are refused with exit code 2 before anything is read.
func TestAdoptFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no dry run", []string{"--cloud-provider=oci", "--cloud-config=x"}, "only --dry-run"},
		{"no provider", []string{"--dry-run", "--cloud-config=x"}, "required"},
		{"bad output", []string{"--dry-run", "--cloud-provider=oci", "--cloud-config=x", "-o", "yaml"}, "want text or json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := runAdopt(tt.args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), tt.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, errOut.String(), tt.want)
			}
		})
	}
}

// recordingPlanner answers a plan per Service and records the nodes.
type recordingPlanner struct{ nodes []string }

func (r *recordingPlanner) PlanLoadBalancer(_ context.Context, cluster string, svc *corev1.Service, nodes []*corev1.Node) (lbkit.Plan, error) {
	r.nodes = r.nodes[:0]
	for _, n := range nodes {
		r.nodes = append(r.nodes, n.Name)
	}
	p := lbkit.Plan{Verdict: lbkit.VerdictTakeOver, Kind: "NLB", LoadBalancer: "ocid1.nlb", Owner: "OCI CCM",
		Writes: []lbkit.PlannedWrite{{Action: "UpdateNetworkLoadBalancer", Object: "tags", Change: "add ccmkit-service-uid"}}}
	if svc.Name == "new" {
		p = lbkit.Plan{Verdict: lbkit.VerdictCreate, Reason: "no load balancer found", Writes: []lbkit.PlannedWrite{{Action: "CreateNetworkLoadBalancer", Object: cluster}}}
	}
	return p, nil
}

// Every LoadBalancer Service of the service controller is planned, with
// the nodes it would get, and the text names each verdict and write.
func TestPlanAll(t *testing.T) {
	node := func(name string, ready bool, labels map[string]string, taint string) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}
		if taint != "" {
			n.Spec.Taints = []corev1.Taint{{Key: taint, Effect: corev1.TaintEffectNoSchedule}}
		}
		return n
	}
	svc := func(name string, typ corev1.ServiceType, class *string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
			Spec: corev1.ServiceSpec{Type: typ, LoadBalancerClass: class}}
	}
	other := "example.com/other"
	kube := fake.NewClientset(
		node("a", true, nil, ""), node("b", false, nil, ""),
		node("c", true, map[string]string{corev1.LabelNodeExcludeBalancers: "true"}, ""),
		node("d", true, nil, "ToBeDeletedByClusterAutoscaler"),
		svc("web", corev1.ServiceTypeLoadBalancer, nil), svc("new", corev1.ServiceTypeLoadBalancer, nil),
		svc("internal", corev1.ServiceTypeClusterIP, nil), svc("classy", corev1.ServiceTypeLoadBalancer, &other),
	)
	r := &recordingPlanner{}
	plans, err := planAll(context.Background(), kube, r, "k8s")
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 2 || plans[0].Service.Name != "new" || plans[1].Service.Name != "web" {
		t.Fatalf("plans = %+v, want new and web", plans)
	}
	if strings.Join(r.nodes, ",") != "a" {
		t.Errorf("nodes planned with = %v, want only the ready, included, untainted a", r.nodes)
	}
	var out bytes.Buffer
	if err := printPlans(&out, plans); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Service default/new: create\n  why: no load balancer found\n  first sync: 1 cloud writes\n    CreateNetworkLoadBalancer k8s\n",
		"Service default/web: take-over NLB ocid1.nlb, made by OCI CCM\n",
		"    UpdateNetworkLoadBalancer tags: add ccmkit-service-uid\n",
		"2 LoadBalancer Services: 0 in sync, 0 to update, 1 to take over, 1 to create, 0 refused\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
