// Package lbspec computes the provider-neutral description of the load
// balancer a Service of type LoadBalancer needs: listeners, backends, health
// check, session affinity, source ranges, internal or public, and an
// existing load balancer to adopt. Providers translate a Spec into their
// cloud's calls; nothing here talks to a cloud.
//
// Build validates everything it reads and reports every problem at once,
// each naming the annotation or field and the value, so that a provider can
// refuse a bad Service before it touches its load balancer.
package lbspec

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	servicehelper "k8s.io/cloud-provider/service/helpers"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/annotations"
)

// Protocol is a listener's transport protocol.
type Protocol string

// The protocols a listener can have.
const (
	TCP Protocol = "TCP"
	UDP Protocol = "UDP"
)

// Listener is one port of the load balancer, forwarding to NodePort on
// every backend.
type Listener struct {
	Protocol Protocol
	Port     int32
	NodePort int32
}

// Name is the listener's name, "<PROTO>-<port>" (e.g. TCP-80).
func (l Listener) Name() string { return fmt.Sprintf("%s-%d", l.Protocol, l.Port) }

// Backend is a node that receives traffic.
type Backend struct {
	NodeName string
	// InstanceID is the provider's id of the node's instance (a CVM
	// instance id, an OCI instance OCID), taken from its providerID.
	InstanceID string
	// Zone is the node's topology.kubernetes.io/zone label ("" when it has
	// none), for spreading a subset of backends across zones.
	Zone string
	// Address is the node's first IPv4 InternalIP ("" while the node
	// controller has not set its addresses), for clouds whose backends are
	// IP:port rather than instances.
	Address string
	// AddressV6 is the node's first IPv6 InternalIP, else its first IPv6
	// ExternalIP, else "": the backend address of a dual-stack or IPv6
	// load balancer (an IPv6 global unicast address is an ExternalIP on
	// OCI, and reachable from the VCN all the same).
	AddressV6 string
	// Weight is the backend's share of new connections relative to the
	// others; 0 leaves it to the ops layer (the cloud's default weight).
	// Build leaves it 0; the subset choice may set it (lbsubset.Limit.
	// WeightCap).
	Weight int
}

// HealthCheckProtocol is how a health check probes a backend.
type HealthCheckProtocol string

// Health check protocols.
const (
	HealthCheckTCP  HealthCheckProtocol = "TCP"
	HealthCheckHTTP HealthCheckProtocol = "HTTP"
)

// HealthCheck says how the load balancer probes backends.
type HealthCheck struct {
	Enabled  bool
	Protocol HealthCheckProtocol
	// Port is the node port probed; 0 means each listener's own NodePort.
	Port int32
	// Path is the HTTP path (HTTP only).
	Path                                 string
	Interval, Timeout                    time.Duration
	HealthyThreshold, UnhealthyThreshold int
}

// SessionAffinity pins a client to one backend for Timeout.
type SessionAffinity struct {
	ClientIP bool
	Timeout  time.Duration // 0 unless ClientIP
}

// Ref identifies a Service's load balancer: the one created for the
// Service's UID, or the existing one the Service adopts.
type Ref struct {
	Service types.NamespacedName
	UID     types.UID
	// AdoptID is the id of an existing load balancer to use instead of
	// creating one; "" when none.
	AdoptID string
}

// Placement is what a provider's own annotations say about where the load
// balancer lives and what it is called. Each provider keeps the annotation
// names its users already have, so lbspec asks the provider to read them.
type Placement struct {
	Internal bool
	SubnetID string // internal load balancers: where the VIP comes from
	AdoptID  string
	Name     string // the name to create the load balancer with
	// NodeSelector is the provider's own spelling of the node selector
	// annotation (OCI's node-label-selector), used when
	// lb.ccmkit.io/node-selector is not set; nil selects every node.
	NodeSelector labels.Selector
}

