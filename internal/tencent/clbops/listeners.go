package clbops

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"

	"github.com/ccmkit/ccm/internal/lb/lbspec"
)

// Health check values we send. Tencent's own defaults are used where the
// spec has no opinion, and assumed when an answer omits a field.
const (
	checkTCP  = "TCP"
	checkHTTP = "HTTP"
	checkPing = "PING" // the only simple check UDP listeners support

	httpMethod  = "GET"
	httpVersion = "HTTP/1.1"
	// httpHost is sent as the Host header of HTTP checks, which CLB requires
	// for TCP listeners. kube-proxy's /healthz and most health endpoints
	// ignore it.
	httpHost = "localhost"
	// httpCode2xx: only 2xx answers are healthy (kube-proxy answers 503
	// on nodes without a local endpoint).
	httpCode2xx = 2

	clbDefaultTimeout   = 2
	clbDefaultInterval  = 5
	clbDefaultThreshold = 3
	clbDefaultHTTPCode  = 31
	clbDefaultMethod    = "HEAD"
)

// healthCheck is a listener's health check, normalized (upper-case type,
// method and version, lower-case host) so that a desired and an actual one
// compare with equal.
type healthCheck struct {
	enabled                               bool
	checkType                             string
	port                                  int64 // 0: the target's own port
	timeout, interval, healthy, unhealthy int64
	path, method, version, host           string
	httpCode                              int64
	// unknown: fields the API answered null. The SDK says CheckPort,
	// HttpCode, HttpCheckPath, HttpCheckDomain, HttpCheckMethod and
	// HttpVersion "may be returned as null" (注意：此字段可能返回 null，表示取不到
	// 有效值, HealthCheck in clb@v1.3.105 models.go): null is "not known",
	// not a value, so it matches whatever is wanted.
	unknown hcFields
}

// hcFields is a set of nullable health check fields.
type hcFields uint8

const (
	hcPort hcFields = 1 << iota
	hcHTTPCode
	hcPath
	hcMethod
	hcVersion
	hcHost
)

func (h healthCheck) String() string {
	if !h.enabled {
		return "off"
	}
	show := func(f hcFields, v any) string {
		if h.unknown&f != 0 {
			return "?"
		}
		return fmt.Sprint(v)
	}
	port := "target port"
	if h.port > 0 || h.unknown&hcPort != 0 {
		port = show(hcPort, h.port)
	}
	s := fmt.Sprintf("%s on %s every %ds, timeout %ds, %d/%d", h.checkType, port, h.interval, h.timeout, h.healthy, h.unhealthy)
	if h.checkType == checkHTTP {
		s += fmt.Sprintf(", %s %s (codes %s)", show(hcMethod, h.method), show(hcPath, h.path), show(hcHTTPCode, h.httpCode))
	}
	return s
}

// equal compares the fields that matter for the check's type; a field
// either side does not know matches.
func (h healthCheck) equal(o healthCheck) bool {
	if !h.enabled || !o.enabled {
		return h.enabled == o.enabled
	}
	if h.checkType != checkHTTP || o.checkType != checkHTTP {
		h.path, h.method, h.version, h.host, h.httpCode = "", "", "", "", 0
		o.path, o.method, o.version, o.host, o.httpCode = "", "", "", "", 0
	}
	if h.checkType == checkPing || o.checkType == checkPing {
		h.port, o.port = 0, 0
	}
	// Copy what either side does not know from the other side.
	unknown := h.unknown | o.unknown
	if unknown&hcPort != 0 {
		h.port = o.port
	}
	if unknown&hcHTTPCode != 0 {
		h.httpCode = o.httpCode
	}
	if unknown&hcPath != 0 {
		h.path = o.path
	}
	if unknown&hcMethod != 0 {
		h.method = o.method
	}
	if unknown&hcVersion != 0 {
		h.version = o.version
	}
	if unknown&hcHost != 0 {
		h.host = o.host
	}
	h.unknown, o.unknown = 0, 0
	return h == o
}

