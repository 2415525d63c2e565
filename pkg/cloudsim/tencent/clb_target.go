package tencent

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
)

// targetInput is one target of RegisterTargets / DeregisterTargets /
// ModifyTargetWeight (clb.Target) or of the batch calls (clb.BatchTarget).
type targetInput struct {
	where      string // "Targets.3", for messages
	listenerID string
	// locationID, or domain and url, select the rule of a layer-7
	// listener (clb_rules.go).
	locationID, domain, url string
	instanceID              string
	eniIP                   string
	port                    *int64
	weight                  *int64
	tag                     *string
}

func (in targetInput) key() string {
	if in.instanceID != "" {
		return fmt.Sprintf("ins %s:%d", in.instanceID, *in.port)
	}
	return fmt.Sprintf("ip %s:%d", in.eniIP, *in.port)
}

func (in targetInput) String() string {
	if in.instanceID != "" {
		return fmt.Sprintf("%s:%d", in.instanceID, *in.port)
	}
	return fmt.Sprintf("%s:%d", in.eniIP, *in.port)
}

func fromTargets(listenerID string, rule ruleSelector, ts []*clb.Target) []targetInput {
	out := make([]targetInput, len(ts))
	for i, t := range ts {
		out[i] = targetInput{where: fmt.Sprintf("Targets.%d", i), listenerID: listenerID,
			locationID: ptrStr(rule.locationID), domain: ptrStr(rule.domain), url: ptrStr(rule.url)}
		if t != nil {
			out[i].instanceID, out[i].eniIP = ptrStr(t.InstanceId), ptrStr(t.EniIp)
			out[i].port, out[i].weight, out[i].tag = t.Port, t.Weight, t.Tag
		}
	}
	return out
}

func fromBatchTargets(ts []*clb.BatchTarget) ([]targetInput, *Error) {
	out := make([]targetInput, len(ts))
	for i, t := range ts {
		out[i] = targetInput{where: fmt.Sprintf("Targets.%d", i)}
		if t == nil {
			continue
		}
		out[i].listenerID, out[i].locationID = ptrStr(t.ListenerId), ptrStr(t.LocationId)
		out[i].instanceID, out[i].eniIP = ptrStr(t.InstanceId), ptrStr(t.EniIp)
		out[i].port, out[i].weight, out[i].tag = t.Port, t.Weight, t.Tag
	}
	return out, nil
}

// checkTargetShapes validates what can be checked without state: one of
// InstanceId and EniIp, a port, a weight in range, the count, and no
// duplicates.
func checkTargetShapes(in []targetInput, max int, register bool) *Error {
	if len(in) == 0 {
		return errMissing("Targets")
	}
	if len(in) > max {
		return Errorf("InvalidParameterValue.Length", "The number of `Targets` (%d) exceeds the limit of %d per call.", len(in), max)
	}
	seen := map[string]bool{}
	for _, t := range in {
		if (t.instanceID == "") == (t.eniIP == "") {
			return Errorf("InvalidParameter", "`%s`: exactly one of `InstanceId` and `EniIp` must be given.", t.where)
		}
		if t.eniIP != "" {
			if a, err := netip.ParseAddr(t.eniIP); err != nil || !a.Is4() {
				return Errorf("InvalidParameter.FormatError", "`%s.EniIp` `%s` is not an IPv4 address.", t.where, t.eniIP)
			}
		}
		if t.port == nil {
			return Errorf("MissingParameter", "`%s.Port` is required.", t.where)
		}
		if *t.port < 1 || *t.port > 65535 {
			return Errorf("InvalidParameterValue", "`%s.Port` must be between 1 and 65535, got %d.", t.where, *t.port)
		}
		if register && t.weight != nil && (*t.weight < 0 || *t.weight > 100) {
			return Errorf("InvalidParameterValue", "`%s.Weight` must be between 0 and 100, got %d.", t.where, *t.weight)
		}
		k := t.listenerID + " " + t.locationID + " " + t.domain + t.url + " " + t.key()
		if seen[k] {
			return Errorf("InvalidParameterValue.Duplicate", "The target %s appears more than once in `Targets`.", t)
		}
		seen[k] = true
	}
	return nil
}

