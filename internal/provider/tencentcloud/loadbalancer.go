package tencentcloud

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/lb/lbkit"
	"github.com/ccmkit/ccm/internal/lb/lbspec"
	"github.com/ccmkit/ccm/internal/tencent/clbops"
	"github.com/ccmkit/ccm/internal/tencent/config"
)

// clbTranslator turns a Service into the CLB it needs: the neutral spec
// (internal/lb/lbspec) plus what the Tencent annotations users already have
// say. internal/lb/lbkit runs the pipeline around it and clbops does the
// cloud's side; nothing here calls an API, except BackendLimit, which may
// read the target quota.
type clbTranslator struct {
	// quotas reads TOTAL_TARGET_BIND_QUOTA (nil in tests: the default); the
	// same cache gives clbops TOTAL_LISTENER_QUOTA.
	quotas *clbops.Quotas
	// drainPeriod is lb_drain_period, the default of the drain annotation.
	drainPeriod time.Duration
	// secrets reads TKE's certificate Secrets for specify-protocol
	// (protocol.go); nil in tests without a cluster.
	secrets *certSecrets
	// tkeDefaults is lb_defaults tke: where the Service says nothing, a
	// CLB gets what managed TKE's service controller gives it.
	tkeDefaults bool
}

// loadBalancers is the CLB implementation of cloudprovider.LoadBalancer.
type loadBalancers = lbkit.LoadBalancer[*clbops.Desired]

func newLoadBalancers(cfg *config.Config, api clbops.API, quotaAPI clbops.QuotaAPI, sgAPI clbops.SecurityGroupAPI, tagAPI clbops.TagAPI) *loadBalancers {
	quotas := clbops.NewQuotas(quotaAPI, 0)
	tke := cfg.LBDefaults == config.LBDefaultsTKE
	tr := &clbTranslator{quotas: quotas, drainPeriod: cfg.LBDrainPeriod, secrets: &certSecrets{}, tkeDefaults: tke}
	return lbkit.New[*clbops.Desired](tr, func(hooks lbkit.Hooks) lbkit.Ops[*clbops.Desired] {
		return clbops.New(api, clbops.Config{VpcID: cfg.VpcID, Timing: clbops.Timing{DeleteRetryAfter: cfg.LBDeleteRetryAfter}, Hooks: hooks,
			ListenerQuota: quotas.ListenersPerCLB, SecurityGroups: sgAPI,
			Tags: tagAPI, Region: cfg.Region, TKEClusterID: cfg.TKEClusterID, TKECompat: tke,
			ReadLagWindow: cfg.ReadLagWindow, LookupTTL: lookupTTL()})
	}, lbkit.Config{Provider: ProviderName, DriftPeriod: cfg.LBDriftCheckPeriod,
		// TKE's read-only annotation, which clbops shows (its CLB's id);
		// owned by the field manager it always had.
		Shown: []string{string(annotations.TKELoadBalanceID)}, FieldManager: "ccmkit-clb-id",
		Secrets: &tr.secrets.SecretReader})
}

// lookupTTL is how long a listing of the cluster's CLBs answers the
// Services' lookups: clbops' default, or 0 (a call each) under the
// benchmark's baseline, which turns every shared cloud listing off
// (benchswitch.go).
func lookupTTL() time.Duration {
	if !inventoryOn() {
		return 0
	}
	return clbops.DefaultLookupTTL
}

// clbLimits are CLB's accepted ranges for the neutral settings.
var clbLimits = lbspec.Limits{
	HealthCheckInterval:    lbspec.Range[time.Duration]{Min: 2 * time.Second, Max: 300 * time.Second},
	HealthCheckTimeout:     lbspec.Range[time.Duration]{Min: 2 * time.Second, Max: 60 * time.Second},
	HealthCheckThreshold:   lbspec.Range[int]{Min: 2, Max: 10},
	SessionAffinityTimeout: lbspec.Range[time.Duration]{Min: 30 * time.Second, Max: 3600 * time.Second},
}