// Spec is the load balancer a Service needs.
type Spec struct {
	Ref
	// ClusterName is the service controller's --cluster-name, for the
	// provider to label what it creates with; Build leaves it empty.
	ClusterName string
	// Name, Internal and SubnetID are used when the load balancer is created.
	Name     string
	Internal bool
	SubnetID string

	Listeners       []Listener // sorted by protocol, then port
	Backends        []Backend  // sorted by node name
	HealthCheck     HealthCheck
	SessionAffinity SessionAffinity
	// SourceRanges are the client CIDRs allowed in; nil means everyone.
	SourceRanges []string
	// BackendLimit is the most backends one listener may hold at any moment
	// (0: no limit), for a provider whose cloud has such a limit: it tells
	// the ops layer to free room before adding when backends are replaced.
	// Build leaves it 0; the provider sets it.
	BackendLimit int
	// DrainPeriod is how long a backend that is no longer wanted takes no
	// new connections but keeps its open ones before it is removed; 0
	// removes it at once. From the drain-period annotation, else
	// Options.DrainPeriod.
	DrainPeriod time.Duration
}

// LBSpec returns s. A cloud's desired state embeds Spec and so gets this
// method, which is how the shared load-balancer pipeline (internal/lb/lbkit)
// reaches the neutral part of any cloud's desired state.
func (s *Spec) LBSpec() *Spec { return s }

// Desired is the constraint on a cloud's desired state: a struct that
// embeds Spec and adds the cloud's own settings.
type Desired interface{ LBSpec() *Spec }

// Range bounds a value; the zero Range means no bound.
type Range[T int | time.Duration] struct{ Min, Max T }

func (r Range[T]) clamp(v T) T {
	if r.Min == 0 && r.Max == 0 {
		return v
	}
	return min(max(v, r.Min), r.Max)
}

// Limits are the provider's accepted ranges.
type Limits struct {
	HealthCheckInterval    Range[time.Duration]
	HealthCheckTimeout     Range[time.Duration]
	HealthCheckThreshold   Range[int]
	SessionAffinityTimeout Range[time.Duration]
}

// Options are the provider's part of building a Spec.
type Options struct {
	// Placement reads the provider's own annotations (type, subnet, load
	// balancer to adopt, name). Its errors are reported with the others.
	Placement func(svc *corev1.Service) (Placement, error)
	// InstanceID returns the provider's id for a node's instance, from its
	// providerID. A node it fails for is not a backend yet (it is usually
	// not initialized); the node controller will set it, and the service
	// controller then calls again.
	InstanceID func(node *corev1.Node) (string, error)
	Limits     Limits
	// DrainPeriod is the drain period of a Service without the annotation:
	// the cloud config's lb_drain_period.
	DrainPeriod time.Duration
	// TCPHealthCheck makes the default health check a TCP connection to
	// each backend's own port (the cloud's plain check, as an incumbent
	// controller that sets none leaves it) instead of HTTP on kube-proxy's
	// /healthz; the health check annotations still apply.
	TCPHealthCheck bool
}

// Defaults of the neutral annotations that are not typed descriptors
// (documented in internal/annotations).
const (
	DefaultHealthCheckPath = "/healthz"
	// KubeProxyHealthPort is where kube-proxy serves /healthz on every
	// node (--healthz-bind-address, default 0.0.0.0:10256). Since
	// Kubernetes 1.30 (KEP-3836) it answers 503 once the node is tainted
	// ToBeDeletedByClusterAutoscaler or is being deleted, so a load balancer
	// that probes it stops sending new connections to a node before the node
	// goes.
	KubeProxyHealthPort = 10256
	// defaultClientIPTimeout is Kubernetes' default for
	// sessionAffinityConfig.clientIP.timeoutSeconds.
	defaultClientIPTimeout = 10800 * time.Second
)

// ToBeDeletedTaint marks a node the cluster autoscaler is about to remove;
// the upstream service controller drops such nodes too.
const ToBeDeletedTaint = "ToBeDeletedByClusterAutoscaler"

// WantsLoadBalancer reports whether the service controller manages a load
// balancer for svc: type LoadBalancer without a loadBalancerClass.
func WantsLoadBalancer(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.LoadBalancerClass == nil
}