// wantHealthCheck maps the neutral health check onto a listener.
func wantHealthCheck(hc lbspec.HealthCheck, proto lbspec.Protocol) healthCheck {
	if !hc.Enabled {
		return healthCheck{}
	}
	h := healthCheck{
		enabled:   true,
		checkType: checkTCP,
		port:      int64(hc.Port),
		timeout:   seconds(hc.Timeout),
		interval:  seconds(hc.Interval),
		healthy:   int64(hc.HealthyThreshold),
		unhealthy: int64(hc.UnhealthyThreshold),
	}
	switch {
	case proto == lbspec.UDP:
		h.checkType, h.port = checkPing, 0
	case hc.Protocol == lbspec.HealthCheckHTTP:
		h.checkType = checkHTTP
		h.path, h.method, h.version, h.host, h.httpCode = hc.Path, httpMethod, strings.ToUpper(httpVersion), strings.ToLower(httpHost), httpCode2xx
	}
	return h
}

// seconds rounds up: CLB takes whole seconds.
func seconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}

func healthCheckFromSDK(in *clb.HealthCheck, protocol string) healthCheck {
	h := healthCheck{
		enabled: true, // HealthSwitch defaults to on
		timeout: clbDefaultTimeout, interval: clbDefaultInterval,
		healthy: clbDefaultThreshold, unhealthy: clbDefaultThreshold,
		httpCode: clbDefaultHTTPCode, method: clbDefaultMethod,
	}
	h.checkType = checkTCP
	if protocol == string(lbspec.UDP) {
		h.checkType = checkPing
	}
	if in == nil {
		return h
	}
	if in.HealthSwitch != nil {
		h.enabled = *in.HealthSwitch == 1
	}
	if !h.enabled {
		return healthCheck{}
	}
	if v := deref(in.CheckType); v != "" {
		h.checkType = strings.ToUpper(v)
	}
	switch {
	case in.CheckPort == nil:
		h.unknown |= hcPort
	case *in.CheckPort > 0:
		h.port = *in.CheckPort // 0 and -1 mean the target's port
	}
	setIfPositive(&h.timeout, in.TimeOut)
	setIfPositive(&h.interval, in.IntervalTime)
	setIfPositive(&h.healthy, in.HealthNum)
	setIfPositive(&h.unhealthy, in.UnHealthNum)
	if in.HttpCode == nil {
		h.unknown |= hcHTTPCode
	}
	setIfPositive(&h.httpCode, in.HttpCode)
	nullable := []struct {
		field hcFields
		in    *string
		dst   *string
		norm  func(string) string
	}{
		{hcPath, in.HttpCheckPath, &h.path, nil},
		{hcMethod, in.HttpCheckMethod, &h.method, strings.ToUpper},
		{hcVersion, in.HttpVersion, &h.version, strings.ToUpper},
		{hcHost, in.HttpCheckDomain, &h.host, strings.ToLower},
	}
	for _, n := range nullable {
		switch {
		case n.in == nil:
			h.unknown |= n.field
		case n.norm != nil:
			*n.dst = n.norm(*n.in)
		default:
			*n.dst = *n.in
		}
	}
	return h
}

func setIfPositive(dst *int64, v *int64) {
	if v != nil && *v > 0 {
		*dst = *v
	}
}

// sdk returns the HealthCheck parameter. On modify, an unset port is sent
// as -1, which restores "the target's port" on the CLB.
func (h healthCheck) sdk(modify bool) *clb.HealthCheck {
	if !h.enabled {
		return &clb.HealthCheck{HealthSwitch: common.Int64Ptr(0)}
	}
	out := &clb.HealthCheck{
		HealthSwitch: common.Int64Ptr(1),
		CheckType:    common.StringPtr(h.checkType),
		TimeOut:      common.Int64Ptr(h.timeout),
		IntervalTime: common.Int64Ptr(h.interval),
		HealthNum:    common.Int64Ptr(h.healthy),
		UnHealthNum:  common.Int64Ptr(h.unhealthy),
	}
	switch {
	case h.checkType == checkPing:
	case h.port > 0:
		out.CheckPort = common.Int64Ptr(h.port)
	case modify:
		out.CheckPort = common.Int64Ptr(-1)
	}
	if h.checkType == checkHTTP {
		out.HttpCheckPath = common.StringPtr(h.path)
		out.HttpCheckMethod = common.StringPtr(h.method)
		out.HttpVersion = common.StringPtr(h.version)
		out.HttpCheckDomain = common.StringPtr(h.host)
		out.HttpCode = common.Int64Ptr(h.httpCode)
	}
	return out
}