// Desired builds the Service's CLB; every problem is reported before any
// cloud call, so a bad annotation leaves the CLB as it is. The only
// warnings are creation-time settings that cannot apply (creation.go).
func (t *clbTranslator) Desired(clusterName string, svc *v1.Service, nodes []*v1.Node) (*clbops.Desired, []lbkit.Warning, error) {
	var settings clbops.Settings
	var warnings []lbkit.Warning
	var extName string
	svc, selErr := withTKENodeSelector(svc)
	spec, err := lbspec.Build(svc, nodes, lbspec.Options{
		// The Tencent annotations are read here, so that their problems
		// are reported together with the neutral ones.
		Placement: func(svc *v1.Service) (lbspec.Placement, error) {
			p, err := placement(clusterName, svc)
			var serr, cerr, perr error
			settings, serr = readSettings(svc, t.tkeDefaults)
			settings.Creation, extName, warnings, cerr = creation(svc, p)
			if extName != "" {
				p.Name = extName // creation() refused a different TencentLBName
			}
			settings.Protocols, perr = t.secrets.readProtocols(svc)
			return p, errors.Join(err, serr, selErr, cerr, perr)
		},
		InstanceID:     nodeInstanceID,
		Limits:         clbLimits,
		DrainPeriod:    t.drainPeriod,
		TCPHealthCheck: t.tkeDefaults, // TKE sets no check: CLB's TCP check of each NodePort
	})
	if err != nil {
		return nil, nil, err
	}
	spec.ClusterName = clusterName
	settings.Incumbent = incumbent(svc)
	// The listeners must never hold more than the target quota, even for a
	// moment while targets are replaced; below a raised quota the documented
	// default is the bound (quotas are only ever raised).
	spec.BackendLimit = clbops.DefaultTargetQuota
	if settings.WeightedBalance && !settings.EndpointNodesOnly {
		warnings = append(warnings, lbkit.Warning{Reason: "AnnotationIgnored", Message: fmt.Sprintf(
			"%s needs %s: true; every target keeps CLB's default weight", annotations.TKELocalWeightedBalance, annotations.TKELocalOnlyBindNodeWithPod)})
	}
	return &clbops.Desired{Spec: *spec, Settings: settings}, warnings, nil
}

// readSettings reads what only CLB has. pass-to-target defaults to true;
// with lb_defaults tke (tkeDefaults) the CCM leaves it alone instead
// (migration.md: TKE documents no default, and a CLB it made keeps its
// own); local-svc-only-bind-node-with-pod defaults to false, as on TKE.
func readSettings(svc *v1.Service, tkeDefaults bool) (clbops.Settings, error) {
	s := clbops.Settings{PassToTarget: annotations.TKEPassToTarget.Default}
	v, err := annotations.TKEPassToTarget.FromService(svc)
	switch {
	case err == nil:
		s.PassToTarget = v
	case !errors.Is(err, annotations.ErrNotSet):
		return s, err
	case tkeDefaults:
		s.PassToTarget, s.KeepPassToTarget = false, true
	}
	v, err = annotations.TKELocalOnlyBindNodeWithPod.FromService(svc)
	switch {
	case err == nil:
		s.EndpointNodesOnly = v
	case !errors.Is(err, annotations.ErrNotSet):
		return s, err
	}
	v, err = annotations.TKELocalWeightedBalance.FromService(svc)
	switch {
	case err == nil:
		s.WeightedBalance = v
	case !errors.Is(err, annotations.ErrNotSet):
		return s, err
	}
	s.SecurityGroups, err = securityGroups(svc)
	return s, err
}

// securityGroupIDPattern: sg- and 8 lower-case letters or digits.
var securityGroupIDPattern = regexp.MustCompile(`^sg-[a-z0-9]{8}$`)