// prepareRegister validates registrations against the state and returns
// the apply that binds them. Callers hold l.mu.
func (l *CLB) prepareRegister(region, lbID string, in []targetInput) (func() error, *Error) {
	lb, e := l.lbLocked(region, lbID)
	if e != nil {
		return nil, e
	}
	now := l.core.Now()
	adds := map[targetSet][]*clbTarget{}
	var order []targetSet
	for _, t := range in {
		set, e := targetSetOf(lb, t)
		if e != nil {
			return nil, e
		}
		if slices.ContainsFunc(*set.list(), func(x *clbTarget) bool { return x.key() == t.key() }) {
			return nil, Errorf("InvalidParameterValue.Duplicate", "The target %s is already bound to %s.", t, set)
		}
		nt := &clbTarget{instanceID: t.instanceID, eniIP: t.eniIP, port: *t.port, weight: DefaultTargetWeight, registered: now}
		if t.weight != nil {
			nt.weight = *t.weight
		}
		if t.tag != nil {
			nt.tag = *t.tag
		}
		if t.instanceID != "" {
			ip, e := l.instanceIP(lb, t.instanceID)
			if e != nil {
				return nil, e
			}
			nt.ip = ip
		} else {
			nt.ip = t.eniIP
		}
		if _, ok := adds[set]; !ok {
			order = append(order, set)
		}
		adds[set] = append(adds[set], nt)
	}
	for _, set := range order {
		// TOTAL_TARGET_BIND_QUOTA (see DefaultTargetQuota); LimitExceeded is in
		// the documented codes of RegisterTargets and BatchRegisterTargets
		// (clb@v1.3.105 client.go: "LIMITEXCEEDED = \"LimitExceeded\"").
		// A rule counts as a listener here (cloudsim's choice).
		if n := len(*set.list()) + len(adds[set]); n > l.targetQuota {
			return nil, Errorf("LimitExceeded", "%s would have %d targets; the quota (TOTAL_TARGET_BIND_QUOTA) is %d per listener.", set, n, l.targetQuota)
		}
	}
	return func() error {
		for _, set := range order {
			if e := set.stillIn(lb); e != nil {
				return e
			}
		}
		for _, set := range order {
			*set.list() = append(*set.list(), adds[set]...)
		}
		return nil
	}, nil
}

func lbListener(lb *clbLB, id string) (*clbListener, *Error) {
	if id == "" {
		return nil, errMissing("ListenerId")
	}
	li := lb.listener(id)
	if li == nil {
		return nil, errListenerNotFound(lb.id, id)
	}
	return li, nil
}

// instanceIP resolves an instance target to its primary private IP. The
// instance must exist in the load balancer's region and VPC.
func (l *CLB) instanceIP(lb *clbLB, id string) (string, *Error) {
	if !core.ValidInstanceID(id) {
		return "", Errorf("InvalidParameter", "The instance ID `%s` is malformed: want `ins-` followed by 8 lower-case letters or digits.", id)
	}
	inst, err := l.core.Instance(id)
	if err != nil {
		return "", Errorf("InvalidParameter", "The instance `%s` does not exist.", id)
	}
	rec := core.Record{Instance: inst}
	if rec.Region(l.core.Region()) != lb.region {
		return "", Errorf("InvalidParameter", "The instance `%s` is in region %s, not in the LoadBalancer's region %s.", id, rec.Region(l.core.Region()), lb.region)
	}
	if inst.VpcID != lb.vpcID {
		return "", Errorf("InvalidParameter", "The instance `%s` is in VPC %s, not in the LoadBalancer's VPC %s.", id, inst.VpcID, lb.vpcID)
	}
	return inst.PrivateIP, nil
}

// findBound maps each input to its binding; every one must be bound.
// Callers hold l.mu.
func findBound(lb *clbLB, in []targetInput) (map[targetSet][]*clbTarget, *Error) {
	out := map[targetSet][]*clbTarget{}
	for _, t := range in {
		set, e := targetSetOf(lb, t)
		if e != nil {
			return nil, e
		}
		list := *set.list()
		i := slices.IndexFunc(list, func(x *clbTarget) bool { return x.key() == t.key() })
		if i < 0 {
			return nil, Errorf("InvalidParameter", "The target %s is not bound to %s.", t, set)
		}
		out[set] = append(out[set], list[i])
	}
	return out, nil
}

