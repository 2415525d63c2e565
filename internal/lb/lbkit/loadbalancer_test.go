package lbkit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/ccmkit/ccm/internal/lb/lbdrift"
	"github.com/ccmkit/ccm/internal/lb/lbspec"
	"github.com/ccmkit/ccm/internal/lb/lbsubset"
)

// testDesired is a cloud's desired state: the neutral spec and a setting.
type testDesired struct {
	lbspec.Spec
	Setting string
}

// testTranslator builds one backend per node; a Service annotated "bad"
// is refused, one annotated "warn" gets a warning.
type testTranslator struct{ limit int }

func (testTranslator) Name(cluster string, svc *corev1.Service) string {
	return cluster + "-" + svc.Name
}

func (testTranslator) Ref(svc *corev1.Service) *testDesired {
	return &testDesired{Spec: lbspec.Spec{Ref: lbspec.RefOf(svc, "")}, Setting: "ref"}
}

func (testTranslator) Desired(_ string, svc *corev1.Service, nodes []*corev1.Node) (*testDesired, []Warning, error) {
	if _, bad := svc.Annotations["bad"]; bad {
		return nil, nil, errors.New("annotation bad: refused")
	}
	d := &testDesired{Spec: lbspec.Spec{Ref: lbspec.RefOf(svc, "")}, Setting: "full"}
	for _, n := range nodes {
		d.Backends = append(d.Backends, lbspec.Backend{NodeName: n.Name, InstanceID: "i-" + n.Name})
	}
	var warnings []Warning
	if msg, ok := svc.Annotations["warn"]; ok {
		warnings = append(warnings, Warning{Reason: "Changed", Message: msg})
	}
	return d, warnings, nil
}

func (t testTranslator) BackendLimit(context.Context, *testDesired) lbsubset.Limit {
	if t.limit == 0 {
		return lbsubset.Limit{}
	}
	return lbsubset.Limit{N: t.limit, What: fmt.Sprintf("%d per listener", t.limit)}
}

// recordingOps records every call; Ensure asks for a drain re-run when
// drainAfter is set.
type recordingOps struct {
	mu                    sync.Mutex
	got, ensured, updated []*testDesired
	deleted               []*testDesired
	drifted               []*testDesired
	onDrain               func(types.UID, time.Time)
	drainAfter            time.Duration
	driftAnswer           map[types.UID]lbdrift.Result
	updateCalls           chan struct{}
}

func (o *recordingOps) Get(_ context.Context, ref *testDesired) (*corev1.LoadBalancerStatus, bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got = append(o.got, ref)
	return &corev1.LoadBalancerStatus{}, true, nil
}

func (o *recordingOps) Ensure(_ context.Context, d *testDesired) (*corev1.LoadBalancerStatus, error) {
	o.mu.Lock()
	o.ensured = append(o.ensured, d)
	o.mu.Unlock()
	if o.drainAfter > 0 {
		o.onDrain(d.UID, time.Now().Add(o.drainAfter))
	}
	return &corev1.LoadBalancerStatus{}, nil
}

func (o *recordingOps) Update(_ context.Context, d *testDesired) error {
	o.mu.Lock()
	o.updated = append(o.updated, d)
	o.mu.Unlock()
	if o.updateCalls != nil {
		o.updateCalls <- struct{}{}
	}
	return nil
}

func (o *recordingOps) Delete(_ context.Context, ref *testDesired) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.deleted = append(o.deleted, ref)
	return nil
}

func (o *recordingOps) DriftAll(_ context.Context, ds []*testDesired) map[types.UID]lbdrift.Result {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.drifted = append(o.drifted, ds...)
	return o.driftAnswer
}

func newTestLB(limit int, ops *recordingOps) *LoadBalancer[*testDesired] {
	return New[*testDesired](testTranslator{limit: limit}, func(h Hooks) Ops[*testDesired] {
		ops.onDrain = h.DrainEnds
		return ops
	}, Config{Provider: "test"})
}

func service(name string, ann map[string]string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name), Annotations: ann}}
}

func nodes(n int) []*corev1.Node {
	out := make([]*corev1.Node, n)
	for i := range out {
		out[i] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%02d", i)}}
	}
	return out
}

