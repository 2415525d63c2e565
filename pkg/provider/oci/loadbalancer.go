package oci

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/drain"
	"github.com/ccmkit/ccm/internal/lbdrift"
	"github.com/ccmkit/ccm/internal/lbspec"
	"github.com/ccmkit/ccm/internal/lbsubset"
	"github.com/ccmkit/ccm/internal/oci/config"
	"github.com/ccmkit/ccm/internal/oci/lbops"
	"github.com/ccmkit/ccm/internal/oci/ociapi"
	"github.com/ccmkit/ccm/internal/svclock"
)

// lbOps is what the interface layer needs of internal/oci/lbops; tests fake it.
type lbOps interface {
	Get(ctx context.Context, displayName string, publishPrivate bool) (*corev1.LoadBalancerStatus, bool, error)
	Ensure(ctx context.Context, d *lbops.Desired) (*corev1.LoadBalancerStatus, error)
	Update(ctx context.Context, d *lbops.Desired) error
	Delete(ctx context.Context, d *lbops.Desired) error
	Drift(ctx context.Context, d *lbops.Desired) ([]string, error)
}

// loadBalancers implements cloudprovider.LoadBalancer: it translates a
// Service and the nodes into an lbops.Desired (the provider-neutral spec
// from internal/lbspec plus OCI's annotations and the cloud config) and
// hands it to the operations layer. It calls no API itself.
type loadBalancers struct {
	cfg     config.LoadBalancerConfig
	ops     lbOps
	subsets *lbsubset.Subsetter // nil: subsets chosen without Events or Local narrowing
	// events records the Warning Events of what the provider changed
	// in a Service's request (a fixed shape made flexible); nil: none.
	events record.EventRecorder
	// locks keeps one Service's Ensure, Update and Delete from running at
	// once (internal/svclock says why).
	locks svclock.Locks
	// drainPeriod is lbDrainPeriod; rerun runs a Service's last Ensure or
	// Update again when a backend's drain ends (internal/drain).
	drainPeriod time.Duration
	rerun       *drain.Rerun
	stopRerun   context.CancelFunc
}

// EventReasonFixedShape is the reason of the Warning Event on a Service
// whose fixed LB shape is created as flexible.
const EventReasonFixedShape = "FixedShapeIsFlexible"

var _ cloudprovider.LoadBalancer = (*loadBalancers)(nil)

func newLoadBalancer(cfg *config.Config, c *ociapi.Clients, subsets *lbsubset.Subsetter) *loadBalancers {
	ctx, cancel := context.WithCancel(context.Background())
	rerun := drain.NewRerun(ctx)
	return &loadBalancers{cfg: cfg.LoadBalancer, subsets: subsets, ops: lbops.New(c.LB, c.NLB, c.Network, lbops.Config{
		Compartment: cfg.Compartment, SecurityLists: cfg.LoadBalancer.SecurityLists, OnDrain: rerun.At,
	}), drainPeriod: cfg.LBDrainPeriod, rerun: rerun, stopRerun: cancel}
}

// stopDrains ends the drain reruns when the CCM stops.
func (l *loadBalancers) stopDrains(stop <-chan struct{}) {
	if l.stopRerun == nil {
		return
	}
	go func() {
		<-stop
		l.stopRerun()
	}()
}

// rememberForDrains keeps this call's arguments: when a backend's drain
// ends, UpdateLoadBalancer runs again with the latest ones, since the
// service controller has no reason to call then.
func (l *loadBalancers) rememberForDrains(clusterName string, svc *corev1.Service, nodes []*corev1.Node) {
	l.rerun.Remember(svc.UID, func(ctx context.Context) error {
		return l.UpdateLoadBalancer(ctx, clusterName, svc, nodes)
	})
}

// GetLoadBalancerName is the load balancer's display name: the Service UID,
// as the public OCI CCM names them, so that it is found again whatever
// happens to the Service's name.
func (l *loadBalancers) GetLoadBalancerName(_ context.Context, _ string, svc *corev1.Service) string {
	return string(svc.UID)
}

// GetLoadBalancer reports the Service's load balancer, of either kind.
func (l *loadBalancers) GetLoadBalancer(ctx context.Context, _ string, svc *corev1.Service) (*corev1.LoadBalancerStatus, bool, error) {
	return l.ops.Get(ctx, string(svc.UID), publishPrivate(svc))
}