// prepareDeregister validates deregistrations and returns their apply.
func (l *CLB) prepareDeregister(region, lbID string, in []targetInput) (func() error, *Error) {
	lb, e := l.lbLocked(region, lbID)
	if e != nil {
		return nil, e
	}
	bound, e := findBound(lb, in)
	if e != nil {
		return nil, e
	}
	return func() error {
		for set, ts := range bound {
			*set.list() = slices.DeleteFunc(*set.list(), func(x *clbTarget) bool { return slices.Contains(ts, x) })
		}
		return nil
	}, nil
}

// registerTargets implements RegisterTargets (at most 20 targets).
func (l *CLB) registerTargets(call *Call, body []byte) (any, error) {
	var req clb.RegisterTargetsRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	in := fromTargets(ptrStr(req.ListenerId), ruleSelector{req.LocationId, req.Domain, req.Url}, req.Targets)
	if err := l.changeTargets(call, ptrStr(req.LoadBalancerId), in, MaxTargetsPerCall, true); err != nil {
		return nil, err
	}
	return &clb.RegisterTargetsResponseParams{}, nil
}

// deregisterTargets implements DeregisterTargets (at most 20 targets).
func (l *CLB) deregisterTargets(call *Call, body []byte) (any, error) {
	var req clb.DeregisterTargetsRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	in := fromTargets(ptrStr(req.ListenerId), ruleSelector{req.LocationId, req.Domain, req.Url}, req.Targets)
	if err := l.changeTargets(call, ptrStr(req.LoadBalancerId), in, MaxTargetsPerCall, false); err != nil {
		return nil, err
	}
	return &clb.DeregisterTargetsResponseParams{}, nil
}

// batchRegisterTargets implements BatchRegisterTargets (at most 500
// targets, across listeners of one load balancer). Invalid targets refuse
// the whole call; a listener with an armed BindFailure (clb_bindfailure.go)
// is listed in FailListenerIdSet, with Message, and its targets are not
// bound while the others are. The call always starts a task (cloudsim's
// choice), even when every listener failed.
func (l *CLB) batchRegisterTargets(call *Call, body []byte) (any, error) {
	var req clb.BatchRegisterTargetsRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	in, e := fromBatchTargets(req.Targets)
	if e != nil {
		return nil, e
	}
	if e := checkTargetShapes(in, MaxBatchTargets, true); e != nil {
		return nil, e
	}
	lbID := ptrStr(req.LoadBalancerId)
	var failed []string
	var msg string
	_, err := l.startTask(call, []string{lbID}, func() (func() error, *Error) {
		lb, e := l.lbLocked(call.Region, lbID)
		if e != nil {
			return nil, e
		}
		for _, t := range in {
			if _, e := lbListener(lb, t.listenerID); e != nil {
				return nil, e
			}
		}
		var ok []targetInput
		ok, failed, msg = l.splitBindFailuresLocked(in)
		if len(ok) == 0 {
			return func() error { return nil }, nil
		}
		return l.prepareRegister(call.Region, lbID, ok)
	})
	if err != nil {
		return nil, err
	}
	out := &clb.BatchRegisterTargetsResponseParams{}
	if len(failed) > 0 {
		l.mu.Lock()
		l.consumeBindFailuresLocked(failed)
		l.mu.Unlock()
		out.FailListenerIdSet = common.StringPtrs(failed)
		out.Message = common.StringPtr(msg)
	}
	return out, nil
}

// batchDeregisterTargets implements BatchDeregisterTargets (at most 500).
func (l *CLB) batchDeregisterTargets(call *Call, body []byte) (any, error) {
	var req clb.BatchDeregisterTargetsRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	in, e := fromBatchTargets(req.Targets)
	if e != nil {
		return nil, e
	}
	if err := l.changeTargets(call, ptrStr(req.LoadBalancerId), in, MaxBatchTargets, false); err != nil {
		return nil, err
	}
	return &clb.BatchDeregisterTargetsResponseParams{}, nil
}