// listener is a CLB listener as found.
type listener struct {
	id, name, protocol string
	port               int64
	hc                 healthCheck
	session            int64        // SessionExpireTime; 0: no affinity
	cert               listenerCert // TCP_SSL, HTTPS (certificates.go)
	rules              []rule       // HTTP, HTTPS (rules.go)
}

// wantListener is a listener the Service needs.
type wantListener struct {
	name, protocol string
	port, nodePort int64
	hc             healthCheck
	session        int64
	cert           listenerCert
}

// boundListener is a wanted listener and the id it has on the CLB.
type boundListener struct {
	id string
	wantListener
	// fresh: created in this reconcile (or, layer 7, its rule), so it
	// has no targets yet.
	fresh bool
	// Layer 7 (rules.go): rules are the listener's as found; locationID
	// is the rule its targets bind to, once reconcileRules has run.
	rules      []rule
	locationID string
}

// ownerSuffix is what our listener names end with. A CLB we created is
// ours alone, so its listeners are plainly <PROTO>-<port>. An adopted CLB
// is shared with listeners made by hand and by other Services adopting it,
// so ours carry the Service UID: that name is the ownership marker, and a
// listener without it is never touched.
func ownerSuffix(lb *loadBalancer, ref lbspec.Ref) string {
	if lb.adopted {
		return "-" + string(ref.UID)
	}
	return ""
}

func listenerName(protocol string, port int64, suffix string) string {
	return fmt.Sprintf("%s-%d%s", protocol, port, suffix)
}

// owned: its name is exactly what we would call a listener with its own
// protocol and port.
func (l *listener) owned(suffix string) bool {
	return l.name == listenerName(l.protocol, l.port, suffix)
}

func desiredListeners(spec *Desired, owner listenerOwner) []wantListener {
	var session int64
	if spec.SessionAffinity.ClientIP {
		session = seconds(spec.SessionAffinity.Timeout)
	}
	out := make([]wantListener, 0, len(spec.Listeners))
	for _, l := range spec.Listeners {
		protocol, cert := listenerProtocol(spec, l)
		out = append(out, wantListener{
			name:     owner.name(protocol, int64(l.Port)),
			protocol: protocol,
			port:     int64(l.Port),
			nodePort: int64(l.NodePort),
			hc:       wantHealthCheck(spec.HealthCheck, l.Protocol),
			session:  session,
			cert:     cert,
		})
	}
	return out
}

// listenerPlan is what reconcileListeners will do.
type listenerPlan struct {
	create []wantListener
	modify []listenerChange
	remove []*listener
	bound  []boundListener // every wanted listener that already exists
}

type listenerChange struct {
	id   string
	want wantListener
	why  string
	// cert: the certificate differs, so ModifyListener sends it.
	cert bool
}

func (p *listenerPlan) empty() bool {
	return len(p.create) == 0 && len(p.modify) == 0 && len(p.remove) == 0
}

// keep returns the wanted listeners that exist already.
func (p *listenerPlan) keep() []boundListener { return p.bound }

func (p *listenerPlan) describe() []string {
	var out []string
	for _, w := range p.create {
		out = append(out, fmt.Sprintf("listener %s missing", w.name))
	}
	for _, c := range p.modify {
		out = append(out, fmt.Sprintf("listener %s: %s", c.want.name, c.why))
	}
	for _, l := range p.remove {
		out = append(out, fmt.Sprintf("listener %s (%s) not wanted", l.name, l.id))
	}
	return out
}