// securityGroups reads the security-groups annotation: nil when absent,
// empty when set to "" (unbind the groups bound by hand), else the ids in
// order, each checked for form (existence is checked against the cloud).
func securityGroups(svc *v1.Service) ([]string, error) {
	raw, present := svc.Annotations[string(annotations.TKESecurityGroups)]
	if !present {
		return nil, nil
	}
	ids := []string{}
	for id := range strings.SplitSeq(raw, ",") {
		id = strings.TrimSpace(id)
		switch {
		case id == "":
		case !securityGroupIDPattern.MatchString(id):
			return nil, annotations.TKESecurityGroups.Invalid(raw, "%q is not a security group id like sg-12345678", id)
		case slices.Contains(ids, id):
			return nil, annotations.TKESecurityGroups.Invalid(raw, "%s is listed twice", id)
		default:
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// withTKENodeSelector makes managed TKE's name for the node selector
// (qcloud-loadbalancer-backends-label) work as ours (lb.ccmkit.io/
// node-selector), which lbspec reads: svc itself when the TKE annotation is
// absent or both agree, else a copy carrying the TKE selector under our
// name. Both set to different selectors is an error, so that the Service
// is refused before any cloud call rather than bound to the nodes of one
// of them.
func withTKENodeSelector(svc *v1.Service) (*v1.Service, error) {
	tke, err := annotations.TKEBackendsLabel.SelectorFromService(svc)
	switch {
	case errors.Is(err, annotations.ErrNotSet):
		return svc, nil
	case err != nil:
		return svc, err
	}
	ours, err := annotations.NodeSelector.SelectorFromService(svc)
	switch {
	case errors.Is(err, annotations.ErrNotSet):
		out := *svc
		out.Annotations = maps.Clone(svc.Annotations)
		out.Annotations[string(annotations.NodeSelector)] = svc.Annotations[string(annotations.TKEBackendsLabel)]
		return &out, nil
	case err != nil:
		return svc, nil // lbspec reports our annotation's error
	case ours.String() != tke.String():
		return svc, fmt.Errorf("annotations %s (%s) and %s (%s) select different nodes: set only one of them; the CLB was left as it is",
			annotations.NodeSelector, ours, annotations.TKEBackendsLabel, tke)
	}
	return svc, nil
}

// Ref identifies the Service's CLB for Get and Delete, which must work
// even when other annotations are invalid: an adoption annotation that is
// not a CLB id cannot have been acted on, so it is ignored.
func (t *clbTranslator) Ref(svc *v1.Service) *clbops.Desired {
	r := lbspec.RefOf(svc, annotations.TKEExistedLBID)
	if !clbIDPattern.MatchString(r.AdoptID) {
		r.AdoptID = ""
	}
	return &clbops.Desired{Spec: lbspec.Spec{Ref: r}, Settings: clbops.Settings{Incumbent: incumbent(svc)}}
}

// incumbent is the CLB the Service's loadbalance-id annotation names: the
// one TKE's service controller made for it, if it did, which clbops takes
// over (takeover.go); "" when the annotation is absent or not a CLB id.
func incumbent(svc *v1.Service) string {
	if id := svc.Annotations[string(annotations.TKELoadBalanceID)]; clbIDPattern.MatchString(id) {
		return id
	}
	return ""
}

// Name returns the name a new CLB gets.
func (t *clbTranslator) Name(clusterName string, svc *v1.Service) string {
	if name, err := annotations.TencentLBName.StringFromService(svc); err == nil && clbNamePattern.MatchString(name) {
		return name
	}
	if ext, err := readExtensive(svc); err == nil && ext != nil && ext.LoadBalancerName != nil && clbNamePattern.MatchString(*ext.LoadBalancerName) {
		return *ext.LoadBalancerName
	}
	return defaultLBName(clusterName, svc)
}

var (
	clbIDPattern    = regexp.MustCompile(`^lb-[a-z0-9]{8}$`)
	subnetIDPattern = regexp.MustCompile(`^subnet-[a-z0-9]{8}$`)
	// clbNamePattern: 1-80 letters, digits, "-" and "_" (the documented
	// rule allows more, such as Chinese characters; we keep to ASCII).
	clbNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)
	nameUnsafe     = regexp.MustCompile(`[^A-Za-z0-9_-]+`)
)

// defaultLBName is <cluster>-<namespace>-<name>, made safe and cut to 80
// characters. Names are for humans; the tag finds the CLB.
func defaultLBName(clusterName string, svc *v1.Service) string {
	parts := []string{svc.Namespace, svc.Name}
	if clusterName != "" {
		parts = append([]string{clusterName}, parts...)
	}
	name := nameUnsafe.ReplaceAllString(strings.Join(parts, "-"), "-")
	if len(name) > 80 {
		name = name[:80]
	}
	return name
}

// placement reads the seed project's and managed TKE's annotations.
func placement(clusterName string, svc *v1.Service) (lbspec.Placement, error) {
	var errs annotations.Problems
	p := lbspec.Placement{Name: defaultLBName(clusterName, svc)}

	if id, err := annotations.TKEExistedLBID.StringFromService(svc); errs.Check(err) {
		if clbIDPattern.MatchString(id) {
			p.AdoptID = id
		} else {
			errs.Check(annotations.TKEExistedLBID.Invalid(id, "must be a CLB id like lb-12345678"))
		}
	}
	if kind, err := annotations.TencentLBKind.FromService(svc); errs.Check(err) && kind == "classic" {
		errs.Check(annotations.TencentLBKind.Invalid(kind, "classic CLBs are not supported; use application (the default)"))
	}
	if name, err := annotations.TencentLBName.StringFromService(svc); errs.Check(err) {
		if clbNamePattern.MatchString(name) {
			p.Name = name
		} else {
			errs.Check(annotations.TencentLBName.Invalid(name, "must be 1-80 letters, digits, - or _"))
		}
	}
	subnet := func(n annotations.Name) string {
		v, err := n.StringFromService(svc)
		if !errs.Check(err) {
			return ""
		}
		if !subnetIDPattern.MatchString(v) {
			errs.Check(n.Invalid(v, "must be a subnet id like subnet-12345678"))
			return ""
		}
		return v
	}
	seedSubnet, tkeSubnet := subnet(annotations.TencentLBInternalSubnetID), subnet(annotations.TKEInternalSubnetID)
	if seedSubnet != "" && tkeSubnet != "" && seedSubnet != tkeSubnet {
		errs.Check(fmt.Errorf("annotations %s (%s) and %s (%s) name different subnets", annotations.TencentLBInternalSubnetID, seedSubnet,
			annotations.TKEInternalSubnetID, tkeSubnet))
	}
	p.SubnetID = seedSubnet
	if p.SubnetID == "" {
		p.SubnetID = tkeSubnet
	}
	lbType, err := annotations.TencentLBType.FromService(svc)
	switch {
	case errs.Check(err):
		p.Internal = lbType == "private"
		if !p.Internal && tkeSubnet != "" {
			errs.Check(fmt.Errorf("annotation %s is public but %s asks for a private CLB", annotations.TencentLBType, annotations.TKEInternalSubnetID))
		}
	case errors.Is(err, annotations.ErrNotSet):
		p.Internal = tkeSubnet != "" // managed TKE's way to ask for a private CLB
	}
	// An adopted CLB is used as it is; only a CLB we create needs a subnet.
	if p.Internal && p.SubnetID == "" && p.AdoptID == "" && len(errs) == 0 {
		errs.Check(fmt.Errorf("a private (internal) CLB needs a subnet: set annotation %s (or %s) to a subnet of VPC; no CLB was created",
			annotations.TencentLBInternalSubnetID, annotations.TKEInternalSubnetID))
	}
	return p, errors.Join(errs...)
}

// nodeInstanceID is the node's CVM instance id, from its providerID, which
// the node controller sets when it initializes the node.
func nodeInstanceID(node *v1.Node) (string, error) {
	if node.Spec.ProviderID == "" {
		return "", errors.New("no providerID yet")
	}
	p, err := parseProviderID(node.Spec.ProviderID)
	if err != nil {
		return "", err
	}
	return p.InstanceID, nil
}