// RefOf returns the Service's Ref, for finding or deleting its load
// balancer without building (and validating) a whole Spec. adopt is the
// annotation naming a load balancer to adopt, if the provider has one.
func RefOf(svc *corev1.Service, adopt annotations.Name) Ref {
	ref := Ref{Service: types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}, UID: svc.UID}
	if adopt != "" {
		ref.AdoptID, _ = adopt.StringFromService(svc)
	}
	return ref
}

// Build computes the Spec for svc and the cluster's nodes. It returns every
// problem found, joined into one error, and no Spec if there is any.
func Build(svc *corev1.Service, nodes []*corev1.Node, opts Options) (*Spec, error) {
	var errs annotations.Problems
	spec := &Spec{Ref: RefOf(svc, "")}

	var p Placement
	if opts.Placement != nil {
		var err error
		p, err = opts.Placement(svc)
		errs.Add(err)
		spec.Name, spec.Internal, spec.SubnetID, spec.AdoptID = p.Name, p.Internal, p.SubnetID, p.AdoptID
	}
	var err error
	spec.Listeners, err = listeners(svc)
	errs.Add(err)
	spec.HealthCheck, err = healthCheck(svc, opts.Limits, opts.TCPHealthCheck)
	errs.Add(err)
	spec.SessionAffinity, err = sessionAffinity(svc, opts.Limits)
	errs.Add(err)
	spec.SourceRanges, err = sourceRanges(svc)
	errs.Add(err)
	spec.Backends, err = backends(svc, nodes, p.NodeSelector, opts.InstanceID)
	errs.Add(err)
	spec.DrainPeriod, err = drainPeriod(svc, opts.DrainPeriod)
	errs.Add(err)

	if len(errs) > 0 {
		return nil, &Error{Service: spec.Service, Problems: errs}
	}
	return spec, nil
}

// Error lists every problem Build found in a Service.
type Error struct {
	Service  types.NamespacedName
	Problems []error
}

// Error reads as one line, so that it fits a Warning Event.
func (e *Error) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Error()
	}
	return fmt.Sprintf("Service %s: %s", e.Service, strings.Join(msgs, "; "))
}

// Unwrap exposes the problems to errors.Is/As (e.g. *annotations.InvalidError).
func (e *Error) Unwrap() []error { return e.Problems }