// planListeners compares wanted and actual listeners, matched by protocol
// and port. A wanted port taken by a listener we do not own is an error,
// found before any write; on a CLB TKE made (owner.byPort) the listener on
// a wanted port is ours whatever its name, and keeps its name.
func planListeners(want []wantListener, actual []*listener, owner listenerOwner) (*listenerPlan, error) {
	byPort := map[string]*listener{} // protocol/port
	for _, l := range actual {
		k := fmt.Sprintf("%s/%d", l.protocol, l.port)
		if prev, dup := byPort[k]; !dup || (!owner.owns(prev) && owner.owns(l)) {
			byPort[k] = l
		}
	}
	p := &listenerPlan{}
	var conflicts []string
	bound := map[*listener]bool{}
	for _, w := range want {
		l, ok := byPort[fmt.Sprintf("%s/%d", w.protocol, w.port)]
		switch {
		case !ok:
			p.create = append(p.create, w)
			continue
		case !owner.owns(l) && !owner.byPort:
			conflicts = append(conflicts, fmt.Sprintf("port %d/%s is used by listener %s (%q), which this Service does not own", w.port, w.protocol, l.id, l.name))
			continue
		}
		bound[l] = true
		w.name = l.name // a taken-over listener keeps its name
		p.bound = append(p.bound, boundListener{id: l.id, wantListener: w, rules: l.rules})
		var why []string
		// A layer-7 listener's health check and affinity are its rule's
		// (rules.go).
		l7 := isLayer7(w.protocol)
		if !l7 && !l.hc.equal(w.hc) {
			why = append(why, fmt.Sprintf("health check is %s, want %s", l.hc, w.hc))
		}
		if !l7 && l.session != w.session {
			why = append(why, fmt.Sprintf("session expire time is %ds, want %ds", l.session, w.session))
		}
		certChanged := l.cert != w.cert
		if certChanged {
			why = append(why, fmt.Sprintf("certificate is %s, want %s", l.cert, w.cert))
		}
		if len(why) > 0 {
			p.modify = append(p.modify, listenerChange{id: l.id, want: w, why: strings.Join(why, "; "), cert: certChanged})
		}
	}
	if len(conflicts) > 0 {
		return nil, errors.New(strings.Join(conflicts, "; "))
	}
	for _, l := range actual {
		if !bound[l] && owner.owns(l) {
			p.remove = append(p.remove, l)
		}
	}
	slices.SortFunc(p.remove, func(a, b *listener) int {
		return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(a.protocol, b.protocol), cmp.Compare(a.port, b.port))
	})
	return p, nil
}

func (o *Ops) describeListeners(ctx context.Context, lb *loadBalancer) ([]*listener, error) {
	req := clb.NewDescribeListenersRequest()
	req.LoadBalancerId = common.StringPtr(lb.id)
	var resp *clb.DescribeListenersResponse
	if err := o.call(ctx, "DescribeListeners", lb.String(), func() (err error) {
		resp, err = o.api.DescribeListenersWithContext(ctx, req)
		return err
	}); err != nil {
		return nil, err
	}
	if resp == nil || resp.Response == nil {
		return nil, callError("DescribeListeners", lb.String(), errors.New("malformed answer: no Response"))
	}
	var out []*listener
	for _, in := range resp.Response.Listeners {
		if in == nil || in.ListenerId == nil || in.Protocol == nil || in.Port == nil {
			return nil, callError("DescribeListeners", lb.String(), errors.New("malformed answer: a listener without id, protocol or port"))
		}
		out = append(out, &listener{
			id:       *in.ListenerId,
			name:     deref(in.ListenerName),
			protocol: strings.ToUpper(*in.Protocol),
			port:     *in.Port,
			hc:       healthCheckFromSDK(in.HealthCheck, strings.ToUpper(*in.Protocol)),
			session:  deref(in.SessionExpireTime),
			cert:     certFromSDK(in.Certificate),
			rules:    rulesFromSDK(in.Rules),
		})
	}
	return out, nil
}

