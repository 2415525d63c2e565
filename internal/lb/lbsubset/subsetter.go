package lbsubset

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/lb/lbspec"
)

// EventReason is the reason of the Normal Event recorded on a Service when
// its load balancer starts holding a subset of the nodes, when the subset
// changes size, and when it holds every eligible node again.
const EventReason = "LoadBalancerSubset"

// Limit is the cloud's limit on the backends of one listener, and how an
// Event names it.
type Limit struct {
	N    int    // 0 or less: no limit
	What string // e.g. "TOTAL_TARGET_BIND_QUOTA: 100 targets per listener"
	// EndpointNodesOnly narrows an externalTrafficPolicy Local Service to
	// the nodes running a ready endpoint even when every node fits (a
	// provider's choice, e.g. managed TKE's local-svc-only-bind-node-with-pod);
	// What then says why when N is 0.
	EndpointNodesOnly bool
	// WeightCap, when positive with EndpointNodesOnly, weights each backend
	// of a Local Service by the ready endpoints on its node, at most
	// WeightCap (the cloud's largest weight): a node running three pods
	// takes three times the connections of a node running one, as
	// kube-proxy then spreads them evenly over the pods (managed TKE's
	// local-svc-weighted-balance).
	WeightCap int
}

// Decision is the backends chosen for one Service.
type Decision struct {
	Backends []lbspec.Backend // the chosen ones, in input order
	Eligible int              // the eligible nodes the choice was made from
	Limit    Limit
	// Local reports that the Service has externalTrafficPolicy Local and
	// needed a subset, so the candidates were narrowed to the nodes running
	// a ready endpoint (when there is any).
	Local bool
	// EndpointNodes is how many eligible nodes run a ready endpoint (Local).
	EndpointNodes int
	// endpointNodes are the node names with a ready endpoint, sorted (Local);
	// with weights, each as name=count.
	endpointNodes []string
}

// Subset reports whether the load balancer holds fewer than the eligible nodes.
func (d Decision) Subset() bool { return len(d.Backends) < d.Eligible }

// Subsetter chooses each Service's backends under a limit (Choose), tells
// the Service about it (Record), and asks for a re-ensure of Local Services
// whose endpoint nodes change (Use, Run). The zero value chooses without
// Local narrowing and records no Event; New makes one that can do it all.
type Subsetter struct {
	// Recorder records the Normal Events; nil records none.
	Recorder record.EventRecorder

	mu        sync.Mutex
	endpoints discoverylisters.EndpointSliceLister
	announced map[types.UID]string // the last Event's key
	tracked   map[types.NamespacedName]tracked
	queue     workqueue.TypedRateLimitingInterface[types.NamespacedName]
	coalesce  time.Duration
}

// tracked is a Local Service whose load balancer holds a subset, with the
// endpoint nodes its backends were chosen from.
type tracked struct {
	uid   types.UID
	nodes string // endpointKey, comma-separated
	count int
	// weighted: the backends are weighted by endpoint count, so a change
	// of the counts matters too, not only of the nodes.
	weighted bool
}

// New returns a Subsetter; set Recorder, call Use and run Run to have it
// narrow Local Services to their endpoint nodes.
func New() *Subsetter {
	return &Subsetter{
		announced: map[types.UID]string{},
		tracked:   map[types.NamespacedName]tracked{},
		coalesce:  DefaultCoalesce,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
			workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "lb-subset-endpoints"}),
	}
}

// Choose returns the backends for svc under limit: every one of backends
// when they fit; otherwise, for externalTrafficPolicy Local, the nodes
// running a ready endpoint (all of backends when none does: kube-proxy's
// health check then fails everywhere anyway, and a listener without targets
// would only delay recovery), and at most limit.N of them chosen by Select.
// With limit.EndpointNodesOnly, a Local Service is narrowed so even when
// every node fits. It changes nothing; Record does.
func (s *Subsetter) Choose(svc *corev1.Service, backends []lbspec.Backend, limit Limit) Decision {
	d := Decision{Backends: backends, Eligible: len(backends), Limit: limit}
	local := svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
	fits := limit.N <= 0 || len(backends) <= limit.N
	if fits && (!limit.EndpointNodesOnly || !local) {
		return d
	}
	candidates := backends
	if lister := s.lister(); lister != nil && local {
		counts, err := readyEndpoints(lister, svc)
		if err != nil {
			klog.ErrorS(err, "Listing EndpointSlices; choosing among all eligible nodes", "service", klog.KObj(svc))
		} else {
			weighted := limit.EndpointNodesOnly && limit.WeightCap > 0
			d.Local, d.endpointNodes = true, endpointKey(counts, weighted)
			var on []lbspec.Backend
			for _, b := range backends {
				if n := counts[b.NodeName]; n > 0 {
					if weighted {
						b.Weight = min(n, limit.WeightCap)
					}
					on = append(on, b)
				}
			}
			d.EndpointNodes = len(on)
			if len(on) > 0 {
				candidates = on
			}
		}
	}
	d.Backends = Select(candidates, string(svc.UID), limit.N, func(b lbspec.Backend) (string, string) { return b.NodeName, b.Zone })
	return d
}

