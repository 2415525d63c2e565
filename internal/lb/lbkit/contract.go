// Package lbkit is the load-balancer pipeline both providers share. A
// provider supplies two small things: a Translator, which turns a Service
// and its nodes into the cloud's desired state (the neutral lbspec.Spec
// plus the cloud's own settings, read from its annotations and config), and
// the Ops of its operations layer, which makes the cloud match. lbkit does
// everything in between the same way for every cloud: one call at a time
// per Service, the backend subset when the nodes exceed the cloud's limit,
// Warning Events for what the translator had to change, the re-run when a
// draining backend's period ends, and the periodic drift check.
//
//	Service, nodes ─► Translator.Desired ─► subset (BackendLimit) ─► Ops.Ensure / Update
//	Service        ─► Translator.Ref     ─────────────────────────► Ops.Get / Delete
//	every period   ─► Translator.Desired ─► subset ───────────────► Ops.DriftAll (reads only)
//
// What an ops layer learns during a call comes back through its Hooks
// (hooks.go): when a draining backend's period ends, an annotation the
// Service should show (TKE's loadbalance-id), and a warning about its load
// balancer as found. The pipeline acts on them the same way for every
// cloud, so no provider wraps the pipeline.
package lbkit

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/lb/lbdrift"
	"github.com/ccmkit/ccm/internal/lb/lbspec"
	"github.com/ccmkit/ccm/internal/lb/lbsubset"
)

// Ops is a cloud's operations layer as the pipeline calls it. D is the
// cloud's desired state, a pointer to a struct that embeds lbspec.Spec.
type Ops[D lbspec.Desired] interface {
	// Get reports the load balancer ref identifies, and its status.
	Get(ctx context.Context, ref D) (*corev1.LoadBalancerStatus, bool, error)
	// Ensure creates the load balancer if it is missing and makes it match d.
	Ensure(ctx context.Context, d D) (*corev1.LoadBalancerStatus, error)
	// Update makes an existing load balancer match d (node changes).
	Update(ctx context.Context, d D) error
	// Delete removes what the Service owns: the load balancer it created,
	// or its listeners on an adopted one.
	Delete(ctx context.Context, ref D) error
	// DriftAll compares each load balancer with what its Service wants,
	// reading only; a Service missing from the answer is in sync.
	DriftAll(ctx context.Context, ds []D) map[types.UID]lbdrift.Result
}

// Translator turns Services into a cloud's desired state. It calls no
// cloud API, except BackendLimit, which may read a quota.
type Translator[D lbspec.Desired] interface {
	// Name is the name a new load balancer gets (GetLoadBalancerName).
	Name(clusterName string, svc *corev1.Service) string
	// Ref is the part of the desired state that finds and deletes the
	// Service's load balancer. It must not fail on bad annotations: a
	// Service broken by an edit can still be found and deleted.
	Ref(svc *corev1.Service) D
	// Desired validates everything the Service says and returns its
	// desired state, with every problem in one error and no desired state
	// if there is any. Warnings are what was changed on the way (recorded
	// as Warning Events; the call goes ahead).
	Desired(clusterName string, svc *corev1.Service, nodes []*corev1.Node) (D, []Warning, error)
	// BackendLimit is the most backends one listener of d may hold; the
	// zero Limit means no limit. When the eligible backends exceed it, the
	// pipeline chooses the Service's subset (internal/lb/lbsubset).
	BackendLimit(ctx context.Context, d D) lbsubset.Limit
}

// Warning is something the translator changed in the Service's request,
// told to the user as a Warning Event with this reason.
type Warning struct {
	Reason  string
	Message string
}
