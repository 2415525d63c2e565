package lbops

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/oracle/oci-go-sdk/v65/loadbalancer"

	"github.com/ccmkit/ccm/internal/lb/lbspec"
)

// Kind is the OCI service a Service's load balancer lives in.
type Kind string

// The kinds of load balancer.
const (
	// KindLB is the OCI Load Balancer (layer 4/7, flexible shape).
	KindLB Kind = "lb"
	// KindNLB is the OCI Network Load Balancer (layer 4, TCP and UDP).
	KindNLB Kind = "nlb"
)

// Desired is the load balancer a Service needs: the neutral spec
// (Spec.Name is the display name, the Service UID, by which the load
// balancer is found again; Spec.Backends carry each node's Address, as OCI
// backends are IP:port; Spec.HealthCheck's UnhealthyThreshold is OCI's
// retries) and the settings only OCI has, read by the provider from the OCI
// annotations and the cloud config.
type Desired struct {
	lbspec.Spec
	Settings

	// attachNSGs are the NSGs the load balancer is created with: NSGs and
	// the managed frontend NSG (set by reconcile, nsg.go).
	attachNSGs []string
}

// Settings are OCI's own settings of a load balancer.
type Settings struct {
	Kind    Kind
	Subnets []string // LB: one or two; NLB: one

	// Shape is the LB shape: "flexible" (with FlexMin/MaxMbps). LB only.
	Shape string
	// FixedShape is the legacy fixed shape the Service named (100Mbps),
	// created as flexible with FlexMin = FlexMax = its bandwidth, since OCI
	// creates only flexible ones after May 2023; an existing load balancer
	// of that fixed shape (an older tenancy) is left as it is. LB only.
	FixedShape       string
	FlexMinMbps      int
	FlexMaxMbps      int
	ListenerProtocol string // LB: TCP or HTTP (backend-protocol annotation)
	// IdleTimeout is the listeners' idle timeout; 0 leaves OCI's default.
	IdleTimeout time.Duration
	// ProxyProtocol is the PROXY protocol version the listeners send to
	// the backends (proxyprotocol.go): LB 1 or 2, NLB 2 (isPpv2Enabled,
	// TCP listeners); 0 sends none.
	ProxyProtocol int

	// Policy is the backend set policy: LB ROUND_ROBIN, LEAST_CONNECTIONS,
	// IP_HASH; NLB FIVE_TUPLE, THREE_TUPLE, TWO_TUPLE.
	Policy         string
	PreserveSource bool // NLB only

	// PublishPrivate also publishes a public NLB's private address, after
	// its public one (external-ip-only: false); by default a public load
	// balancer publishes only its public addresses.
	PublishPrivate bool
	// PublishPrivateSet says the Service chose PublishPrivate (its
	// external-ip-only annotation). Without it, a public NLB whose Service
	// already shows its private address keeps showing it: a switch-over
	// from the public OCI CCM, which publishes it, changes no address.
	PublishPrivateSet bool
	// Published are the addresses the Service's status lists now; when the
	// status would list the same ones, it keeps their order.
	Published []string
	// APIOrder publishes the addresses in the order OCI lists them, as the
	// public OCI CCM does (defaults: upstream), instead of public ones
	// first, each group sorted.
	APIOrder bool
	// SecurityListMode is None, Frontend or All (see seclist.go), or
	// SecurityRuleNSG (nsg.go); the rules allow Spec.SourceRanges in.
	SecurityListMode string
	// NSGs are the network security groups the Service attaches to the
	// load balancer (the oci-network-security-groups annotations); in mode
	// SecurityRuleNSG the managed frontend NSG is added to them.
	NSGs []string
	// BackendNSGs are the nodes' NSGs that mode SecurityRuleNSG opens to
	// the frontend NSG (oci-backend-network-security-group).
	BackendNSGs []string

	// The options of issue 14 items 4 and 6 (reservedip.go, options.go).
	// LoadBalancerIP is spec.loadBalancerIP, the address of a reserved
	// public IP the load balancer takes at creation; reservedIPID is that
	// public IP's OCID, looked up just before the creation.
	LoadBalancerIP string
	reservedIPID   string
	// AssignedPrivateIPv4 is the NLB's private address, at creation.
	AssignedPrivateIPv4 string
	// InitialFreeformTags and InitialDefinedTags go on the load balancer
	// at creation, besides our own freeform tags.
	InitialFreeformTags map[string]string
	InitialDefinedTags  map[string]map[string]interface{}
	// IngressIPMode is the status' ipMode (VIP or Proxy); "" leaves it out.
	IngressIPMode corev1.LoadBalancerIPMode

	// TLS is the Service's TLS (LB only, tls.go).
	TLS TLS
	// IPVersion is the NLB's nlbIpVersion (dualstack.go): IPV4 ("" too),
	// IPV6 or IPV4_AND_IPV6. NLB only.
	IPVersion string
	// AssignedIPv6 is the NLB's IPv6 address, at creation (assigned-ipv6).
	AssignedIPv6 string
	// RuleSets are the LB's rule sets, applied by every listener
	// (rulesets.go). LB only.
	RuleSets RuleSets

	// ShapeFromDefault: the Service names no shape (none of the shape
	// annotations), so an existing Load Balancer keeps the shape it has,
	// as the public OCI CCM keeps it (its getLBShape); only a new one gets
	// Shape. LB only.
	ShapeFromDefault bool
	// ServiceNodePorts are the Service's NodePorts and its
	// healthCheckNodePort: ports no other Service uses, so that a security
	// list rule the public OCI CCM wrote on one of them is this Service's
	// (seclist.go). Set by the translator's Desired and Ref alike.
	ServiceNodePorts []int
}