// publishPrivate reads external-ip-only (default true: a public load
// balancer publishes only its public addresses). A bad value keeps the
// default; Ensure reports it.
func publishPrivate(svc *corev1.Service) bool {
	v, err := annotations.OCINLBExternalIPOnly.BoolFromService(svc)
	return err == nil && !v
}

// EnsureLoadBalancer creates or updates the Service's load balancer. A bad
// annotation is reported (every problem at once) before any API call, so
// the existing load balancer stays as it is.
func (l *loadBalancers) EnsureLoadBalancer(ctx context.Context, clusterName string, svc *corev1.Service, nodes []*corev1.Node) (*corev1.LoadBalancerStatus, error) {
	defer l.locks.Lock(svc.UID)()
	l.rememberForDrains(clusterName, svc, nodes)
	d, warnings, err := l.desired(svc, nodes)
	if err != nil {
		return nil, err
	}
	l.warn(svc, warnings)
	return l.ops.Ensure(ctx, d)
}

// UpdateLoadBalancer updates the backends when nodes change.
func (l *loadBalancers) UpdateLoadBalancer(ctx context.Context, clusterName string, svc *corev1.Service, nodes []*corev1.Node) error {
	defer l.locks.Lock(svc.UID)()
	l.rememberForDrains(clusterName, svc, nodes)
	d, warnings, err := l.desired(svc, nodes)
	if err != nil {
		return err
	}
	l.warn(svc, warnings)
	return l.ops.Update(ctx, d)
}

// EnsureLoadBalancerDeleted deletes the Service's load balancer, of either
// kind, and our security list rules. It needs no valid annotation: a
// Service broken by an edit can still be deleted.
func (l *loadBalancers) EnsureLoadBalancerDeleted(ctx context.Context, _ string, svc *corev1.Service) error {
	defer l.locks.Lock(svc.UID)()
	l.rerun.Forget(svc.UID)
	if l.subsets != nil {
		l.subsets.Forget(svc)
	}
	d := &lbops.Desired{Ref: lbspec.RefOf(svc, ""), DisplayName: string(svc.UID), SecurityListMode: l.cfg.SecurityListMode()}
	for _, n := range []annotations.Name{annotations.OCILBSecurityListManagementMode, annotations.OCINLBSecurityListManagementMode} {
		if m, err := securityListMode(svc, n); err == nil && m != "" && m != config.SecurityListModeNone {
			d.SecurityListMode = m // rules written under a per-Service mode are removed too
		}
	}
	return l.ops.Delete(ctx, d)
}

// drift is the drift check's CheckFunc: each Service's load balancer
// compared, reading only, with what EnsureLoadBalancer would make of it
// (the same backends, subset included).
func (l *loadBalancers) drift(ctx context.Context, services []*corev1.Service, nodes []*corev1.Node) map[types.UID]lbdrift.Result {
	out := make(map[types.UID]lbdrift.Result, len(services))
	for _, svc := range services {
		d, _, err := l.desired(svc, nodes)
		if err != nil {
			out[svc.UID] = lbdrift.Result{Err: err}
			continue
		}
		diffs, err := l.ops.Drift(ctx, d)
		out[svc.UID] = lbdrift.Result{Diffs: diffs, Err: err}
	}
	return out
}

// Health check ranges OCI accepts.
var ociLimits = lbspec.Limits{
	HealthCheckInterval:  lbspec.Range[time.Duration]{Min: time.Second, Max: 30 * time.Minute},
	HealthCheckTimeout:   lbspec.Range[time.Duration]{Min: time.Millisecond, Max: 10 * time.Minute},
	HealthCheckThreshold: lbspec.Range[int]{Min: 1, Max: 10},
}

// Defaults of the LB-specific annotations.
const (
	defaultFlexMinMbps = 10
	defaultFlexMaxMbps = 100
)

// fixedShapes are the legacy fixed LB shapes and their bandwidth in Mbps.
// oci-go-sdk v65.129.0, CreateLoadBalancerDetails.ShapeName: "After May
// 2023, Fixed shapes - 10Mbps, 100Mbps, 400Mbps, 8000Mbps would be
// deprecated and only shape allowed would be `Flexible`": a tenancy created
// since refuses them, so they are created as flexible with that bandwidth
// as minimum and maximum, which every tenancy accepts.
// subnetOCID is the shape of a subnet annotation's value.
var subnetOCID = config.OCIDPattern("subnet")

