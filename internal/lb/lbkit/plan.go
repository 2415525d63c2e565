package lbkit

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/lb/lbspec"
)

// Plan is what the next sync of a Service would do to the cloud, computed
// reading only: which load balancer it would find, whose it is, and each
// write it would make. `cloud-controller-manager adopt --dry-run` prints
// one per Service before a switch-over, so that an operator sees every
// change before the CCM makes it; the switch-over e2e tests compare the
// writes of the first sync with it.
type Plan struct {
	Service types.NamespacedName `json:"service"`
	// Verdict is what happens to the Service's load balancer.
	Verdict Verdict `json:"verdict"`
	// Kind is the kind of load balancer ("CLB", "LB", "NLB").
	Kind string `json:"kind,omitempty"`
	// LoadBalancer is the cloud id of the load balancer found; empty when
	// none was found.
	LoadBalancer string `json:"loadBalancer,omitempty"`
	// Name is its name (display name) in the cloud.
	Name string `json:"name,omitempty"`
	// Owner says who made the load balancer found: OwnerOurs, or the
	// incumbent's name (e.g. "TKE service controller", "OCI CCM"), or
	// OwnerUser for one the Service adopts by annotation.
	Owner string `json:"owner,omitempty"`
	// Reason explains the verdict in a sentence: why a new load balancer
	// would be created, or why the one found cannot be taken over.
	Reason string `json:"reason,omitempty"`
	// Writes are the cloud writes the sync would make, in order. A
	// creation is one write; the writes after it are not planned, as they
	// depend on what the cloud answers.
	Writes []PlannedWrite `json:"writes,omitempty"`
	// Warnings are what the translator changed in the Service's request
	// (the Warning Events the sync would record).
	Warnings []Warning `json:"warnings,omitempty"`
}

// Verdict is what a sync does with a Service's load balancer.
type Verdict string

const (
	// VerdictInSync: the load balancer is ours and matches; no write.
	VerdictInSync Verdict = "in-sync"
	// VerdictUpdate: the load balancer is ours (or adopted by annotation)
	// and some writes bring it in line.
	VerdictUpdate Verdict = "update"
	// VerdictTakeOver: the load balancer was made by an incumbent CCM; the
	// sync takes it over (its writes include our ownership tags).
	VerdictTakeOver Verdict = "take-over"
	// VerdictCreate: no load balancer was found; the sync creates one.
	VerdictCreate Verdict = "create"
	// VerdictRefuse: a load balancer was found that cannot be taken over,
	// or the Service is invalid; the sync fails with Reason and creates
	// nothing.
	VerdictRefuse Verdict = "refuse"
)

// Owners a Plan names besides an incumbent.
const (
	OwnerOurs = "ccmkit"
	OwnerUser = "user (adopted by annotation)"
)

// PlannedWrite is one cloud write of a plan.
type PlannedWrite struct {
	// Action is the cloud API action as the cloud names it and cloudsim
	// counts it: Tencent's action ("CreateListener"), OCI's operation
	// ("UpdateBackendSet").
	Action string `json:"action"`
	// Object is what it writes: "listener TCP-80", "backend set TCP-443".
	Object string `json:"object"`
	// Change says what changes, e.g. "health check interval 10s -> 5s".
	Change string `json:"change,omitempty"`
}

func (w PlannedWrite) String() string {
	if w.Change == "" {
		return w.Action + " " + w.Object
	}
	return fmt.Sprintf("%s %s: %s", w.Action, w.Object, w.Change)
}

// Planner is an ops layer that can plan, reading only, what Ensure would
// do with d.
type Planner[D lbspec.Desired] interface {
	Plan(ctx context.Context, d D) (Plan, error)
}

// PlanSource is a cloudprovider.LoadBalancer that plans (what the adopt
// command type-asserts).
type PlanSource interface {
	PlanLoadBalancer(ctx context.Context, clusterName string, svc *corev1.Service, nodes []*corev1.Node) (Plan, error)
}

var _ PlanSource = (*LoadBalancer[*lbspec.Spec])(nil)

// PlanLoadBalancer plans what EnsureLoadBalancer would do for svc with
// nodes, reading only: the same translation and backend choice, then the
// ops layer's Plan. An invalid Service is a refusal, as its sync would
// fail before any cloud call. It records no Event, subset or re-run.
func (l *LoadBalancer[D]) PlanLoadBalancer(ctx context.Context, clusterName string, svc *corev1.Service, nodes []*corev1.Node) (Plan, error) {
	ref := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
	planner, ok := any(l.ops).(Planner[D])
	if !ok {
		return Plan{}, fmt.Errorf("plan Service %s: the %s provider cannot plan load balancers", ref, l.cfg.Provider)
	}
	d, warnings, err := l.tr.Desired(clusterName, svc, nodes)
	if err != nil {
		return Plan{Service: ref, Verdict: VerdictRefuse, Reason: err.Error()}, nil
	}
	l.chooseBackends(ctx, svc, d)
	p, err := planner.Plan(ctx, d)
	if err != nil {
		return Plan{}, fmt.Errorf("plan Service %s: %w", ref, err)
	}
	// The ops layer's warnings (what it would leave as it is) follow the
	// translator's.
	p.Service, p.Warnings = ref, append(warnings, p.Warnings...)
	return p, nil
}