// ---- the neutral model of what is (or should be) on the load balancer ----

// listenerModel is one listener, LB or NLB.
type listenerModel struct {
	Name       string
	Protocol   string
	Port       int
	BackendSet string
	// IdleTimeoutSec is 0 when not managed (LB only).
	IdleTimeoutSec int64
	// ProxyVersion is the PROXY protocol version, 0 for none
	// (proxyprotocol.go).
	ProxyVersion int
	// RuleSets are the rule sets the listener applies, sorted (LB only).
	RuleSets []string
	// idleNow is the listener's idle timeout in OCI when an update is
	// planned: an LB update that must send a connection configuration
	// keeps it when the Service leaves the idle timeout unmanaged.
	idleNow int64
	// SSL is the listener's TLS termination, nil for none (LB only, tls.go).
	SSL *sslModel
	// IPVersion is IPV4 or IPV6 (NLB), "" (LB: no ipVersion).
	IPVersion string
}

// ipModel is one address of a load balancer. OCI says whether each is
// public (IpAddress.isPublic); a public NLB lists its private address too.
type ipModel struct {
	IP     string
	Public bool
	// Reserved: the address is a reserved IP (IpAddress.reservedIp).
	Reserved bool
}

// backendModel is one backend of a backend set. Drain marks one that is
// leaving: it takes no new connections (drain.go).
type backendModel struct {
	IP    string
	Port  int
	Drain bool
}

// healthModel is a backend set's health checker.
type healthModel struct {
	Protocol   string
	Port       int
	Path       string // HTTP only
	ReturnCode int    // HTTP only
	Retries    int
	IntervalMs int
	TimeoutMs  int
	// ForcePlainText keeps the check in plain text on a backend set that
	// speaks TLS to the nodes (LB only, tls.go).
	ForcePlainText bool
}

// backendSetModel is one backend set, LB or NLB.
type backendSetModel struct {
	Name           string
	Policy         string
	Health         healthModel
	Backends       []backendModel // sorted
	PreserveSource bool
	// SSL is TLS to the backends, nil for none (LB only, tls.go).
	SSL       *sslModel
	IPVersion string // as listenerModel's
}

// actual is a load balancer as found in OCI.
type actual struct {
	ID          string
	State       string // lifecycle state
	Internal    bool
	Subnets     []string
	Shape       string
	FlexMinMbps int
	FlexMaxMbps int
	IPs         []ipModel
	IPVersion   string   // NLB: nlbIpVersion (IPV4 when OCI leaves it out)
	NSGs        []string // sorted
	Listeners   map[string]listenerModel
	BackendSets map[string]backendSetModel
	// Certificates are the names of the LB's certificates (tls.go).
	Certificates map[string]bool
	RuleSets     map[string]string // name -> rulesJSON (LB only)
	// DisplayName is the name it was found under; Tags its freeform tags.
	DisplayName string
	Tags        map[string]string
}

