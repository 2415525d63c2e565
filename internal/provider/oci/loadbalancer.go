package oci

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/lb/lbkit"
	"github.com/ccmkit/ccm/internal/lb/lbspec"
	"github.com/ccmkit/ccm/internal/oci/config"
	"github.com/ccmkit/ccm/internal/oci/lbops"
	"github.com/ccmkit/ccm/internal/oci/ociapi"
)

// ociTranslator turns a Service into the load balancer it needs: the
// neutral spec (internal/lb/lbspec) plus what the OCI annotations and the
// cloud config say. internal/lb/lbkit runs the pipeline around it and
// internal/oci/lbops does the cloud's side; nothing here calls an API.
type ociTranslator struct {
	cfg config.LoadBalancerConfig
	// upstream: what a Service leaves unset defaults to the public OCI
	// CCM's settings (defaults: upstream; upstreamdefaults.go).
	upstream bool
	// naming makes the display names (lbops/takeover.go).
	naming lbops.Naming
	// drainPeriod is lbDrainPeriod, the default of the drain annotation.
	drainPeriod time.Duration
	// secrets reads the TLS Secrets (tls.go); nil reads none.
	secrets *tlsSecrets
}

// loadBalancers is the LB/NLB implementation of cloudprovider.LoadBalancer.
type loadBalancers = lbkit.LoadBalancer[*lbops.Desired]

// EventReasonFixedShape is the reason of the Warning Event on a Service
// whose fixed LB shape is created as flexible.
const EventReasonFixedShape = "FixedShapeIsFlexible"

// EventReasonNodeSelectorsDisagree is the reason of the Warning Event on a
// Service whose lb.ccmkit.io/node-selector and upstream node-label-selector
// select differently.
const EventReasonNodeSelectorsDisagree = "NodeSelectorAnnotationsDisagree"

func newLoadBalancers(cfg *config.Config, c *ociapi.Clients, secrets *tlsSecrets) *loadBalancers {
	naming := lbops.Naming{Prefix: cfg.LoadBalancer.NamePrefix, UpstreamNLB: cfg.UpstreamDefaults()}
	tr := &ociTranslator{cfg: cfg.LoadBalancer, upstream: cfg.UpstreamDefaults(), naming: naming, drainPeriod: cfg.LBDrainPeriod, secrets: secrets}
	cfgKit := lbkit.Config{Provider: ProviderName, DriftPeriod: cfg.LBDriftCheckPeriod}
	if secrets != nil {
		cfgKit.Secrets = &secrets.SecretReader
	}
	return lbkit.New[*lbops.Desired](tr, func(hooks lbkit.Hooks) lbkit.Ops[*lbops.Desired] {
		return lbops.New(c.LB, c.NLB, c.Network, lbops.Config{
			Compartment: cfg.Compartment, VCN: cfg.VCN, Naming: naming, SecurityLists: cfg.LoadBalancer.SecurityLists, Hooks: hooks,
			ReadLagWindow: cfg.ReadLagWindow, LookupTTL: lbops.DefaultLookupTTL,
		})
	}, cfgKit)
}

// Name is the display name a new load balancer gets: the Service UID, as
// the public OCI CCM names them, so that it is found again whatever
// happens to the Service's name (with loadBalancer.namePrefix, and an
// NLB's name with defaults: upstream, as that CCM names them:
// lbops.Naming).
func (t *ociTranslator) Name(_ string, svc *corev1.Service) string {
	return t.naming.Name(kindOf(svc), lbspec.RefOf(svc, ""))
}

// kindOf is the Service's kind of load balancer, an invalid annotation
// read as the default (Desired reports it).
func kindOf(svc *corev1.Service) lbops.Kind {
	if v, err := annotations.OCILoadBalancerType.FromService(svc); err == nil {
		return lbops.Kind(v)
	}
	return lbops.KindLB
}