// modifyTargetWeight implements ModifyTargetWeight: each target's own
// Weight wins over the call's Weight, which defaults to 10.
func (l *CLB) modifyTargetWeight(call *Call, body []byte) (any, error) {
	var req clb.ModifyTargetWeightRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	in := fromTargets(ptrStr(req.ListenerId), ruleSelector{req.LocationId, req.Domain, req.Url}, req.Targets)
	if e := checkTargetShapes(in, MaxBatchTargets, true); e != nil {
		return nil, e
	}
	def := int64(DefaultTargetWeight)
	if req.Weight != nil {
		if *req.Weight < 0 || *req.Weight > 100 {
			return nil, Errorf("InvalidParameterValue", "`Weight` must be between 0 and 100, got %d.", *req.Weight)
		}
		def = *req.Weight
	}
	if err := l.setWeights(call, ptrStr(req.LoadBalancerId), in, def); err != nil {
		return nil, err
	}
	return &clb.ModifyTargetWeightResponseParams{}, nil
}

// Limits of BatchModifyTargetWeight's ModifyList: "ModifyList数组最多100个元素，
// ModifyList[i].Targets最多50个，全部Targets累加不超过500" (at most 100 rules, 50
// targets each, 500 in all; BatchModifyTargetWeightRequestParams in
// clb@v1.3.105 models.go).
const (
	MaxWeightRules          = 100
	MaxWeightTargetsPerRule = 50
	MaxWeightTargets        = 500
)

// batchModifyTargetWeight implements BatchModifyTargetWeight: per rule,
// each target's own Weight wins over the rule's ("最终的权重值以Target中的
// Weight参数值为准", RsWeightRule.Weight), which has no default, so a target
// with neither is refused.
func (l *CLB) batchModifyTargetWeight(call *Call, body []byte) (any, error) {
	var req clb.BatchModifyTargetWeightRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	if len(req.ModifyList) == 0 {
		return nil, errMissing("ModifyList")
	}
	if len(req.ModifyList) > MaxWeightRules {
		return nil, Errorf("InvalidParameterValue.Length", "`ModifyList` has %d elements; at most %d are allowed.", len(req.ModifyList), MaxWeightRules)
	}
	var in []targetInput
	for i, r := range req.ModifyList {
		if r == nil {
			return nil, Errorf("InvalidParameter", "`ModifyList.%d` is empty.", i)
		}
		if len(r.Targets) > MaxWeightTargetsPerRule {
			return nil, Errorf("InvalidParameterValue.Length", "`ModifyList.%d.Targets` has %d targets; at most %d are allowed.", i, len(r.Targets), MaxWeightTargetsPerRule)
		}
		if r.Weight != nil && (*r.Weight < 0 || *r.Weight > 100) {
			return nil, Errorf("InvalidParameterValue", "`ModifyList.%d.Weight` must be between 0 and 100, got %d.", i, *r.Weight)
		}
		// Domain and Url are deprecated in the SDK but still on the wire:
		// a client that sends them selects a layer-7 rule.
		rule := fromTargets(ptrStr(r.ListenerId), ruleSelector{r.LocationId, r.Domain, r.Url}, r.Targets) //nolint:staticcheck // see above
		for j := range rule {
			rule[j].where = fmt.Sprintf("ModifyList.%d.Targets.%d", i, j)
			if rule[j].weight == nil {
				if r.Weight == nil {
					return nil, Errorf("MissingParameter", "`%s.Weight` or `ModifyList.%d.Weight` is required.", rule[j].where, i)
				}
				rule[j].weight = r.Weight
			}
		}
		in = append(in, rule...)
	}
	if len(in) > MaxWeightTargets {
		return nil, Errorf("InvalidParameterValue.Length", "`ModifyList` holds %d targets in all; at most %d are allowed.", len(in), MaxWeightTargets)
	}
	if e := checkTargetShapes(in, MaxWeightTargets, true); e != nil {
		return nil, e
	}
	if err := l.setWeights(call, ptrStr(req.LoadBalancerId), in, DefaultTargetWeight); err != nil {
		return nil, err
	}
	return &clb.BatchModifyTargetWeightResponseParams{}, nil
}

// setWeights starts the task that sets the weights of bound targets: each
// target's own weight, else def.
func (l *CLB) setWeights(call *Call, lbID string, in []targetInput, def int64) error {
	_, err := l.startTask(call, []string{lbID}, func() (func() error, *Error) {
		lb, e := l.lbLocked(call.Region, lbID)
		if e != nil {
			return nil, e
		}
		bound, e := findBound(lb, in)
		if e != nil {
			return nil, e
		}
		weights := map[*clbTarget]int64{}
		for _, t := range in {
			set, _ := targetSetOf(lb, t) // found by findBound
			for _, b := range bound[set] {
				if b.key() == t.key() {
					weights[b] = def
					if t.weight != nil {
						weights[b] = *t.weight
					}
				}
			}
		}
		return func() error {
			for b, w := range weights {
				b.weight = w
			}
			return nil
		}, nil
	})
	return err
}

