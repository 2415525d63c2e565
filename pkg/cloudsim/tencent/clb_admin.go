package tencent

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// CLBSpec describes a load balancer created out of band, as a user in the
// console or another tool would: it exists at once (Status 1), with its
// listeners and targets, and starts no task. It is how tests set up an
// existing CLB to adopt.
type CLBSpec struct {
	Region    string            `json:"region,omitempty"` // default: the simulator's region
	Name      string            `json:"name,omitempty"`   // default: the id; a duplicate is renamed as by the API
	Type      string            `json:"type,omitempty"`   // OPEN (default) or INTERNAL
	VpcID     string            `json:"vpcID,omitempty"`  // default: the default VPC; required for INTERNAL
	SubnetID  string            `json:"subnetID,omitempty"`
	Tags      map[string]string `json:"tags,omitempty"`
	Listeners []CLBListenerSpec `json:"listeners,omitempty"`
	// PassToTarget is LoadBalancerPassToTarget: the instances' security
	// groups do not filter the CLB's traffic.
	PassToTarget bool `json:"passToTarget,omitempty"`
	// SecurityGroups are bound to the CLB, in priority order; they must
	// exist.
	SecurityGroups []string `json:"securityGroups,omitempty"`
}

// CLBListenerSpec describes a listener created out of band.
type CLBListenerSpec struct {
	Name     string `json:"name,omitempty"`
	Protocol string `json:"protocol"` // TCP or UDP
	Port     int    `json:"port"`
	// HealthCheck has the API's fields (HealthSwitch, CheckType, ...);
	// unset fields take the API's defaults (a TCP check every 5 s).
	HealthCheck       *clb.HealthCheck `json:"healthCheck,omitempty"`
	Scheduler         string           `json:"scheduler,omitempty"`         // WRR (default), LEAST_CONN, IP_HASH
	SessionExpireTime int              `json:"sessionExpireTime,omitempty"` // seconds; 0 off
	Targets           []CLBTarget      `json:"targets,omitempty"`
}

// CLBTarget is a target of a listener.
type CLBTarget struct {
	InstanceID string `json:"instanceID,omitempty"` // one of InstanceID and EniIP
	EniIP      string `json:"eniIP,omitempty"`
	Port       int    `json:"port"`
	Weight     *int   `json:"weight,omitempty"` // default 10
	IP         string `json:"ip,omitempty"`     // in answers: the address traffic goes to
}

// CLBLoadBalancer is a load balancer as the admin API shows it.
type CLBLoadBalancer struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	Region   string `json:"region"`
	VpcID    string `json:"vpcID"`
	SubnetID string `json:"subnetID,omitempty"`
	VIP      string `json:"vip"`
	Status   int    `json:"status"` // 0 creating, 1 normal
	// InOperation is the action of the task running on it, if any: another
	// mutation now gets FailedOperation.ResourceInOperating.
	InOperation string `json:"inOperation,omitempty"`
	// Internet is what a public load balancer was created with (nil for a
	// private one).
	Internet       *CLBInternet      `json:"internet,omitempty"`
	Tags           map[string]string `json:"tags,omitempty"`
	PassToTarget   bool              `json:"passToTarget"`
	SecurityGroups []string          `json:"securityGroups,omitempty"`
	Created        time.Time         `json:"created"`
	Listeners      []CLBListener     `json:"listeners"`
}

// CLBListener is a listener as the admin API shows it.
type CLBListener struct {
	ID                string           `json:"id"`
	Name              string           `json:"name"`
	Protocol          string           `json:"protocol"`
	Port              int              `json:"port"`
	Scheduler         string           `json:"scheduler"`
	SessionExpireTime int              `json:"sessionExpireTime"`
	HealthCheck       *clb.HealthCheck `json:"healthCheck"`
	Targets           []CLBTarget      `json:"targets"`
	// Certificate is a TCP_SSL listener's certificate (ids of the
	// certificate store).
	Certificate *clb.CertificateOutput `json:"certificate,omitempty"`
	// Rules are a layer-7 listener's forwarding rules, which hold its
	// targets (Targets is then empty).
	Rules []CLBRule `json:"rules,omitempty"`
}

// CLBRule is a layer-7 listener's forwarding rule with its targets.
type CLBRule struct {
	ID      string      `json:"id"`
	Domain  string      `json:"domain"`
	URL     string      `json:"url"`
	Targets []CLBTarget `json:"targets"`
}

// ErrCLBNotFound is returned (wrapped) for an unknown load balancer or
// listener.
var ErrCLBNotFound = fmt.Errorf("load balancer %w", core.ErrNotFound)

// invalid turns an API error into an admin error that wraps
// core.ErrInvalid and names the code the API would answer.
func invalid(e *Error) error { return fmt.Errorf("%w: %s: %s", core.ErrInvalid, e.Code, e.Message) }