// Ref finds and deletes the Service's load balancer, of either kind, with
// our security list rules. It needs no valid annotation: a Service broken
// by an edit can still be deleted. A bad external-ip-only keeps its default
// (Ensure reports it).
func (t *ociTranslator) Ref(svc *corev1.Service) *lbops.Desired {
	d := &lbops.Desired{Spec: lbspec.Spec{Ref: lbspec.RefOf(svc, ""), Name: string(svc.UID)}}
	kind := kindOf(svc)
	d.PublishPrivate, d.APIOrder = t.upstream && kind == lbops.KindNLB, t.upstream
	if v, err := annotations.OCINLBExternalIPOnly.FromService(svc); err == nil {
		d.PublishPrivate, d.PublishPrivateSet = !v, true
	}
	d.Published = publishedIPs(svc)
	d.IngressIPMode, _ = ingressIPMode(svc) // for Get's status, as Ensure's
	d.ServiceNodePorts = serviceNodePorts(svc)
	d.SecurityListMode = t.defaultSecurityListMode(kind)
	for _, n := range []annotations.Enum{annotations.OCILBSecurityListManagementMode, annotations.OCINLBSecurityListManagementMode} {
		if m, err := n.FromService(svc); err == nil && m != "" && m != config.SecurityListModeNone {
			d.SecurityListMode = m // rules written under a per-Service mode are removed too
		}
	}
	_ = readNSGs(svc, &d.Settings) // mode NSG: the managed NSG and our backend rules go too
	return d
}

// publishedIPs are the addresses the Service's status lists now.
func publishedIPs(svc *corev1.Service) []string {
	var out []string
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if in.IP != "" {
			out = append(out, in.IP)
		}
	}
	return out
}

// Health check ranges OCI accepts.
var ociLimits = lbspec.Limits{
	HealthCheckInterval:  lbspec.Range[time.Duration]{Min: time.Second, Max: 30 * time.Minute},
	HealthCheckTimeout:   lbspec.Range[time.Duration]{Min: time.Millisecond, Max: 10 * time.Minute},
	HealthCheckThreshold: lbspec.Range[int]{Min: 1, Max: 10},
}

// fixedShapes are the legacy fixed LB shapes and their bandwidth in Mbps.
// oci-go-sdk v65.129.0, CreateLoadBalancerDetails.ShapeName: "After May
// 2023, Fixed shapes - 10Mbps, 100Mbps, 400Mbps, 8000Mbps would be
// deprecated and only shape allowed would be `Flexible`": a tenancy created
// since refuses them, so they are created as flexible with that bandwidth
// as minimum and maximum, which every tenancy accepts.
var fixedShapes = []string{"10Mbps", "100Mbps", "400Mbps", "8000Mbps"}

// subnetOCID is the shape of a subnet annotation's value.
var subnetOCID = config.OCIDPattern("subnet")

var fixedShapeMbps = map[string]int{"10Mbps": 10, "100Mbps": 100, "400Mbps": 400, "8000Mbps": 8000}