// reconcileListeners creates, updates and deletes our listeners, and
// returns every wanted listener with its id.
func (o *Ops) reconcileListeners(ctx context.Context, lb *loadBalancer, spec *Desired) ([]boundListener, error) {
	owner := o.ownerOf(lb, spec)
	actual, err := o.describeListeners(ctx, lb)
	if err != nil {
		return nil, err
	}
	plan, err := planListeners(desiredListeners(spec, owner), actual, owner)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", lb, err)
	}
	if plan.empty() {
		return plan.bound, o.reconcileRules(ctx, lb, plan.bound)
	}
	removeFirst, err := o.listenerRoom(ctx, lb, plan, len(actual))
	if err != nil {
		return nil, err
	}
	// A port changing protocol (TCP to TCP_SSL) is one listener deleted
	// and another created on the same port, which the CLB takes only once
	// the first is gone.
	removeFirst = removeFirst || plan.portClash()
	remove := func() error {
		for _, l := range plan.remove {
			if err := o.deleteListener(ctx, lb, l); err != nil {
				return err
			}
		}
		return nil
	}
	if removeFirst {
		if err := remove(); err != nil {
			return nil, err
		}
	}
	bound := plan.bound
	created, err := o.createListeners(ctx, lb, plan.create)
	if err != nil {
		return nil, err
	}
	bound = append(bound, created...)
	for _, c := range plan.modify {
		if err := o.modifyListener(ctx, lb, c); err != nil {
			return nil, err
		}
	}
	if !removeFirst {
		if err := remove(); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(bound, func(a, b boundListener) int { return strings.Compare(a.name, b.name) })
	return bound, o.reconcileRules(ctx, lb, bound)
}

// createListeners creates listeners with identical settings in one call
// (one asynchronous task), since CreateListener takes several ports.
func (o *Ops) createListeners(ctx context.Context, lb *loadBalancer, want []wantListener) ([]boundListener, error) {
	var out []boundListener
	for _, chunk := range createGroups(want) {
		g := chunk[0]
		req := clb.NewCreateListenerRequest()
		req.LoadBalancerId = common.StringPtr(lb.id)
		req.Protocol = common.StringPtr(g.protocol)
		req.Certificate = g.cert.sdk()
		if !isLayer7(g.protocol) { // else the rule's (rules.go)
			req.HealthCheck = g.hc.sdk(false)
		}
		if g.session > 0 && !isLayer7(g.protocol) {
			req.SessionExpireTime = common.Int64Ptr(g.session)
		}
		var names []string
		for _, w := range chunk {
			req.Ports = append(req.Ports, common.Int64Ptr(w.port))
			req.ListenerNames = append(req.ListenerNames, common.StringPtr(w.name))
			names = append(names, w.name)
		}
		target := fmt.Sprintf("%s (listeners %s)", lb, strings.Join(names, ", "))
		logWrite(ctx, "Creating CLB listeners", "clb", lb.id, "listeners", names)
		var resp *clb.CreateListenerResponse
		if err := o.call(ctx, "CreateListener", target, func() (err error) {
			resp, err = o.api.CreateListenerWithContext(ctx, req)
			return err
		}); err != nil {
			return nil, err
		}
		if resp == nil || resp.Response == nil || len(resp.Response.ListenerIds) != len(chunk) {
			return nil, callError("CreateListener", target, errors.New("malformed answer: not one ListenerId per port"))
		}
		if _, err := o.waitTask(ctx, "CreateListener", target, requestID(resp.Response.RequestId), ""); err != nil {
			return nil, err
		}
		for i, w := range chunk {
			out = append(out, boundListener{id: deref(resp.Response.ListenerIds[i]), wantListener: w, fresh: true})
		}
	}
	return out, nil
}