func listeners(svc *corev1.Service) ([]Listener, error) {
	var out []Listener
	var errs []error
	for _, p := range svc.Spec.Ports {
		what := fmt.Sprintf("port %d/%s", p.Port, p.Protocol)
		if p.Name != "" {
			what = fmt.Sprintf("port %q (%d/%s)", p.Name, p.Port, p.Protocol)
		}
		proto := Protocol(p.Protocol)
		if proto == "" {
			proto = TCP
		}
		switch {
		case proto != TCP && proto != UDP:
			errs = append(errs, fmt.Errorf("%s: protocol %s is not supported by load balancers (use TCP or UDP)", what, p.Protocol))
		case p.NodePort == 0:
			errs = append(errs, fmt.Errorf("%s: no NodePort allocated; load balancers forward to NodePorts, so allocateLoadBalancerNodePorts must not be false", what))
		default:
			out = append(out, Listener{Protocol: proto, Port: p.Port, NodePort: p.NodePort})
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortFunc(out, compareListeners)
	return out, nil
}

func compareListeners(a, b Listener) int {
	if c := strings.Compare(string(a.Protocol), string(b.Protocol)); c != 0 {
		return c
	}
	return int(a.Port) - int(b.Port)
}

// healthCheck applies the annotations over the defaults: HTTP GET /healthz
// on kube-proxy's port 10256 (externalTrafficPolicy Cluster), which drains
// a node that is about to go, or, with externalTrafficPolicy Local, on the
// healthCheckNodePort, where kube-proxy answers 200 only on nodes that have
// a local endpoint, so that traffic goes only there. health-check-protocol
// tcp without a port probes each listener's NodePort instead, as before.
func healthCheck(svc *corev1.Service, lim Limits, tcp bool) (HealthCheck, error) {
	hc := HealthCheck{
		Protocol:           HealthCheckProtocol(strings.ToUpper(annotations.HealthCheckProtocol.Default)),
		Port:               int32(annotations.HealthCheckPort.Default),
		Path:               DefaultHealthCheckPath,
		Interval:           annotations.HealthCheckInterval.Default,
		Timeout:            annotations.HealthCheckTimeout.Default,
		HealthyThreshold:   annotations.HealthCheckHealthyThreshold.Default,
		UnhealthyThreshold: annotations.HealthCheckUnhealthyThreshold.Default,
	}
	if path, port := servicehelper.GetServiceHealthCheckPathPort(svc); port != 0 {
		hc.Path, hc.Port = path, port
	}
	if tcp {
		hc.Protocol, hc.Port = HealthCheckTCP, 0
	}

	var errs annotations.Problems
	hc.Enabled = annotations.HealthCheckEnabled.Value(svc, &errs)
	if v, err := annotations.HealthCheckProtocol.FromService(svc); errs.Check(err) {
		hc.Protocol = HealthCheckProtocol(strings.ToUpper(v))
		if hc.Protocol == HealthCheckTCP && hc.Port == KubeProxyHealthPort {
			hc.Port = 0 // the fallback: a connection to each NodePort
		}
	}
	if v, err := annotations.HealthCheckPort.FromService(svc); errs.Check(err) {
		hc.Port = int32(v)
	}
	if v, err := annotations.HealthCheckPath.StringFromService(svc); errs.Check(err) {
		if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \t") {
			errs.Check(annotations.HealthCheckPath.Invalid(v, "must be an HTTP path starting with / and without spaces"))
		} else {
			hc.Path = v
		}
	}
	if v, err := annotations.HealthCheckInterval.FromServiceIn(svc, lim.HealthCheckInterval.Min, lim.HealthCheckInterval.Max); errs.Check(err) {
		hc.Interval = v
	}
	if v, err := annotations.HealthCheckTimeout.FromServiceIn(svc, lim.HealthCheckTimeout.Min, lim.HealthCheckTimeout.Max); errs.Check(err) {
		hc.Timeout = v
	}
	threshold := lim.HealthCheckThreshold
	if threshold == (Range[int]{}) {
		threshold = Range[int]{Min: 1, Max: 1 << 20}
	}
	if v, err := annotations.HealthCheckHealthyThreshold.FromServiceIn(svc, threshold.Min, threshold.Max); errs.Check(err) {
		hc.HealthyThreshold = v
	}
	if v, err := annotations.HealthCheckUnhealthyThreshold.FromServiceIn(svc, threshold.Min, threshold.Max); errs.Check(err) {
		hc.UnhealthyThreshold = v
	}
	if len(errs) == 0 && hc.Timeout >= hc.Interval {
		name, value := annotations.HealthCheckTimeout, hc.Timeout.String()
		if !name.IsSet(svc) {
			name, value = annotations.HealthCheckInterval, hc.Interval.String()
		}
		errs = append(errs, name.Invalid(value, "the health check timeout (%s) must be shorter than its interval (%s)", hc.Timeout, hc.Interval))
	}
	if len(errs) > 0 {
		return HealthCheck{}, errors.Join(errs...)
	}
	return hc, nil
}

// sessionAffinity maps sessionAffinity: ClientIP. The Service's timeout
// (10800 s unless set) is brought into the provider's range, because the
// Kubernetes default exceeds what clouds accept; an explicit annotation
// must already be in range.
func sessionAffinity(svc *corev1.Service, lim Limits) (SessionAffinity, error) {
	if svc.Spec.SessionAffinity != corev1.ServiceAffinityClientIP {
		return SessionAffinity{}, nil
	}
	timeout := defaultClientIPTimeout
	if c := svc.Spec.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil {
		timeout = time.Duration(*c.ClientIP.TimeoutSeconds) * time.Second
	}
	timeout = lim.SessionAffinityTimeout.clamp(timeout)
	d, err := annotations.SessionAffinityTimeout.FromServiceIn(svc, lim.SessionAffinityTimeout.Min, lim.SessionAffinityTimeout.Max)
	switch {
	case err == nil:
		timeout = d
	case !errors.Is(err, annotations.ErrNotSet):
		return SessionAffinity{}, err
	}
	return SessionAffinity{ClientIP: true, Timeout: timeout}, nil
}

func drainPeriod(svc *corev1.Service, def time.Duration) (time.Duration, error) {
	d, err := annotations.DrainPeriod.FromService(svc)
	switch {
	case err == nil:
		return d, nil
	case errors.Is(err, annotations.ErrNotSet):
		return def, nil
	}
	return 0, err
}

// sourceRanges reads spec.loadBalancerSourceRanges, else the
// service.beta.kubernetes.io/load-balancer-source-ranges annotation, the
// way every cloud provider does. nil means no restriction.
func sourceRanges(svc *corev1.Service) ([]string, error) {
	set, err := servicehelper.GetLoadBalancerSourceRanges(svc)
	if err != nil {
		return nil, err
	}
	if servicehelper.IsAllowAll(set) {
		return nil, nil
	}
	ranges := set.StringSlice()
	slices.Sort(ranges)
	return ranges, nil
}

// Eligible reports whether a node may be a backend of any load balancer:
// not being deleted, not labeled
// node.kubernetes.io/exclude-from-external-load-balancers, and not about to
// be removed by the cluster autoscaler. These are the upstream service
// controller's rules, repeated so that a Spec never depends on the caller
// having filtered.
func Eligible(node *corev1.Node) bool {
	if node.DeletionTimestamp != nil {
		return false
	}
	if v, ok := node.Labels[corev1.LabelNodeExcludeBalancers]; ok {
		// As upstream: any value but a parsable false excludes the node.
		if exclude, err := strconv.ParseBool(v); err != nil || exclude {
			return false
		}
	}
	for _, t := range node.Spec.Taints {
		if t.Key == ToBeDeletedTaint {
			return false
		}
	}
	return true
}

// backends returns the eligible nodes that match the Service's node
// selector (the annotation, else the provider's alias) and have an instance
// id, sorted by name.
func backends(svc *corev1.Service, nodes []*corev1.Node, alias labels.Selector, instanceID func(*corev1.Node) (string, error)) ([]Backend, error) {
	selector := labels.Everything()
	if alias != nil {
		selector = alias
	}
	if sel, err := annotations.NodeSelector.SelectorFromService(svc); err == nil {
		selector = sel
	} else if !errors.Is(err, annotations.ErrNotSet) {
		return nil, err
	}
	seen := map[string]bool{}
	var out []Backend
	for _, n := range nodes {
		if n == nil || !Eligible(n) || !selector.Matches(labels.Set(n.Labels)) {
			continue
		}
		id := n.Spec.ProviderID
		if instanceID != nil {
			var err error
			if id, err = instanceID(n); err != nil {
				klog.V(2).InfoS("Node is not a load balancer backend yet", "node", n.Name, "service", klog.KObj(svc), "reason", err.Error())
				continue
			}
		}
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, Backend{NodeName: n.Name, InstanceID: id, Zone: n.Labels[corev1.LabelTopologyZone], Address: internalIPv4(n), AddressV6: nodeIPv6(n)})
	}
	slices.SortFunc(out, func(a, b Backend) int { return strings.Compare(a.NodeName, b.NodeName) })
	return out, nil
}

// nodeIPv6 is the node's first IPv6 InternalIP, else its first IPv6
// ExternalIP, or "".
func nodeIPv6(n *corev1.Node) string {
	for _, t := range []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeExternalIP} {
		for _, a := range n.Status.Addresses {
			if ip, err := netip.ParseAddr(a.Address); a.Type == t && err == nil && ip.Is6() && !ip.Is4In6() {
				return ip.String()
			}
		}
	}
	return ""
}

// internalIPv4 is the node's first IPv4 InternalIP, or "".
func internalIPv4(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if ip, err := netip.ParseAddr(a.Address); a.Type == corev1.NodeInternalIP && err == nil && ip.Is4() {
			return a.Address
		}
	}
	return ""
}