var fixedShapes = []string{"10Mbps", "100Mbps", "400Mbps", "8000Mbps"}

var fixedShapeMbps = map[string]int{"10Mbps": 10, "100Mbps": 100, "400Mbps": 400, "8000Mbps": 8000}

// warn records a Warning Event on the Service for each warning.
func (l *loadBalancers) warn(svc *corev1.Service, warnings []string) {
	for _, w := range warnings {
		klog.InfoS("Service load balancer request changed", "service", klog.KObj(svc), "change", w)
		if l.events != nil {
			l.events.Event(svc, corev1.EventTypeWarning, EventReasonFixedShape, w)
		}
	}
}

// desired builds what the Service needs, and the warnings about what was
// changed on the way (a fixed shape made flexible). Every problem, neutral
// or OCI, comes back in one error naming each annotation or field.
func (l *loadBalancers) desired(svc *corev1.Service, nodes []*corev1.Node) (*lbops.Desired, []string, error) {
	d := &lbops.Desired{DisplayName: string(svc.UID)}
	var hco hcOverrides
	var warnings []string
	spec, err := lbspec.Build(svc, nodes, lbspec.Options{
		// The OCI annotations are read here, so that their problems are
		// reported together with the neutral ones.
		Placement: func(svc *corev1.Service) (lbspec.Placement, error) {
			errs := l.readOCI(svc, d, &warnings)
			errs = append(errs, hco.read(svc, d.Kind)...)
			return lbspec.Placement{Internal: d.Internal, Name: d.DisplayName}, errors.Join(errs...)
		},
		InstanceID:  func(n *corev1.Node) (string, error) { return parseProviderID(n.Spec.ProviderID) },
		Limits:      ociLimits,
		DrainPeriod: l.drainPeriod,
	})
	if err != nil {
		return nil, nil, err
	}
	d.Ref, d.Listeners, d.SourceRanges, d.DrainPeriod = spec.Ref, spec.Listeners, spec.SourceRanges, spec.DrainPeriod
	hc := spec.HealthCheck
	d.HealthCheck = lbops.HealthCheck{
		Protocol: string(hc.Protocol), Port: hc.Port, Path: hc.Path,
		Retries: hc.UnhealthyThreshold, Interval: hc.Interval, Timeout: hc.Timeout,
	}
	if err := hco.apply(&d.HealthCheck); err != nil {
		return nil, nil, &lbspec.Error{Service: spec.Service, Problems: []error{err}}
	}
	if spec.SessionAffinity.ClientIP && !annotations.OCINLBBackendPolicy.IsSet(svc) {
		d.Policy = map[lbops.Kind]string{lbops.KindLB: "IP_HASH", lbops.KindNLB: "TWO_TUPLE"}[d.Kind]
	}
	if d.Backends, err = l.chooseBackends(svc, spec, nodes, d.Kind); err != nil {
		return nil, nil, err
	}
	if len(spec.SourceRanges) > 0 && d.SecurityListMode == config.SecurityListModeNone {
		klog.InfoS("loadBalancerSourceRanges are not enforced with security list mode None", "service", klog.KObj(svc))
	}
	return d, warnings, nil
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
	h.timeoutName = timeout
	var errs []error
	collect := func(err error) bool {
		if err != nil && !errors.Is(err, annotations.ErrNotSet) {
			errs = append(errs, err)
		}
		return err == nil
	}
	if v, err := retries.IntInRangeFromService(svc, 1, 10); collect(err) {
		h.retries = v
	}
	if v, err := millis(svc, interval, time.Second, 30*time.Minute); collect(err) {
		h.interval = v
	}
	if v, err := millis(svc, timeout, time.Millisecond, 10*time.Minute); collect(err) {
		h.timeout = v
	}
	if h.interval != 0 && h.timeout != 0 && h.timeout >= h.interval {
		errs = append(errs, timeout.Invalid(svc.Annotations[string(timeout)], "the health check timeout must be shorter than its interval (%s)", h.interval))
	}
	return errs
}