// Desired builds what the Service needs, and the warnings about what was
// changed on the way (a fixed shape made flexible). Every problem, neutral
// or OCI, comes back in one error naming each annotation or field.
func (t *ociTranslator) Desired(_ string, svc *corev1.Service, nodes []*corev1.Node) (*lbops.Desired, []lbkit.Warning, error) {
	var s lbops.Settings
	var hco hcOverrides
	var warnings []lbkit.Warning
	spec, err := lbspec.Build(svc, nodes, lbspec.Options{
		// The OCI annotations are read here, so that their problems are
		// reported together with the neutral ones.
		Placement: func(svc *corev1.Service) (lbspec.Placement, error) {
			internal, errs := t.readOCI(svc, &s, &warnings)
			errs = append(errs, readOptions(svc, &s, internal)...)
			errs = append(errs, readProxyProtocol(svc, &s))
			famErrs, famWarning := readIPFamilies(svc, &s)
			errs = append(errs, famErrs...)
			if famWarning != nil {
				warnings = append(warnings, *famWarning)
			}
			errs = append(errs, readRuleSets(svc, &s, &warnings))
			errs = append(errs, hco.read(svc, s.Kind)...)
			errs = append(errs, t.secrets.readTLS(svc, &s, &warnings)...)
			sel, w, err := nodeLabelSelector(svc, s.Kind)
			if err != nil {
				errs = append(errs, err)
			}
			if w != nil {
				warnings = append(warnings, *w)
			}
			return lbspec.Placement{Internal: internal, Name: t.naming.Name(s.Kind, lbspec.RefOf(svc, "")), NodeSelector: sel}, errors.Join(errs...)
		},
		InstanceID:  func(n *corev1.Node) (string, error) { return parseProviderID(n.Spec.ProviderID) },
		Limits:      ociLimits,
		DrainPeriod: t.drainPeriod,
	})
	if err != nil {
		return nil, nil, err
	}
	var problems []error
	if t.upstream {
		upstreamHealthCheck(svc, &spec.HealthCheck)
	}
	s.ServiceNodePorts, s.APIOrder = serviceNodePorts(svc), t.upstream
	if err := hco.apply(&spec.HealthCheck); err != nil {
		problems = append(problems, err)
	}
	if err := lbops.LimitsOf(s.Kind).CheckListeners(s.Kind, len(spec.Listeners)); err != nil {
		problems = append(problems, err)
	}
	if len(problems) > 0 {
		return nil, nil, &lbspec.Error{Service: spec.Service, Problems: problems}
	}
	// sessionAffinity ClientIP picks the policy unless the kind's policy
	// annotation does.
	policyAnnotation := map[lbops.Kind]annotations.Enum{lbops.KindLB: annotations.OCILBPolicy, lbops.KindNLB: annotations.OCINLBBackendPolicy}[s.Kind]
	if spec.SessionAffinity.ClientIP && !policyAnnotation.IsSet(svc) {
		s.Policy = map[lbops.Kind]string{lbops.KindLB: "IP_HASH", lbops.KindNLB: "TWO_TUPLE"}[s.Kind]
	}
	// OCI backends are IP:NodePort: a node without an IPv4 InternalIP is not
	// a backend yet (the node controller has not set its addresses).
	spec.Backends = slices.DeleteFunc(spec.Backends, func(b lbspec.Backend) bool {
		if b.Address == "" {
			klog.V(2).InfoS("Node is not a load balancer backend yet: no InternalIP", "node", b.NodeName, "service", klog.KObj(svc))
		}
		return b.Address == ""
	})
	if len(spec.SourceRanges) > 0 && s.SecurityListMode == config.SecurityListModeNone {
		klog.InfoS("loadBalancerSourceRanges are not enforced with security list mode None", "service", klog.KObj(svc))
	}
	return &lbops.Desired{Spec: *spec, Settings: s}, warnings, nil
}

// hcOverrides are the OCI health check annotations (retries, and interval
// and timeout in milliseconds as upstream), applied over the neutral spec's.
type hcOverrides struct {
	retries           int
	interval, timeout time.Duration
	timeoutName       annotations.Name
}

func (h *hcOverrides) read(svc *corev1.Service, kind lbops.Kind) []error {
	retries, interval, timeout := annotations.OCILBHealthCheckRetries, annotations.OCILBHealthCheckInterval, annotations.OCILBHealthCheckTimeout
	if kind == lbops.KindNLB {
		retries, interval, timeout = annotations.OCINLBHealthCheckRetries, annotations.OCINLBHealthCheckInterval, annotations.OCINLBHealthCheckTimeout
	}
	h.timeoutName = timeout.Name
	var errs annotations.Problems
	if v, err := retries.FromService(svc); errs.Check(err) {
		h.retries = v
	}
	if v, err := interval.FromService(svc); errs.Check(err) {
		h.interval = v
	}
	if v, err := timeout.FromService(svc); errs.Check(err) {
		h.timeout = v
	}
	if h.interval != 0 && h.timeout != 0 && h.timeout >= h.interval {
		errs = append(errs, timeout.Invalid(svc.Annotations[timeout.String()], "the health check timeout must be shorter than its interval (%s)", h.interval))
	}
	return errs
}

// apply puts the overrides into hc (retries are UnhealthyThreshold); an
// error when only one of interval and timeout was set and the result has
// the timeout not below the interval.
func (h *hcOverrides) apply(hc *lbspec.HealthCheck) error {
	if h.retries != 0 {
		hc.UnhealthyThreshold = h.retries
	}
	if h.interval != 0 {
		hc.Interval = h.interval
	}
	if h.timeout != 0 {
		hc.Timeout = h.timeout
	}
	if hc.Timeout >= hc.Interval {
		return h.timeoutName.Invalid(hc.Timeout.String(), "the health check timeout must be shorter than its interval (%s)", hc.Interval)
	}
	return nil
}

