package lbkit

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	cloudapi "k8s.io/cloud-provider/api"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/ctxwait"
	"github.com/ccmkit/ccm/internal/lb/lbspec"
)

// When nodes join in a burst, the upstream service controller starts a
// pass over every LoadBalancer Service at the first new Node, and again
// each time a new node gets its providerID from the cloud node controller.
// A node without a providerID is no backend yet (the translators need its
// instance), so an Update made while a burst's nodes are still being
// initialized binds only some of them, and the next pass binds the rest:
// a second write (and task) per Service for what one write could do. With
// CLB's 20 writes/s per action, 100 Services and a 100-node burst took two
// passes and 9.4 s instead of one (docs/scale.md, the fan-out section).
//
// So an Update first lets the joining nodes settle: if a node that
// registered moments ago still has the uninitialized taint and no
// providerID, the Update waits until it is initialized (or given up on),
// then uses the nodes as they are then. The wait is bounded twice: at most
// settleMaxWait per Update, and only for nodes younger than settleMaxAge,
// so that a node the cloud cannot initialize holds no Update back after its
// first seconds.
const (
	// Our choice: the node section initializes a 1,000-node burst at
	// 100/s with a p99 well under a second (docs/scale.md), so 3 s covers a
	// healthy initialization with room to spare.
	settleMaxWait = 3 * time.Second
	// Our choice: a node still uninitialized 10 s after registering is
	// not about to be; Updates stop waiting for it.
	settleMaxAge = 10 * time.Second
	settlePoll   = 50 * time.Millisecond
)

// settler waits for joining nodes; the zero value (no lister) never waits.
type settler struct {
	nodes           corelisters.NodeLister // nil until SetInformers
	maxWait, maxAge time.Duration
	poll            time.Duration
	now             func() time.Time
	sleep           func(context.Context, time.Duration) error
}

func newSettler() *settler {
	return &settler{maxWait: settleMaxWait, maxAge: settleMaxAge, poll: settlePoll, now: time.Now, sleep: ctxwait.Sleep}
}

// settle returns the nodes an Update should use: nodes itself when no node
// is joining; otherwise, once no node is joining (or after maxWait), every
// eligible node as the informer has it then.
func (s *settler) settle(ctx context.Context, svc *corev1.Service, nodes []*corev1.Node) []*corev1.Node {
	if s.nodes == nil {
		return nodes
	}
	start := s.now()
	for waited := false; ; waited = true {
		all, err := s.nodes.List(labels.Everything())
		if err != nil { // a cache lister does not fail; if one did, keep the caller's nodes
			return nodes
		}
		joining := s.joining(all)
		if joining == 0 && !waited {
			return nodes
		}
		elapsed := s.now().Sub(start)
		if joining == 0 || elapsed >= s.maxWait || s.sleep(ctx, s.poll) != nil {
			klog.V(2).InfoS("Load balancer update waited for joining nodes", "service", klog.KObj(svc),
				"waited", elapsed, "stillJoining", joining)
			out := make([]*corev1.Node, 0, len(all))
			for _, n := range all {
				if lbspec.Eligible(n) {
					out = append(out, n)
				}
			}
			return out
		}
	}
}

// joining counts the eligible nodes that registered less than maxAge ago
// and wait for the cloud node controller: uninitialized taint, no
// providerID.
func (s *settler) joining(nodes []*corev1.Node) int {
	n := 0
	for _, node := range nodes {
		if node.Spec.ProviderID == "" && lbspec.Eligible(node) && hasUninitializedTaint(node) &&
			s.now().Sub(node.CreationTimestamp.Time) < s.maxAge {
			n++
		}
	}
	return n
}

func hasUninitializedTaint(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == cloudapi.TaintExternalCloudProvider {
			return true
		}
	}
	return false
}