// apply puts the overrides into hc; an error when only one of interval and
// timeout was set and the result has the timeout not below the interval.
func (h *hcOverrides) apply(hc *lbops.HealthCheck) error {
	if h.retries != 0 {
		hc.Retries = h.retries
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

// readOCI reads the OCI annotations and the cloud config into d.
func (l *loadBalancers) readOCI(svc *corev1.Service, d *lbops.Desired, warnings *[]string) []error {
	var errs []error
	collect := func(err error) bool {
		if err != nil && !errors.Is(err, annotations.ErrNotSet) {
			errs = append(errs, err)
			return false
		}
		return err == nil
	}
	d.Kind = lbops.KindLB
	if v, err := annotations.OCILoadBalancerType.EnumFromService(svc, "lb", "nlb"); collect(err) {
		d.Kind = lbops.Kind(v)
	}
	if d.Kind == lbops.KindLB {
		for _, p := range svc.Spec.Ports {
			if p.Protocol == corev1.ProtocolUDP {
				errs = append(errs, fmt.Errorf("port %d/%s: the OCI Load Balancer carries TCP only; set %s: nlb for UDP",
					p.Port, p.Protocol, annotations.OCILoadBalancerType))
			}
		}
	}
	if v, err := annotations.HealthCheckEnabled.BoolFromService(svc); err == nil && !v {
		errs = append(errs, annotations.HealthCheckEnabled.Invalid("false", "OCI backend sets always have a health check"))
	}
	d.SecurityListMode = l.cfg.SecurityListMode()
	modeAnnotation := annotations.OCILBSecurityListManagementMode
	if d.Kind == lbops.KindNLB {
		modeAnnotation = annotations.OCINLBSecurityListManagementMode
	}
	if m, err := securityListMode(svc, modeAnnotation); collect(err) {
		d.SecurityListMode = m
	}
	if d.Kind == lbops.KindNLB {
		if v, err := annotations.OCINLBInternal.BoolFromService(svc); collect(err) {
			d.Internal = v
		}
		subnet := l.cfg.Subnet1
		if v, err := subnetFrom(svc, annotations.OCINLBSubnet); collect(err) {
			subnet = v
		}
		if subnet == "" {
			errs = append(errs, fmt.Errorf("no subnet for the network load balancer: set loadBalancer.subnet1 in the cloud config or annotation %s", annotations.OCINLBSubnet))
		} else {
			d.Subnets = []string{subnet}
		}
		d.Policy = "FIVE_TUPLE"
		if v, err := annotations.OCINLBBackendPolicy.EnumFromService(svc, "FIVE_TUPLE", "THREE_TUPLE", "TWO_TUPLE"); collect(err) {
			d.Policy = v
		}
		if v, err := annotations.OCINLBIsPreserveSource.BoolFromService(svc); collect(err) {
			d.PreserveSource = v
		}
		if v, err := annotations.OCINLBExternalIPOnly.BoolFromService(svc); collect(err) {
			d.PublishPrivate = !v
		}
		return errs
	}

	if v, err := annotations.OCILBInternal.BoolFromService(svc); collect(err) {
		d.Internal = v
	}
	s1, s2 := l.cfg.Subnet1, l.cfg.Subnet2
	if v, err := subnetFrom(svc, annotations.OCILBSubnet1); collect(err) {
		s1, s2 = v, ""
	}
	if v, err := subnetFrom(svc, annotations.OCILBSubnet2); collect(err) {
		s2 = v
	}
	switch {
	case s1 == "":
		errs = append(errs, fmt.Errorf("no subnet for the load balancer: set loadBalancer.subnet1 in the cloud config or annotation %s", annotations.OCILBSubnet1))
	case d.Internal || s2 == "":
		d.Subnets = []string{s1} // an internal load balancer lives in one (private) subnet
	default:
		d.Subnets = []string{s1, s2}
	}
	d.Shape = lbops.ShapeFlexible
	if v, err := annotations.OCILBShape.StringFromService(svc); collect(err) {
		switch {
		case strings.EqualFold(v, lbops.ShapeFlexible):
		case canonical(fixedShapes, v) != "":
			d.FixedShape = canonical(fixedShapes, v)
		default:
			errs = append(errs, annotations.OCILBShape.Invalid(v, "must be flexible or one of %s", strings.Join(fixedShapes, ", ")))
		}
	}
	d.FlexMinMbps, d.FlexMaxMbps = defaultFlexMinMbps, defaultFlexMaxMbps
	if v, err := annotations.OCILBShapeFlexMin.IntInRangeFromService(svc, 10, 8000); collect(err) {
		d.FlexMinMbps = v
	}
	if v, err := annotations.OCILBShapeFlexMax.IntInRangeFromService(svc, 10, 8000); collect(err) {
		d.FlexMaxMbps = v
	}
	if d.FixedShape != "" {
		mbps := fixedShapeMbps[d.FixedShape]
		msg := fmt.Sprintf("%s %s is a fixed shape, which OCI no longer creates (only flexible since May 2023): "+
			"the load balancer is flexible with %d-%d Mbps instead; set %s: flexible with %s and %s to choose the bandwidth",
			annotations.OCILBShape, d.FixedShape, mbps, mbps, annotations.OCILBShape, annotations.OCILBShapeFlexMin, annotations.OCILBShapeFlexMax)
		if annotations.OCILBShapeFlexMin.IsSet(svc) || annotations.OCILBShapeFlexMax.IsSet(svc) {
			msg += fmt.Sprintf(" (%s and %s are ignored with a fixed shape)", annotations.OCILBShapeFlexMin, annotations.OCILBShapeFlexMax)
		}
		*warnings = append(*warnings, msg)
		d.FlexMinMbps, d.FlexMaxMbps = mbps, mbps
	}
	if d.FlexMaxMbps < d.FlexMinMbps {
		errs = append(errs, annotations.OCILBShapeFlexMax.Invalid(strconv.Itoa(d.FlexMaxMbps), "must be at least shape-flex-min (%d)", d.FlexMinMbps))
	}
	d.ListenerProtocol = "TCP"
	if v, err := annotations.OCILBBackendProtocol.EnumFromService(svc, "TCP", "HTTP"); collect(err) {
		d.ListenerProtocol = v
	}
	if v, err := annotations.OCILBConnectionIdleTimeout.DurationFromService(svc); collect(err) {
		if v < time.Second || v > 7200*time.Second {
			errs = append(errs, annotations.OCILBConnectionIdleTimeout.Invalid(svc.Annotations[string(annotations.OCILBConnectionIdleTimeout)], "must be between 1 and 7200 seconds"))
		} else {
			d.IdleTimeout = v
		}
	}
	d.Policy = "ROUND_ROBIN"
	return errs
}

// millis parses the public OCI CCM's millisecond annotations: a whole
// number is milliseconds; a Go duration (10s) is accepted too.
func millis(svc *corev1.Service, n annotations.Name, lo, hi time.Duration) (time.Duration, error) {
	v, err := n.StringFromService(svc)
	if err != nil {
		return 0, err
	}
	var d time.Duration
	if ms, err := strconv.Atoi(v); err == nil {
		d = time.Duration(ms) * time.Millisecond
	} else if d, err = time.ParseDuration(v); err != nil {
		return 0, n.Invalid(v, "must be a number of milliseconds (as upstream) or a duration such as 10s")
	}
	if d < lo || d > hi {
		return 0, n.Invalid(v, "must be between %s and %s", lo, hi)
	}
	return d, nil
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

// securityListMode reads a security-list-management-mode annotation.
func securityListMode(svc *corev1.Service, n annotations.Name) (string, error) {
	return n.EnumFromService(svc, config.SecurityListModeNone, config.SecurityListModeFrontend, config.SecurityListModeAll)
}

// backendsOf pairs the spec's backends with their nodes' InternalIP: OCI
// backends are IP:NodePort. A node without an IPv4 InternalIP is skipped
// (the node controller has not set its addresses yet).
func backendsOf(bs []lbspec.Backend, nodes []*corev1.Node) []lbops.Backend {
	byName := map[string]*corev1.Node{}
	for _, n := range nodes {
		if n != nil {
			byName[n.Name] = n
		}
	}
	var out []lbops.Backend
	for _, b := range bs {
		ip := internalIPv4(byName[b.NodeName])
		if ip == "" {
			klog.V(2).InfoS("Node is not a load balancer backend yet: no InternalIP", "node", b.NodeName)
			continue
		}
		out = append(out, lbops.Backend{NodeName: b.NodeName, IP: ip})
	}
	return out
}

func internalIPv4(n *corev1.Node) string {
	if n == nil {
		return ""
	}
	for _, a := range n.Status.Addresses {
		if ip, err := netip.ParseAddr(a.Address); a.Type == corev1.NodeInternalIP && err == nil && ip.Is4() {
			return a.Address
		}
	}
	return ""
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