// CreateLoadBalancer creates a load balancer out of band (see CLBSpec), with
// the API's validation and quota.
func (l *CLB) CreateLoadBalancer(spec CLBSpec) (CLBLoadBalancer, error) {
	region := spec.Region
	if region == "" {
		region = l.core.Region()
	}
	req := &clb.CreateLoadBalancerRequestParams{
		LoadBalancerType: common.StringPtr(spec.Type),
		VpcId:            common.StringPtr(spec.VpcID),
		SubnetId:         common.StringPtr(spec.SubnetID),
	}
	if spec.Type == "" {
		req.LoadBalancerType = common.StringPtr(lbTypeOpen)
	}
	if spec.Name != "" {
		req.LoadBalancerName = common.StringPtr(spec.Name)
	}
	keys := make([]string, 0, len(spec.Tags))
	for k := range spec.Tags {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		req.Tags = append(req.Tags, &clb.TagInfo{TagKey: common.StringPtr(k), TagValue: common.StringPtr(spec.Tags[k])})
	}
	cs, e := l.checkCreate(req)
	if e != nil {
		return CLBLoadBalancer{}, invalid(e)
	}
	if e := l.checkSecurityGroups(region, spec.SecurityGroups); e != nil {
		return CLBLoadBalancer{}, invalid(e)
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.checkQuotaLocked(region, cs.typ, 1); e != nil {
		return CLBLoadBalancer{}, invalid(e)
	}
	now := l.core.Now()
	lb := &clbLB{
		id: l.newLBIDLocked(), typ: cs.typ, region: region, vpcID: cs.vpcID, subnetID: cs.subnetID,
		tags: cs.tags, status: 1, created: now, statusTime: now,
		passToTarget: spec.PassToTarget, securityGroups: slices.Clone(spec.SecurityGroups),
	}
	lb.name = l.uniqueNameLocked(region, cs.name, lb.id)
	for _, ls := range spec.Listeners {
		li, e := l.buildListenerLocked(lb, ls)
		if e != nil {
			return CLBLoadBalancer{}, invalid(e)
		}
		lb.listeners = append(lb.listeners, li)
	}
	vip, err := l.plane.AllocVIP(lb.id)
	if err != nil {
		return CLBLoadBalancer{}, invalid(Errorf("ResourceInsufficient", "%v", err))
	}
	lb.vip = vip
	l.seq++
	lb.seq = l.seq
	l.lbs[lb.id] = lb
	l.sgs.bindCLB(lb.id, vip, lb.securityGroups)
	l.syncPlaneLocked(lb.id)
	return l.exportLocked(lb), nil
}

// buildListenerLocked validates a listener spec for lb and returns the
// listener with its targets. Callers hold l.mu.
func (l *CLB) buildListenerLocked(lb *clbLB, s CLBListenerSpec) (*clbListener, *Error) {
	if s.Protocol != protoTCP && s.Protocol != protoUDP {
		return nil, Errorf("InvalidParameterValue", "listener protocol must be TCP or UDP, got `%s`.", s.Protocol)
	}
	if s.Port < 1 || s.Port > 65535 {
		return nil, Errorf("InvalidParameterValue", "listener port must be between 1 and 65535, got %d.", s.Port)
	}
	for _, li := range lb.listeners {
		if portFamily(li.protocol) == portFamily(s.Protocol) && li.port == int64(s.Port) {
			return nil, Errorf("InvalidParameter.PortCheckFailed", "The port %d already has a %s listener (%s).", s.Port, s.Protocol, li.id)
		}
	}
	if len(lb.listeners) >= ListenerQuota {
		return nil, Errorf("LimitExceeded", "LoadBalancer `%s` already has %d listeners.", lb.id, ListenerQuota)
	}
	if s.Name != "" {
		if e := checkName("name", s.Name); e != nil {
			return nil, e
		}
	}
	opts := listenerOptions{}
	if s.Scheduler != "" {
		opts.scheduler = &s.Scheduler
	}
	if s.SessionExpireTime != 0 {
		v := int64(s.SessionExpireTime)
		opts.sessionExpire = &v
	}
	if e := checkListenerOptions(opts, []string{"WRR", "LEAST_CONN", "IP_HASH"}); e != nil {
		return nil, e
	}
	hc, e := defaultHealthCheck(s.Protocol).merge(s.Protocol, s.HealthCheck)
	if e != nil {
		return nil, e
	}
	li := &clbListener{
		id: l.newListenerIDLocked(), name: s.Name, protocol: s.Protocol, port: int64(s.Port),
		hc: hc, scheduler: "WRR", created: l.core.Now(), idleTimeout: defaultTCPIdleTimeout,
	}
	if s.Protocol == protoUDP {
		li.idleTimeout = defaultUDPIdleTimeout
	}
	applyListenerOptions(li, opts)
	if len(s.Targets) == 0 {
		return li, nil
	}
	in := make([]targetInput, len(s.Targets))
	for i, t := range s.Targets {
		port := int64(t.Port)
		in[i] = targetInput{where: fmt.Sprintf("targets.%d", i), listenerID: li.id, instanceID: t.InstanceID, eniIP: t.EniIP, port: &port}
		if t.Weight != nil {
			w := int64(*t.Weight)
			in[i].weight = &w
		}
	}
	if e := checkTargetShapes(in, l.targetQuota, true); e != nil {
		return nil, e
	}
	now := l.core.Now()
	for _, t := range in {
		nt := &clbTarget{instanceID: t.instanceID, eniIP: t.eniIP, port: *t.port, weight: DefaultTargetWeight, registered: now, ip: t.eniIP}
		if t.weight != nil {
			nt.weight = *t.weight
		}
		if t.instanceID != "" {
			ip, e := l.instanceIP(lb, t.instanceID)
			if e != nil {
				return nil, e
			}
			nt.ip = ip
		}
		li.targets = append(li.targets, nt)
	}
	return li, nil
}

// AddListener adds a listener (with its targets) to a load balancer out of
// band, at once, even while a task runs on it.
func (l *CLB) AddListener(lbID string, spec CLBListenerSpec) (CLBListener, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lb := l.lbs[lbID]
	if lb == nil {
		return CLBListener{}, fmt.Errorf("%w: %q", ErrCLBNotFound, lbID)
	}
	li, e := l.buildListenerLocked(lb, spec)
	if e != nil {
		return CLBListener{}, invalid(e)
	}
	lb.listeners = append(lb.listeners, li)
	l.syncPlaneLocked(lb.id)
	return li.export(), nil
}

// DeleteListener removes a listener out of band, at once, even while a
// task runs on its load balancer (a drift the provider must repair).
func (l *CLB) DeleteListener(lbID, listenerID string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	lb := l.lbs[lbID]
	if lb == nil {
		return fmt.Errorf("%w: %q", ErrCLBNotFound, lbID)
	}
	if lb.listener(listenerID) == nil {
		return fmt.Errorf("%w: listener %q of %q", ErrCLBNotFound, listenerID, lbID)
	}
	lb.listeners = slices.DeleteFunc(lb.listeners, func(li *clbListener) bool { return li.id == listenerID })
	l.syncPlaneLocked(lb.id)
	return nil
}

// DeleteLoadBalancer removes a load balancer out of band, at once.
func (l *CLB) DeleteLoadBalancer(id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	lb := l.lbs[id]
	if lb == nil {
		return fmt.Errorf("%w: %q", ErrCLBNotFound, id)
	}
	l.removeLocked(lb)
	return nil
}

// LoadBalancers returns every load balancer, in creation order, with its
// listeners and targets.
func (l *CLB) LoadBalancers() []CLBLoadBalancer {
	l.mu.Lock()
	defer l.mu.Unlock()
	list := make([]*clbLB, 0, len(l.lbs))
	for _, lb := range l.lbs {
		list = append(list, lb)
	}
	slices.SortFunc(list, func(a, b *clbLB) int { return cmpInt64(a.seq, b.seq) })
	out := make([]CLBLoadBalancer, len(list))
	for i, lb := range list {
		out[i] = l.exportLocked(lb)
	}
	return out
}

// LoadBalancer returns one load balancer.
func (l *CLB) LoadBalancer(id string) (CLBLoadBalancer, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lb := l.lbs[id]
	if lb == nil {
		return CLBLoadBalancer{}, fmt.Errorf("%w: %q", ErrCLBNotFound, id)
	}
	return l.exportLocked(lb), nil
}

// DataPlane reports what the data plane runs for a load balancer: its VIP,
// listeners, and each target's health. A load balancer still being created
// has no listeners there yet.
func (l *CLB) DataPlane(id string) (dataplane.LoadBalancerStatus, error) {
	l.mu.Lock()
	lb := l.lbs[id]
	var vip string
	if lb != nil {
		vip = lb.vip.String()
	}
	l.mu.Unlock()
	if lb == nil {
		return dataplane.LoadBalancerStatus{}, fmt.Errorf("%w: %q", ErrCLBNotFound, id)
	}
	st, ok := l.plane.Status(id)
	if !ok {
		st = dataplane.LoadBalancerStatus{ID: id, VIP: vip, Listeners: []dataplane.ListenerStatus{}}
	}
	return st, nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (l *CLB) exportLocked(lb *clbLB) CLBLoadBalancer {
	out := CLBLoadBalancer{
		ID: lb.id, Name: lb.name, Type: lb.typ, Region: lb.region, VpcID: lb.vpcID, SubnetID: lb.subnetID,
		Status: int(lb.status), Created: lb.created, Listeners: []CLBListener{},
		PassToTarget: lb.passToTarget, SecurityGroups: slices.Clone(lb.securityGroups),
	}
	if lb.status == 1 {
		out.VIP = lb.vip.String()
	}
	if h, busy := l.tasks.Busy(lb.id); busy {
		out.InOperation = h
	}
	out.Internet = lb.internet.export(lb.typ)
	if len(lb.tags) > 0 {
		out.Tags = map[string]string{}
		for _, t := range lb.tags {
			out.Tags[t.key] = t.value
		}
	}
	for _, li := range lb.listeners {
		out.Listeners = append(out.Listeners, li.export())
	}
	return out
}

func (li *clbListener) export() CLBListener {
	out := CLBListener{
		ID: li.id, Name: li.name, Protocol: li.protocol, Port: int(li.port), Scheduler: li.scheduler,
		SessionExpireTime: int(li.sessionExpire), HealthCheck: li.hc.toSDK(false), Targets: []CLBTarget{},
	}
	if li.cert != nil {
		out.Certificate = li.cert.toSDK()
	}
	out.Targets = exportTargets(li.targets)
	for _, r := range li.rules {
		out.Rules = append(out.Rules, CLBRule{ID: r.id, Domain: r.domain, URL: r.url, Targets: exportTargets(r.targets)})
	}
	return out
}

func exportTargets(in []*clbTarget) []CLBTarget {
	out := []CLBTarget{}
	for _, t := range in {
		w := int(t.weight)
		out = append(out, CLBTarget{InstanceID: t.instanceID, EniIP: t.eniIP, Port: int(t.port), Weight: &w, IP: t.ip})
	}
	return out
}

// registerAdmin adds the CLB endpoints to the core's admin API:
//
//	GET    /admin/tencent/loadbalancers                       every load balancer with listeners and targets
//	POST   /admin/tencent/loadbalancers                       create one out of band (CLBSpec)
//	GET    /admin/tencent/loadbalancers/{id}                  one load balancer
//	DELETE /admin/tencent/loadbalancers/{id}                  delete one out of band
//	PUT    /admin/tencent/loadbalancers/{id}/securitygroups   bind security groups out of band (CLBSecurityGroupsBody)
//	POST   /admin/tencent/loadbalancers/{id}/listeners        add a listener out of band (CLBListenerSpec)
//	DELETE /admin/tencent/loadbalancers/{id}/listeners/{lid}  delete a listener out of band
//	GET    /admin/tencent/loadbalancers/{id}/dataplane        VIP, listeners, target health
func (l *CLB) registerAdmin() {
	const base = "/admin/tencent/loadbalancers"
	h := l.core.HandleAdminFunc
	h("GET "+base, func(*http.Request) (int, any, error) { return http.StatusOK, l.LoadBalancers(), nil })
	h("POST "+base, func(r *http.Request) (int, any, error) {
		var in CLBSpec
		if err := core.DecodeAdmin(r, &in); err != nil {
			return 0, nil, err
		}
		out, err := l.CreateLoadBalancer(in)
		return http.StatusCreated, out, err
	})
	h("GET "+base+"/{id}", func(r *http.Request) (int, any, error) {
		out, err := l.LoadBalancer(r.PathValue("id"))
		return http.StatusOK, out, err
	})
	h("DELETE "+base+"/{id}", func(r *http.Request) (int, any, error) {
		return http.StatusNoContent, nil, l.DeleteLoadBalancer(r.PathValue("id"))
	})
	h("PUT "+base+"/{id}/securitygroups", func(r *http.Request) (int, any, error) {
		var in CLBSecurityGroupsBody
		if err := core.DecodeAdmin(r, &in); err != nil {
			return 0, nil, err
		}
		out, err := l.SetSecurityGroups(r.PathValue("id"), in.SecurityGroups...)
		return http.StatusOK, out, err
	})
	h("POST "+base+"/{id}/listeners", func(r *http.Request) (int, any, error) {
		var in CLBListenerSpec
		if err := core.DecodeAdmin(r, &in); err != nil {
			return 0, nil, err
		}
		out, err := l.AddListener(r.PathValue("id"), in)
		return http.StatusCreated, out, err
	})
	h("DELETE "+base+"/{id}/listeners/{lid}", func(r *http.Request) (int, any, error) {
		return http.StatusNoContent, nil, l.DeleteListener(r.PathValue("id"), r.PathValue("lid"))
	})
	h("GET "+base+"/{id}/dataplane", func(r *http.Request) (int, any, error) {
		out, err := l.DataPlane(r.PathValue("id"))
		return http.StatusOK, out, err
	})
	l.registerBindFailureAdmin()
	l.registerCertificateAdmin()
}