// readOCI reads the OCI annotations and the cloud config into d, and
// whether the load balancer is internal.
func (t *ociTranslator) readOCI(svc *corev1.Service, d *lbops.Settings, warnings *[]lbkit.Warning) (internal bool, _ []error) {
	var errs annotations.Problems
	d.Kind = lbops.Kind(annotations.OCILoadBalancerType.Value(svc, &errs))
	if d.Kind == lbops.KindLB {
		for _, p := range svc.Spec.Ports {
			if p.Protocol == corev1.ProtocolUDP {
				errs = append(errs, fmt.Errorf("port %d/%s: the OCI Load Balancer carries TCP only; set %s: nlb for UDP",
					p.Port, p.Protocol, annotations.OCILoadBalancerType))
			}
		}
	}
	if v, err := annotations.HealthCheckEnabled.FromService(svc); err == nil && !v {
		errs = append(errs, annotations.HealthCheckEnabled.Invalid("false", "OCI backend sets always have a health check"))
	}
	d.SecurityListMode = t.defaultSecurityListMode(d.Kind)
	modeAnnotation := annotations.OCILBSecurityListManagementMode
	if d.Kind == lbops.KindNLB {
		modeAnnotation = annotations.OCINLBSecurityListManagementMode
	}
	if m, err := modeAnnotation.FromService(svc); errs.Check(err) {
		d.SecurityListMode = m
	}
	errs = append(errs, readNSGs(svc, d)...)
	if d.Kind == lbops.KindNLB {
		internal = annotations.OCINLBInternal.Value(svc, &errs)
		subnet := t.cfg.Subnet1
		if v, err := subnetFrom(svc, annotations.OCINLBSubnet); errs.Check(err) {
			subnet = v
		}
		if subnet == "" {
			errs = append(errs, fmt.Errorf("no subnet for the network load balancer: set loadBalancer.subnet1 in the cloud config or annotation %s", annotations.OCINLBSubnet))
		} else {
			d.Subnets = []string{subnet}
		}
		d.Policy = annotations.OCINLBBackendPolicy.Value(svc, &errs)
		d.PreserveSource = t.upstream && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
		if v, err := annotations.OCINLBIsPreserveSource.FromService(svc); errs.Check(err) {
			d.PreserveSource = v
		}
		d.PublishPrivate = t.upstream
		if v, err := annotations.OCINLBExternalIPOnly.FromService(svc); errs.Check(err) {
			d.PublishPrivate, d.PublishPrivateSet = !v, true
		}
		d.Published = publishedIPs(svc)
		return internal, errs
	}

	internal = annotations.OCILBInternal.Value(svc, &errs)
	s1, s2 := t.cfg.Subnet1, t.cfg.Subnet2
	if v, err := subnetFrom(svc, annotations.OCILBSubnet1); errs.Check(err) {
		s1, s2 = v, ""
	}
	if v, err := subnetFrom(svc, annotations.OCILBSubnet2); errs.Check(err) {
		s2 = v
	}
	switch {
	case s1 == "":
		errs = append(errs, fmt.Errorf("no subnet for the load balancer: set loadBalancer.subnet1 in the cloud config or annotation %s", annotations.OCILBSubnet1))
	case internal || s2 == "":
		d.Subnets = []string{s1} // an internal load balancer lives in one (private) subnet
	default:
		d.Subnets = []string{s1, s2}
	}
	d.Shape = lbops.ShapeFlexible
	d.ShapeFromDefault = !annotations.OCILBShape.IsSet(svc) && !annotations.OCILBShapeFlexMin.IsSet(svc) && !annotations.OCILBShapeFlexMax.IsSet(svc)
	if v, err := annotations.OCILBShape.StringFromService(svc); errs.Check(err) {
		switch {
		case strings.EqualFold(v, lbops.ShapeFlexible):
		case canonical(fixedShapes, v) != "":
			d.FixedShape = canonical(fixedShapes, v)
		default:
			errs = append(errs, annotations.OCILBShape.Invalid(v, "must be flexible or one of %s", strings.Join(fixedShapes, ", ")))
		}
	}
	d.FlexMinMbps = annotations.OCILBShapeFlexMin.Value(svc, &errs)
	d.FlexMaxMbps = annotations.OCILBShapeFlexMax.Value(svc, &errs)
	if d.FixedShape != "" {
		mbps := fixedShapeMbps[d.FixedShape]
		msg := fmt.Sprintf("%s %s is a fixed shape, which OCI no longer creates (only flexible since May 2023): "+
			"the load balancer is flexible with %d-%d Mbps instead; set %s: flexible with %s and %s to choose the bandwidth",
			annotations.OCILBShape, d.FixedShape, mbps, mbps, annotations.OCILBShape, annotations.OCILBShapeFlexMin, annotations.OCILBShapeFlexMax)
		if annotations.OCILBShapeFlexMin.IsSet(svc) || annotations.OCILBShapeFlexMax.IsSet(svc) {
			msg += fmt.Sprintf(" (%s and %s are ignored with a fixed shape)", annotations.OCILBShapeFlexMin, annotations.OCILBShapeFlexMax)
		}
		*warnings = append(*warnings, lbkit.Warning{Reason: EventReasonFixedShape, Message: msg})
		d.FlexMinMbps, d.FlexMaxMbps = mbps, mbps
	}
	if d.FlexMaxMbps < d.FlexMinMbps {
		errs = append(errs, annotations.OCILBShapeFlexMax.Invalid(strconv.Itoa(d.FlexMaxMbps), "must be at least shape-flex-min (%d)", d.FlexMinMbps))
	}
	d.ListenerProtocol = annotations.OCILBBackendProtocol.Value(svc, &errs)
	// The range in seconds, as upstream documents it, rather than the
	// descriptor's "between 1s and 2h0m0s".
	idle := annotations.OCILBConnectionIdleTimeout
	if v, err := idle.FromServiceIn(svc, 0, 0); errs.Check(err) {
		if v < idle.Min || v > idle.Max {
			errs = append(errs, idle.Invalid(svc.Annotations[idle.String()], "must be between %d and %d seconds", idle.Min/time.Second, idle.Max/time.Second))
		} else {
			d.IdleTimeout = v
		}
	}
	d.Policy = annotations.OCILBPolicy.Default
	return internal, errs
}