// ownedName matches the listener and backend set names we create,
// <PROTO>-<port>, and those the public OCI CCM creates (the same, and
// HTTP-<port> or GRPC-<port> for a listener whose backend protocol is
// HTTP or GRPC; takeover.go). Anything else on the load balancer is not
// ours to delete.
func ownedName(name string) bool {
	name = strings.TrimSuffix(name, ipv6NameSuffix)
	proto, port, ok := strings.Cut(name, "-")
	if !ok || !slices.Contains([]string{"TCP", "UDP", "HTTP", "GRPC"}, proto) || port == "" {
		return false
	}
	return strings.Trim(port, "0123456789") == ""
}

// desiredSets computes the listeners and backend sets a Desired calls for:
// one backend set per listener, named like it, holding every backend on
// the listener's NodePort.
func desiredSets(d *Desired) ([]listenerModel, []backendSetModel) {
	var ls []listenerModel
	var bss []backendSetModel
	for _, l := range d.Listeners {
		name := l.Name()
		proto := string(l.Protocol)
		if d.Kind == KindLB {
			proto = d.ListenerProtocol
		}
		ls = append(ls, listenerModel{
			Name: name, Protocol: proto, Port: int(l.Port), BackendSet: name,
			IdleTimeoutSec: int64(d.IdleTimeout / time.Second), ProxyVersion: proxyVersionFor(d, proto),
			RuleSets: ruleSetsFor(d).names(),
		})
		bs := backendSetModel{Name: name, Policy: d.Policy, Health: healthFor(d, l), PreserveSource: d.PreserveSource}
		for _, b := range d.Backends {
			bs.Backends = append(bs.Backends, backendModel{IP: b.Address, Port: int(l.NodePort)})
		}
		sortBackends(bs.Backends)
		bss = append(bss, bs)
	}
	withTLS(d, ls, bss)
	return withIPVersions(d, ls, bss)
}

// kubeProxyHealthPort is where kube-proxy answers /healthz on every node:
// the probe for UDP listeners, whose NodePort cannot be probed over TCP.
const kubeProxyHealthPort = 10256

// healthFor is the health checker of listener l's backend set.
func healthFor(d *Desired, l lbspec.Listener) healthModel {
	hc := d.HealthCheck
	h := healthModel{
		Protocol: string(hc.Protocol), Port: int(hc.Port), Retries: hc.UnhealthyThreshold,
		IntervalMs: int(hc.Interval / time.Millisecond), TimeoutMs: int(hc.Timeout / time.Millisecond),
	}
	if h.Port == 0 {
		h.Port = int(l.NodePort)
		if l.Protocol == lbspec.UDP && h.Protocol == "TCP" {
			h.Protocol, h.Port, hc.Path = "HTTP", kubeProxyHealthPort, "/healthz"
		}
	}
	if h.Protocol == "HTTP" {
		h.Path, h.ReturnCode = hc.Path, 200
	}
	return h
}

func sortBackends(bs []backendModel) {
	slices.SortFunc(bs, func(a, b backendModel) int {
		if c := strings.Compare(a.IP, b.IP); c != 0 {
			return c
		}
		return a.Port - b.Port
	})
}

// equalListener compares what we manage of a listener. An unmanaged idle
// timeout (0) is not compared.
func equalListener(want, got listenerModel) bool {
	if want.IdleTimeoutSec != 0 && want.IdleTimeoutSec != got.IdleTimeoutSec {
		return false
	}
	return want.Protocol == got.Protocol && want.Port == got.Port && want.BackendSet == got.BackendSet &&
		want.ProxyVersion == got.ProxyVersion && equalSSL(want.SSL, got.SSL) && want.IPVersion == got.IPVersion &&
		slices.Equal(want.RuleSets, got.RuleSets)
}

