package lbkit

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// planningOps is recordingOps that can plan: it answers a plan naming
// the backends it was given, and records that it was asked.
type planningOps struct {
	recordingOps
	planned []*testDesired
}

func (o *planningOps) Plan(_ context.Context, d *testDesired) (Plan, error) {
	o.planned = append(o.planned, d)
	p := Plan{Verdict: VerdictUpdate, Kind: "TEST", LoadBalancer: "lb-1", Owner: OwnerOurs}
	for _, b := range d.Backends {
		p.Writes = append(p.Writes, PlannedWrite{Action: "Register", Object: "backend " + b.NodeName})
	}
	return p, nil
}

func newPlanningLB(limit int, ops *planningOps) *LoadBalancer[*testDesired] {
	return New[*testDesired](testTranslator{limit: limit}, func(Hooks) Ops[*testDesired] { return ops }, Config{Provider: "test"})
}

// A plan goes through the same translation and backend limit as a sync,
// carries the translator's warnings, writes nothing, and turns a refused
// Service into a refusal without asking the ops layer.
func TestPlanLoadBalancer(t *testing.T) {
	tests := []struct {
		name        string
		ann         map[string]string
		limit       int
		wantVerdict Verdict
		wantWrites  int
		wantWarn    int
		wantAsked   bool
	}{
		{"all nodes", nil, 0, VerdictUpdate, 4, 0, true},
		{"limited to a subset", nil, 2, VerdictUpdate, 2, 0, true},
		{"warning carried", map[string]string{"warn": "changed"}, 0, VerdictUpdate, 4, 1, true},
		{"bad Service refused", map[string]string{"bad": ""}, 0, VerdictRefuse, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops := &planningOps{}
			lb := newPlanningLB(tt.limit, ops)
			p, err := lb.PlanLoadBalancer(context.Background(), "k", service("web", tt.ann), nodes(4))
			if err != nil {
				t.Fatal(err)
			}
			if p.Service.String() != "default/web" || p.Verdict != tt.wantVerdict || len(p.Writes) != tt.wantWrites || len(p.Warnings) != tt.wantWarn {
				t.Fatalf("plan = %+v; want verdict %s, %d writes, %d warnings", p, tt.wantVerdict, tt.wantWrites, tt.wantWarn)
			}
			if tt.wantVerdict == VerdictRefuse && !strings.Contains(p.Reason, "refused") {
				t.Errorf("reason = %q, want the translator's error", p.Reason)
			}
			if asked := len(ops.planned) == 1; asked != tt.wantAsked {
				t.Errorf("ops asked to plan: %v, want %v", asked, tt.wantAsked)
			}
			if n := len(ops.ensured) + len(ops.updated) + len(ops.deleted); n != 0 {
				t.Errorf("planning called %d writing ops", n)
			}
		})
	}
}

// An ops layer that cannot plan is an error naming the provider.
func TestPlanLoadBalancerUnsupported(t *testing.T) {
	lb := newTestLB(0, &recordingOps{})
	_, err := lb.PlanLoadBalancer(context.Background(), "k", service("web", nil), []*corev1.Node{})
	if err == nil || !strings.Contains(err.Error(), "test provider cannot plan") {
		t.Fatalf("err = %v", err)
	}
}

func TestPlannedWriteString(t *testing.T) {
	for _, tt := range []struct {
		w    PlannedWrite
		want string
	}{
		{PlannedWrite{Action: "CreateListener", Object: "listener TCP-80"}, "CreateListener listener TCP-80"},
		{PlannedWrite{Action: "UpdateBackendSet", Object: "backend set TCP-80", Change: "interval 10s -> 5s"}, "UpdateBackendSet backend set TCP-80: interval 10s -> 5s"},
	} {
		if got := tt.w.String(); got != tt.want {
			t.Errorf("%+v = %q, want %q", tt.w, got, tt.want)
		}
	}
}