// nodeLabelSelector reads the public OCI CCM's name for the node selector:
// oci.oraclecloud.com/node-label-selector on a load balancer, the
// oci-network-load-balancer.oraclecloud.com one on a network load balancer
// (each kind reads only its own, as upstream). lbspec uses it when
// lb.ccmkit.io/node-selector is not set; when that is set too and selects
// otherwise, ours wins and the Warning says so. An invalid ours is left to
// lbspec to report.
func nodeLabelSelector(svc *corev1.Service, kind lbops.Kind) (labels.Selector, *lbkit.Warning, error) {
	alias := annotations.OCINodeLabelSelector
	if kind == lbops.KindNLB {
		alias = annotations.OCINLBNodeLabelSelector
	}
	sel, err := alias.SelectorFromService(svc)
	if errors.Is(err, annotations.ErrNotSet) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	ours, err := annotations.NodeSelector.SelectorFromService(svc)
	if err != nil || ours.String() == sel.String() {
		return sel, nil, nil
	}
	return sel, &lbkit.Warning{Reason: EventReasonNodeSelectorsDisagree, Message: fmt.Sprintf(
		"annotations %s (%q) and %s (%q) select different nodes: %s is used; remove one of them or make them equal",
		annotations.NodeSelector, ours, alias, sel, annotations.NodeSelector)}, nil
}

// subnetFrom reads a subnet OCID annotation.
func subnetFrom(svc *corev1.Service, n annotations.Name) (string, error) {
	v, err := n.StringFromService(svc)
	if err != nil {
		return "", err
	}
	if !subnetOCID.MatchString(v) {
		return "", n.Invalid(v, "must be a subnet OCID (ocid1.subnet...)")
	}
	return v, nil
}

// canonical returns the entry of list equal to v ignoring case, or "".
func canonical(list []string, v string) string {
	for _, s := range list {
		if strings.EqualFold(s, v) {
			return s
		}
	}
	return ""
}