// Record makes d known: a Normal Event when subsetting starts, changes or
// stops (not on every sync), and, for a Local Service, the endpoint nodes
// that the watch compares with.
func (s *Subsetter) Record(svc *corev1.Service, d Decision) {
	key := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
	s.mu.Lock()
	if s.tracked == nil {
		s.tracked, s.announced = map[types.NamespacedName]tracked{}, map[types.UID]string{}
	}
	if d.Local {
		s.tracked[key] = tracked{uid: svc.UID, nodes: strings.Join(d.endpointNodes, ","), count: len(d.endpointNodes),
			weighted: d.Limit.EndpointNodesOnly && d.Limit.WeightCap > 0}
	} else {
		delete(s.tracked, key)
	}
	prev, had := s.announced[svc.UID]
	var msg string
	switch {
	case d.Subset():
		if k := fmt.Sprintf("%d/%d/%t/%d", len(d.Backends), d.Eligible, d.Local, d.EndpointNodes); k != prev {
			s.announced[svc.UID], msg = k, subsetMessage(d)
		}
	case had:
		delete(s.announced, svc.UID)
		msg = fmt.Sprintf("Binding all %d eligible nodes: they fit in the limit (%s)", d.Eligible, d.Limit.What)
	}
	s.mu.Unlock()
	if msg == "" {
		return
	}
	klog.InfoS("Load balancer backends", "service", klog.KObj(svc), "message", msg)
	if s.Recorder != nil {
		s.Recorder.Event(svc, corev1.EventTypeNormal, EventReason, msg)
	}
}

// Forget drops what Record remembered of a Service that no longer has a
// load balancer.
func (s *Subsetter) Forget(svc *corev1.Service) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.announced, svc.UID)
	if t, ok := s.tracked[types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}]; ok && t.uid == svc.UID {
		delete(s.tracked, types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name})
	}
}

func subsetMessage(d Decision) string {
	zones := map[string]bool{}
	for _, b := range d.Backends {
		zones[b.Zone] = true
	}
	how := fmt.Sprintf("chosen for this Service by rendezvous hashing, balanced across %d zone(s)", len(zones))
	msg := fmt.Sprintf("Binding %d of %d eligible nodes (limit: %s)", len(d.Backends), d.Eligible, d.Limit.What)
	switch {
	case d.Local && d.EndpointNodes == 0:
		return msg + "; externalTrafficPolicy Local, but no eligible node runs a ready endpoint yet, so the health checks decide; " + how
	case d.Local && (d.Limit.N <= 0 || d.EndpointNodes <= d.Limit.N):
		return msg + fmt.Sprintf("; externalTrafficPolicy Local: every node with a ready endpoint (%d)", d.EndpointNodes)
	case d.Local:
		return msg + fmt.Sprintf("; externalTrafficPolicy Local: %d nodes have a ready endpoint, %s", d.EndpointNodes, how)
	}
	return msg + "; " + how
}

func (s *Subsetter) lister() discoverylisters.EndpointSliceLister {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endpoints
}

// readyEndpoints counts the ready endpoints of svc per node. An endpoint
// with an unknown Ready condition counts as ready, as the
// EndpointConditions API says consumers should take it. Slices of one
// Service never repeat an endpoint (EndpointSlice API), so counting
// addresses counts pods.
func readyEndpoints(lister discoverylisters.EndpointSliceLister, svc *corev1.Service) (map[string]int, error) {
	list, err := lister.EndpointSlices(svc.Namespace).List(labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: svc.Name}))
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, slice := range list {
		for _, ep := range slice.Endpoints {
			if ep.NodeName == nil || *ep.NodeName == "" || (ep.Conditions.Ready != nil && !*ep.Conditions.Ready) {
				continue
			}
			out[*ep.NodeName]++
		}
	}
	return out, nil
}

// endpointKey is what the watch compares: the sorted node names with a
// ready endpoint, each as name=count when the backends are weighted.
func endpointKey(counts map[string]int, weighted bool) []string {
	out := make([]string, 0, len(counts))
	for _, node := range slices.Sorted(maps.Keys(counts)) {
		if weighted {
			node = fmt.Sprintf("%s=%d", node, counts[node])
		}
		out = append(out, node)
	}
	return out
}