func (o *Ops) modifyListener(ctx context.Context, lb *loadBalancer, c listenerChange) error {
	req := clb.NewModifyListenerRequest()
	req.LoadBalancerId = common.StringPtr(lb.id)
	req.ListenerId = common.StringPtr(c.id)
	if !isLayer7(c.want.protocol) { // else the rule's (rules.go)
		req.HealthCheck = c.want.hc.sdk(true)
		req.SessionExpireTime = common.Int64Ptr(c.want.session)
	}
	if c.cert {
		req.Certificate = c.want.cert.sdk()
	}
	target := fmt.Sprintf("%s listener %s (%s)", lb, c.want.name, c.id)
	logWrite(ctx, "Updating CLB listener", "clb", lb.id, "listener", c.want.name, "why", c.why)
	var resp *clb.ModifyListenerResponse
	if err := o.call(ctx, "ModifyListener", target, func() (err error) {
		resp, err = o.api.ModifyListenerWithContext(ctx, req)
		return err
	}); err != nil {
		return err
	}
	if resp == nil || resp.Response == nil {
		return callError("ModifyListener", target, errors.New("malformed answer: no Response"))
	}
	_, err := o.waitTask(ctx, "ModifyListener", target, requestID(resp.Response.RequestId), "")
	return err
}

func (o *Ops) deleteListener(ctx context.Context, lb *loadBalancer, l *listener) error {
	req := clb.NewDeleteListenerRequest()
	req.LoadBalancerId = common.StringPtr(lb.id)
	req.ListenerId = common.StringPtr(l.id)
	target := fmt.Sprintf("%s listener %s (%s)", lb, l.name, l.id)
	logWrite(ctx, "Deleting CLB listener", "clb", lb.id, "listener", l.name)
	var resp *clb.DeleteListenerResponse
	err := o.call(ctx, "DeleteListener", target, func() (err error) {
		resp, err = o.api.DeleteListenerWithContext(ctx, req)
		return err
	})
	switch {
	case err != nil:
	case resp == nil || resp.Response == nil:
		return callError("DeleteListener", target, errors.New("malformed answer: no Response"))
	default:
		if _, err = o.waitTask(ctx, "DeleteListener", target, requestID(resp.Response.RequestId), ""); err == nil {
			return nil
		}
	}
	// DeleteListener documents no "not found" code (a listener or CLB that
	// is gone answers a generic InvalidParameter), and its task can fail
	// because the listener went meanwhile: read it again, and count it
	// gone as done.
	if gone, derr := o.listenerGone(ctx, lb, l.id); derr == nil && gone {
		logWrite(ctx, "CLB listener already gone", "clb", lb.id, "listener", l.name, "deleteError", err.Error())
		return nil
	}
	return err
}

// listenerGone reports whether a listener (or its whole CLB) no longer
// exists.
func (o *Ops) listenerGone(ctx context.Context, lb *loadBalancer, id string) (bool, error) {
	req := clb.NewDescribeListenersRequest()
	req.LoadBalancerId = common.StringPtr(lb.id)
	req.ListenerIds = common.StringPtrs([]string{id})
	var resp *clb.DescribeListenersResponse
	err := o.call(ctx, "DescribeListeners", lb.String(), func() (err error) {
		resp, err = o.api.DescribeListenersWithContext(ctx, req)
		return err
	})
	switch {
	case Code(err) == codeLBNotFound: // documented for DescribeListeners
		return true, nil
	case err != nil:
		return false, err
	case resp == nil || resp.Response == nil:
		return false, callError("DescribeListeners", lb.String(), errors.New("malformed answer: no Response"))
	}
	for _, in := range resp.Response.Listeners {
		if in != nil && deref(in.ListenerId) == id {
			return false, nil
		}
	}
	return true, nil
}

// deleteOwnedListeners removes the Service's listeners from an adopted
// CLB, leaving every other listener and the CLB itself.
func (o *Ops) deleteOwnedListeners(ctx context.Context, lb *loadBalancer, ref lbspec.Ref) error {
	suffix := ownerSuffix(lb, ref)
	actual, err := o.describeListeners(ctx, lb)
	if err != nil {
		return err
	}
	for _, l := range actual {
		if !l.owned(suffix) {
			continue
		}
		if err := o.deleteListener(ctx, lb, l); err != nil {
			return err
		}
	}
	return nil
}