// equalBackendSet compares what we manage of a backend set.
func equalBackendSet(want, got backendSetModel) bool {
	return want.Policy == got.Policy && want.Health == got.Health &&
		want.PreserveSource == got.PreserveSource && want.IPVersion == got.IPVersion && slices.Equal(want.Backends, got.Backends) &&
		equalSSL(want.SSL, got.SSL)
}

// step is one write of a plan, applied and awaited in order.
type step struct {
	verb verb
	what object
	name string
	ls   listenerModel
	bs   backendSetModel
	cert *Certificate // create certificate
	// rules are a rule set's (rulesets.go).
	rules []loadbalancer.Rule
	// tags are the load balancer's freeform tags (update load balancer:
	// the takeover's, takeover.go).
	tags map[string]string
}

func (s step) String() string { return fmt.Sprintf("%s %s %s", s.verb, s.what, s.name) }

// action is a step's verb and object, which the drivers switch on.
type action struct {
	verb verb
	what object
}

func (s step) action() action { return action{s.verb, s.what} }

// verb is what a step does to its object: typed, so that a step the
// drivers do not know cannot be written.
type verb uint8

const (
	verbCreate verb = iota + 1
	verbUpdate
	verbDelete
)

func (v verb) String() string { return [...]string{"?", "create", "update", "delete"}[v] }

// op is the verb as OCI's operation names begin ("Create").
func (v verb) op() string { return [...]string{"?", "Create", "Update", "Delete"}[v] }

// object is what a step writes.
type object uint8

const (
	objListener object = iota + 1
	objBackendSet
	objCertificate
	objRuleSet
	objLoadBalancer
)

func (o object) String() string {
	return [...]string{"?", "listener", "backend set", "certificate", "rule set", "load balancer"}[o]
}

// op is the object as OCI's operation names end ("BackendSet"); a Network
// Load Balancer's own is NetworkLoadBalancer (opName).
func (o object) op() string {
	return [...]string{"?", "Listener", "BackendSet", "Certificate", "RuleSet", "LoadBalancer"}[o]
}

// plan computes the writes that turn actual into the desired listeners and
// backend sets, as a pure function (the drift check is this without the
// writes). Order matters to OCI: a listener needs its backend set, and a
// backend set cannot go while a listener uses it. So: create and update
// backend sets, then create, update and delete listeners, then delete
// backend sets. Only our own names (<PROTO>-<port>) are ever deleted.
func plan(a *actual, ls []listenerModel, bss []backendSetModel) []step {
	ls = listenerNames(a, ls)
	var steps []step
	wantBS := map[string]bool{}
	for _, bs := range bss {
		wantBS[bs.Name] = true
		got, ok := a.BackendSets[bs.Name]
		switch {
		case !ok:
			steps = append(steps, step{verb: verbCreate, what: objBackendSet, name: bs.Name, bs: bs})
		case !equalBackendSet(bs, got):
			steps = append(steps, step{verb: verbUpdate, what: objBackendSet, name: bs.Name, bs: bs})
		}
	}
	wantL := map[string]bool{}
	for _, l := range ls {
		wantL[l.Name] = true
		got, ok := a.Listeners[l.Name]
		switch {
		case !ok:
			steps = append(steps, step{verb: verbCreate, what: objListener, name: l.Name, ls: l})
		case !equalListener(l, got):
			l.idleNow = got.IdleTimeoutSec
			steps = append(steps, step{verb: verbUpdate, what: objListener, name: l.Name, ls: l})
		}
	}
	for _, name := range sortedKeys(a.Listeners) {
		if !wantL[name] && ownedName(name) {
			steps = append(steps, step{verb: verbDelete, what: objListener, name: name})
		}
	}
	for _, name := range sortedKeys(a.BackendSets) {
		if !wantBS[name] && ownedName(name) && !usedByForeignListener(a, name, wantL) {
			steps = append(steps, step{verb: verbDelete, what: objBackendSet, name: name})
		}
	}
	return steps
}

// usedByForeignListener reports whether a listener we do not own (and so
// keep) still points at backend set name, which OCI would refuse to delete.
func usedByForeignListener(a *actual, name string, wanted map[string]bool) bool {
	for ln, l := range a.Listeners {
		if l.BackendSet == name && !ownedName(ln) && !wanted[ln] {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