// describeTargets implements DescribeTargets.
func (l *CLB) describeTargets(call *Call, body []byte) (any, error) {
	var req clb.DescribeTargetsRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	ids := ptrStrs(req.ListenerIds)
	if len(ids) > MaxTargetsListenerIDs {
		return nil, Errorf("InvalidParameterValue.Length", "The number of `ListenerIds` (%d) exceeds the limit of %d.", len(ids), MaxTargetsListenerIDs)
	}
	var ipFilter, tagFilter, locFilter []string
	for _, f := range req.Filters {
		name := ""
		if f != nil {
			name = ptrStr(f.Name)
		}
		switch name {
		case "private-ip-address":
			ipFilter = append(ipFilter, ptrStrs(f.Values)...)
		case "tag":
			tagFilter = append(tagFilter, ptrStrs(f.Values)...)
		case "location-id":
			// Layer-4 listeners have no rules: nothing of theirs matches.
			locFilter = append(locFilter, ptrStrs(f.Values)...)
		default:
			return nil, Errorf("InvalidParameterValue.InvalidFilter", "The filter `%s` is not supported (private-ip-address, tag, location-id).", name)
		}
	}
	instances := map[string]core.Instance{}
	for _, inst := range l.core.Instances() {
		instances[inst.ID] = inst
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	lb, e := l.readLBLocked(call.Region, ptrStr(req.LoadBalancerId)) // as the read lag shows it (clb_lag.go)
	if e != nil {
		return nil, e
	}
	out := &clb.DescribeTargetsResponseParams{Listeners: []*clb.ListenerBackend{}}
	for _, li := range lb.listeners {
		if (len(ids) > 0 && !slices.Contains(ids, li.id)) ||
			(req.Protocol != nil && *req.Protocol != li.protocol) ||
			(req.Port != nil && *req.Port != li.port) {
			continue
		}
		lbk := &clb.ListenerBackend{
			ListenerId: common.StringPtr(li.id),
			Protocol:   common.StringPtr(li.protocol),
			Port:       common.Int64Ptr(li.port),
			Targets:    []*clb.Backend{},
			EndPort:    common.Int64Ptr(0),
		}
		keep := func(t *clbTarget) bool {
			return (len(ipFilter) == 0 || slices.Contains(ipFilter, t.ip)) && (len(tagFilter) == 0 || slices.Contains(tagFilter, t.tag))
		}
		if isLayer7(li.protocol) { // targets per rule (clb_rules.go)
			lbk.Targets, lbk.Rules = nil, li.ruleTargetsToSDK(locFilter, keep, instances)
			out.Listeners = append(out.Listeners, lbk)
			continue
		}
		for _, t := range li.targets {
			if keep(t) && len(locFilter) == 0 {
				lbk.Targets = append(lbk.Targets, t.toSDK(instances))
			}
		}
		out.Listeners = append(out.Listeners, lbk)
	}
	return out, nil
}

func (t *clbTarget) toSDK(instances map[string]core.Instance) *clb.Backend {
	b := &clb.Backend{
		Port:               common.Int64Ptr(t.port),
		Weight:             common.Int64Ptr(t.weight),
		PrivateIpAddresses: common.StringPtrs([]string{t.ip}),
		PublicIpAddresses:  []*string{},
		RegisteredTime:     common.StringPtr(clbTime(t.registered)),
		Tag:                common.StringPtr(t.tag),
	}
	if t.instanceID == "" {
		b.Type = common.StringPtr("ENI")
		b.InstanceId = common.StringPtr("")
		return b
	}
	b.Type = common.StringPtr("CVM")
	b.InstanceId = common.StringPtr(t.instanceID)
	if inst, ok := instances[t.instanceID]; ok {
		b.InstanceName = common.StringPtr(inst.Name)
		b.Zone = common.StringPtr(inst.Zone)
		if inst.PublicIP != "" {
			b.PublicIpAddresses = common.StringPtrs([]string{inst.PublicIP})
		}
	}
	return b
}

// describeTargetHealth implements DescribeTargetHealth from the data plane's
// health checks. Layer-4 listeners answer one rule with an empty
// LocationId.
func (l *CLB) describeTargetHealth(call *Call, body []byte) (any, error) {
	var req clb.DescribeTargetHealthRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	ids := ptrStrs(req.LoadBalancerIds)
	if len(ids) > MaxTargetHealthLBs {
		return nil, Errorf("InvalidParameterValue.Length", "The number of `LoadBalancerIds` (%d) exceeds the limit of %d.", len(ids), MaxTargetHealthLBs)
	}
	lisIDs := ptrStrs(req.ListenerIds)
	l.mu.Lock()
	var lbs []*clbLB
	if len(ids) == 0 {
		for _, lb := range l.lbs {
			if lb.region == call.Region {
				lbs = append(lbs, lb)
			}
		}
		slices.SortFunc(lbs, func(a, b *clbLB) int { return cmpInt64(a.seq, b.seq) })
	}
	for _, id := range ids {
		lb, e := l.lbLocked(call.Region, id)
		if e != nil {
			l.mu.Unlock()
			return nil, e
		}
		lbs = append(lbs, lb)
	}
	out := &clb.DescribeTargetHealthResponseParams{LoadBalancers: []*clb.LoadBalancerHealth{}}
	for _, lb := range lbs {
		lh := &clb.LoadBalancerHealth{
			LoadBalancerId:   common.StringPtr(lb.id),
			LoadBalancerName: common.StringPtr(lb.name),
			Listeners:        []*clb.ListenerHealth{},
		}
		for _, li := range lb.listeners {
			if len(lisIDs) > 0 && !slices.Contains(lisIDs, li.id) {
				continue
			}
			health := l.plane.TargetHealth(lb.id, li.id)
			sets := []targetSet{{li: li}}
			if isLayer7(li.protocol) {
				sets = sets[:0]
				for _, r := range li.rules {
					sets = append(sets, targetSet{li: li, rule: r})
				}
			}
			var rules []*clb.RuleHealth
			for _, set := range sets {
				rule := &clb.RuleHealth{LocationId: common.StringPtr(""), Targets: []*clb.TargetHealth{}}
				if set.rule != nil {
					rule.LocationId, rule.Domain, rule.Url = common.StringPtr(set.rule.id), common.StringPtr(set.rule.domain), common.StringPtr(set.rule.url)
				}
				for _, t := range *set.list() {
					addr := netip.AddrPortFrom(netip.MustParseAddr(t.ip), uint16(t.port)).String()
					st, known := health[t.backend()+"|"+addr]
					ok, detail := false, "Unknown"
					switch {
					case !known:
					case st.Health == dataplane.HealthHealthy:
						ok, detail = true, "Alive"
					case st.Health == dataplane.HealthUnhealthy:
						detail = "Dead"
					case st.Health == dataplane.HealthOff:
						ok, detail = true, "Close"
					}
					th := &clb.TargetHealth{
						IP:                 common.StringPtr(t.ip),
						Port:               common.Int64Ptr(t.port),
						HealthStatus:       common.BoolPtr(ok),
						TargetId:           common.StringPtr(t.backend()),
						HealthStatusDetail: common.StringPtr(detail),
						Weight:             common.Uint64Ptr(uint64(t.weight)),
					}
					rule.Targets = append(rule.Targets, th)
				}
				rules = append(rules, rule)
			}
			lh.Listeners = append(lh.Listeners, &clb.ListenerHealth{
				ListenerId:   common.StringPtr(li.id),
				ListenerName: common.StringPtr(li.name),
				Protocol:     common.StringPtr(li.protocol),
				Port:         common.Int64Ptr(li.port),
				Rules:        rules,
			})
		}
		out.LoadBalancers = append(out.LoadBalancers, lh)
	}
	l.mu.Unlock()
	return out, nil
}

// changeTargets checks the targets of a (de)register call against the
// action's per-call limit and starts the load balancer's task that binds
// (register) or unbinds them: the part every target action shares.
func (l *CLB) changeTargets(call *Call, lbID string, in []targetInput, limit int, register bool) error {
	if e := checkTargetShapes(in, limit, register); e != nil {
		return e
	}
	prepare := l.prepareDeregister
	if register {
		prepare = l.prepareRegister
	}
	_, err := l.startTask(call, []string{lbID}, func() (func() error, *Error) {
		return prepare(call.Region, lbID, in)
	})
	return err
}