// Ensure and Update reach the ops layer with the backends narrowed to the
// translator's limit, the limit passed on, and the warnings told as Events.
func TestPipelineEnsureAndUpdate(t *testing.T) {
	tests := []struct {
		name         string
		limit, nodes int
		wantBackends int
		wantLimit    int
	}{
		{"no limit", 0, 7, 7, 0},
		{"under the limit", 10, 7, 7, 10},
		{"over the limit", 5, 7, 5, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops := &recordingOps{}
			lb := newTestLB(tt.limit, ops)
			events := record.NewFakeRecorder(10)
			lb.UseRecorder(events)
			svc := service("web", map[string]string{"warn": "shape made flexible"})
			if _, err := lb.EnsureLoadBalancer(context.Background(), "k", svc, nodes(tt.nodes)); err != nil {
				t.Fatal(err)
			}
			if err := lb.UpdateLoadBalancer(context.Background(), "k", svc, nodes(tt.nodes)); err != nil {
				t.Fatal(err)
			}
			for _, d := range []*testDesired{ops.ensured[0], ops.updated[0]} {
				if d.Setting != "full" || len(d.Backends) != tt.wantBackends || d.BackendLimit != tt.wantLimit {
					t.Errorf("ops got setting %q, %d backends, limit %d; want full, %d, %d",
						d.Setting, len(d.Backends), d.BackendLimit, tt.wantBackends, tt.wantLimit)
				}
			}
			for range 2 {
				if ev := <-events.Events; ev != "Warning Changed shape made flexible" {
					t.Errorf("event %q", ev)
				}
			}
		})
	}
}

// A Service the translator refuses never reaches the ops layer; Get and
// Delete use the Ref, which needs no valid annotation.
func TestPipelineBadServiceTouchesNothingButCanBeDeleted(t *testing.T) {
	ops := &recordingOps{}
	lb := newTestLB(0, ops)
	svc := service("web", map[string]string{"bad": ""})
	if _, err := lb.EnsureLoadBalancer(context.Background(), "k", svc, nodes(2)); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("Ensure err = %v, want the translator's", err)
	}
	if err := lb.UpdateLoadBalancer(context.Background(), "k", svc, nodes(2)); err == nil {
		t.Fatal("Update accepted a bad Service")
	}
	if len(ops.ensured)+len(ops.updated) != 0 {
		t.Fatalf("ops called for a bad Service: %d ensures, %d updates", len(ops.ensured), len(ops.updated))
	}
	if _, _, err := lb.GetLoadBalancer(context.Background(), "k", svc); err != nil {
		t.Fatal(err)
	}
	if err := lb.EnsureLoadBalancerDeleted(context.Background(), "k", svc); err != nil {
		t.Fatal(err)
	}
	if len(ops.got) != 1 || len(ops.deleted) != 1 || ops.got[0].Setting != "ref" || ops.deleted[0].UID != "uid-web" {
		t.Fatalf("Get/Delete got %+v / %+v, want the Ref", ops.got, ops.deleted)
	}
	if got := lb.GetLoadBalancerName(context.Background(), "k", svc); got != "k-web" {
		t.Errorf("name = %q", got)
	}
}

// The drift check asks about every valid Service at once with the same
// subset the reconcile binds, reports a refused Service as an error, and
// records nothing.
func TestPipelineDrift(t *testing.T) {
	ops := &recordingOps{driftAnswer: map[types.UID]lbdrift.Result{"uid-a": {Diffs: []string{"listener TCP-80 missing"}}}}
	lb := newTestLB(3, ops)
	events := record.NewFakeRecorder(10)
	lb.UseRecorder(events)
	a, b := service("a", map[string]string{"warn": "x"}), service("b", nil)
	bad := service("bad", map[string]string{"bad": ""})
	results := lb.Drift(context.Background(), []*corev1.Service{a, b, bad}, nodes(5))
	if len(ops.drifted) != 2 || len(ops.drifted[0].Backends) != 3 || ops.drifted[0].BackendLimit != 3 {
		t.Fatalf("DriftAll got %d desired (first with %d backends)", len(ops.drifted), len(ops.drifted[0].Backends))
	}
	if r := results["uid-a"]; len(r.Diffs) != 1 {
		t.Errorf("a: %+v", r)
	}
	if r, ok := results["uid-b"]; ok {
		t.Errorf("b in sync but reported: %+v", r)
	}
	if r := results["uid-bad"]; r.Err == nil || !strings.Contains(r.Err.Error(), "refused") {
		t.Errorf("bad: %+v", r)
	}
	if len(events.Events) != 0 {
		t.Errorf("drift recorded %d Events", len(events.Events))
	}
}

// When the ops layer says a backend's drain ends, the pipeline runs the
// Service's last reconcile again, as an Update with the same nodes;
// deleting the Service cancels it.
func TestPipelineDrainRerun(t *testing.T) {
	ops := &recordingOps{drainAfter: 20 * time.Millisecond, updateCalls: make(chan struct{}, 1)}
	lb := newTestLB(0, ops)
	stop := make(chan struct{})
	defer close(stop)
	lb.Initialize(nil, stop)
	svc := service("web", nil)
	if _, err := lb.EnsureLoadBalancer(context.Background(), "k", svc, nodes(2)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ops.updateCalls:
	case <-time.After(10 * time.Second):
		t.Fatal("no re-run after the drain ended")
	}
	ops.mu.Lock()
	defer ops.mu.Unlock()
	if len(ops.updated) != 1 || len(ops.updated[0].Backends) != 2 {
		t.Fatalf("re-run: %d updates", len(ops.updated))
	}
}
