package tencent

import (
	"encoding/hex"
	"slices"
	"strings"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
)

// Listener protocols. The layer-4 ones are emulated, TCP_SSL among them
// (clb_certificate.go).
const (
	protoTCP = "TCP"
	protoUDP = "UDP"
)

// layer7 are the protocols of the API beyond the layer-4 ones; all but
// QUIC are emulated (HTTP and HTTPS: clb_rules.go).
var layer7 = []string{"HTTP", "HTTPS", "QUIC"}

// Listener defaults, as documented.
const (
	defaultTCPIdleTimeout = 900
	defaultUDPIdleTimeout = 300
)

// lbHealthCheck is a listener's effective health check, every field set.
type lbHealthCheck struct {
	on                      bool
	timeout, interval       int64 // seconds
	healthNum, unhealthNum  int64
	checkType               string
	checkPort               int64 // -1: the target's port
	httpCode                int64 // bit mask of accepted status classes
	httpPath, httpDomain    string
	httpMethod, httpVersion string
	contextType, send, recv string
	sourceIPType            int64
}

// defaultHealthCheck is what a listener created without HealthCheck gets:
// checks are on by default.
func defaultHealthCheck(proto string) lbHealthCheck {
	hc := lbHealthCheck{
		on: true, timeout: 2, interval: 5, healthNum: 3, unhealthNum: 3,
		checkType: "TCP", checkPort: -1, httpCode: 31, httpPath: "/", httpMethod: "HEAD",
	}
	if proto == protoUDP {
		hc.checkType = "PING"
	}
	return hc
}

// merge overlays the fields set in in and validates the result for a
// listener of protocol proto.
func (hc lbHealthCheck) merge(proto string, in *clb.HealthCheck) (lbHealthCheck, *Error) {
	if in == nil {
		return hc, nil
	}
	if in.HealthSwitch != nil {
		switch *in.HealthSwitch {
		case 0, 1:
			hc.on = *in.HealthSwitch == 1
		default:
			return hc, Errorf("InvalidParameterValue", "`HealthCheck.HealthSwitch` must be 0 or 1, got %d.", *in.HealthSwitch)
		}
	}
	ranges := []struct {
		name     string
		in       *int64
		dst      *int64
		min, max int64
	}{
		{"TimeOut", in.TimeOut, &hc.timeout, 2, 60},
		{"IntervalTime", in.IntervalTime, &hc.interval, 2, 300},
		{"HealthNum", in.HealthNum, &hc.healthNum, 2, 10},
		{"UnHealthNum", in.UnHealthNum, &hc.unhealthNum, 2, 10},
		{"HttpCode", in.HttpCode, &hc.httpCode, 1, 31},
		{"SourceIpType", in.SourceIpType, &hc.sourceIPType, 0, 1},
	}
	for _, r := range ranges {
		if r.in == nil {
			continue
		}
		if *r.in < r.min || *r.in > r.max {
			return hc, Errorf("InvalidParameterValue", "`HealthCheck.%s` must be between %d and %d, got %d.", r.name, r.min, r.max, *r.in)
		}
		*r.dst = *r.in
	}
	if in.CheckPort != nil {
		if p := *in.CheckPort; p != -1 && (p < 1 || p > 65535) {
			return hc, Errorf("InvalidParameterValue", "`HealthCheck.CheckPort` must be between 1 and 65535, or -1 for the target's port; got %d.", p)
		}
		hc.checkPort = *in.CheckPort
	}
	if in.CheckType != nil {
		hc.checkType = *in.CheckType
	}
	if in.HttpCheckPath != nil {
		hc.httpPath = *in.HttpCheckPath
	}
	if in.HttpCheckDomain != nil {
		hc.httpDomain = *in.HttpCheckDomain
	}
	if in.HttpCheckMethod != nil {
		hc.httpMethod = *in.HttpCheckMethod
	}
	if in.HttpVersion != nil {
		hc.httpVersion = *in.HttpVersion
	}
	if in.ContextType != nil {
		hc.contextType = *in.ContextType
	}
	if in.SendContext != nil {
		hc.send = *in.SendContext
	}
	if in.RecvContext != nil {
		hc.recv = *in.RecvContext
	}
	return hc, hc.validate(proto)
}

// validate checks the combination of fields.
func (hc lbHealthCheck) validate(proto string) *Error {
	if hc.timeout >= hc.interval {
		return Errorf("InvalidParameterValue", "`HealthCheck.TimeOut` (%d) must be less than `HealthCheck.IntervalTime` (%d).", hc.timeout, hc.interval)
	}
	allowed := []string{"TCP", "HTTP", "CUSTOM"}
	if proto == protoUDP {
		allowed = []string{"PING", "CUSTOM"}
	}
	if !slices.Contains(allowed, hc.checkType) {
		return Errorf("InvalidParameterValue", "`HealthCheck.CheckType` of a %s listener must be one of %s, got `%s`.", proto, strings.Join(allowed, ", "), hc.checkType)
	}
	if !hc.on {
		return nil
	}
	switch hc.checkType {
	case "HTTP":
		if !strings.HasPrefix(hc.httpPath, "/") || len(hc.httpPath) > 200 {
			return Errorf("InvalidParameterValue", "`HealthCheck.HttpCheckPath` must start with `/` and have at most 200 characters, got `%s`.", hc.httpPath)
		}
		if !strings.EqualFold(hc.httpMethod, "HEAD") && !strings.EqualFold(hc.httpMethod, "GET") {
			return Errorf("InvalidParameterValue", "`HealthCheck.HttpCheckMethod` must be HEAD or GET, got `%s`.", hc.httpMethod)
		}
		if hc.httpVersion == "" {
			return Errorf("MissingParameter", "`HealthCheck.HttpVersion` (HTTP/1.0 or HTTP/1.1) is required when `CheckType` is HTTP.")
		}
		if hc.httpVersion != "HTTP/1.0" && hc.httpVersion != "HTTP/1.1" {
			return Errorf("InvalidParameterValue", "`HealthCheck.HttpVersion` must be HTTP/1.0 or HTTP/1.1, got `%s`.", hc.httpVersion)
		}
		if hc.httpDomain == "" {
			return Errorf("MissingParameter", "`HealthCheck.HttpCheckDomain` is required for the HTTP health check of a TCP listener.")
		}
		if len(hc.httpDomain) > 80 {
			return Errorf("InvalidParameterValue.Length", "`HealthCheck.HttpCheckDomain` must have at most 80 characters.")
		}
	case "CUSTOM":
		if hc.contextType != "HEX" && hc.contextType != "TEXT" {
			return Errorf("MissingParameter", "`HealthCheck.ContextType` (HEX or TEXT) is required when `CheckType` is CUSTOM.")
		}
		for _, c := range []struct{ name, v string }{{"SendContext", hc.send}, {"RecvContext", hc.recv}} {
			if c.v == "" {
				return Errorf("MissingParameter", "`HealthCheck.%s` is required when `CheckType` is CUSTOM.", c.name)
			}
			if len(c.v) > 500 {
				return Errorf("InvalidParameterValue.Length", "`HealthCheck.%s` must have at most 500 characters.", c.name)
			}
			for _, r := range c.v {
				if r < 0x20 || r > 0x7E {
					return Errorf("InvalidParameterValue", "`HealthCheck.%s` must be visible ASCII.", c.name)
				}
			}
			if hc.contextType == "HEX" {
				if _, err := hex.DecodeString(c.v); err != nil || strings.ToUpper(c.v) != c.v {
					return Errorf("InvalidParameterValue", "`HealthCheck.%s` must be an even number of the characters 0123456789ABCDEF when `ContextType` is HEX.", c.name)
				}
			}
		}
	}
	return nil
}

// toSDK renders the health check as DescribeListeners answers it. Fields
// that do not apply to the check type are null, as are CheckPort when it is
// the target's port (-1); with nulls, so is every field the SDK says "may
// be returned as null" (注意：此字段可能返回 null，表示取不到有效值, on HttpCode,
// HttpCheckPath, HttpCheckDomain, HttpCheckMethod, CheckPort, ContextType,
// SendContext, RecvContext and HttpVersion of HealthCheck in clb@v1.3.105
// models.go).
func (hc lbHealthCheck) toSDK(nulls bool) *clb.HealthCheck {
	sw := int64(0)
	if hc.on {
		sw = 1
	}
	out := &clb.HealthCheck{
		HealthSwitch: common.Int64Ptr(sw),
		TimeOut:      common.Int64Ptr(hc.timeout),
		IntervalTime: common.Int64Ptr(hc.interval),
		HealthNum:    common.Int64Ptr(hc.healthNum),
		UnHealthNum:  common.Int64Ptr(hc.unhealthNum),
		CheckType:    common.StringPtr(hc.checkType),
		SourceIpType: common.Int64Ptr(hc.sourceIPType),
	}
	if hc.checkPort != -1 {
		out.CheckPort = common.Int64Ptr(hc.checkPort)
	}
	switch hc.checkType {
	case "HTTP":
		out.HttpCode = common.Int64Ptr(hc.httpCode)
		out.HttpCheckPath = common.StringPtr(hc.httpPath)
		out.HttpCheckDomain = common.StringPtr(hc.httpDomain)
		out.HttpCheckMethod = common.StringPtr(hc.httpMethod)
		out.HttpVersion = common.StringPtr(hc.httpVersion)
	case "CUSTOM":
		out.ContextType = common.StringPtr(hc.contextType)
		out.SendContext = common.StringPtr(hc.send)
		out.RecvContext = common.StringPtr(hc.recv)
	}
	if nulls {
		out.HttpCode, out.HttpCheckPath, out.HttpCheckDomain, out.HttpCheckMethod = nil, nil, nil, nil
		out.HttpVersion, out.CheckPort, out.ContextType, out.SendContext, out.RecvContext = nil, nil, nil, nil, nil
	}
	return out
}

// listenerOptions are the settings CreateListener and ModifyListener share.
type listenerOptions struct {
	scheduler     *string
	sessionExpire *int64
	idleTimeout   *int64
}

func checkListenerOptions(o listenerOptions, schedulers []string) *Error {
	if o.scheduler != nil && !slices.Contains(schedulers, *o.scheduler) {
		return Errorf("InvalidParameterValue", "`Scheduler` must be one of %s, got `%s`.", strings.Join(schedulers, ", "), *o.scheduler)
	}
	if v := o.sessionExpire; v != nil && *v != 0 && (*v < 30 || *v > 3600) {
		return Errorf("InvalidParameterValue", "`SessionExpireTime` must be 0 (off) or between 30 and 3600 seconds, got %d.", *v)
	}
	if v := o.idleTimeout; v != nil && (*v < 10 || *v > 900) {
		return Errorf("InvalidParameterValue", "`IdleConnectTimeout` must be between 10 and 900 seconds, got %d.", *v)
	}
	return nil
}

// unsupportedListenerParams rejects listener features that cloudsim does
// not emulate and that would change how traffic flows.
func unsupportedListenerParams(endPort bool, fullEndPorts bool, targetType, sessionType *string) *Error {
	switch {
	case endPort || fullEndPorts:
		return Errorf("UnsupportedOperation", "cloudsim does not emulate port-range listeners (`EndPort`, `FullEndPorts`).")
	case targetType != nil && *targetType != "" && *targetType != "NODE":
		return Errorf("UnsupportedOperation", "cloudsim emulates only `TargetType` NODE, not `%s`.", *targetType)
	case sessionType != nil && *sessionType != "" && *sessionType != "NORMAL":
		return Errorf("UnsupportedOperation", "cloudsim emulates only `SessionType` NORMAL, not `%s`.", *sessionType)
	}
	return nil
}

// createListener implements CreateListener: one TCP, UDP or TCP_SSL
// listener per port.
func (l *CLB) createListener(call *Call, body []byte) (any, error) {
	var req clb.CreateListenerRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	proto := ptrStr(req.Protocol)
	switch {
	case proto == "":
		return nil, errMissing("Protocol")
	case proto == "QUIC":
		return nil, Errorf("UnsupportedOperation", "cloudsim emulates TCP, UDP, TCP_SSL, HTTP and HTTPS listeners, not %s.", proto)
	case isLayer7(proto):
		if e := checkLayer7ListenerParams(&req); e != nil {
			return nil, e
		}
	case proto != protoTCP && proto != protoUDP && proto != protoTCPSSL && !isLayer7(proto):
		return nil, Errorf("InvalidParameterValue", "`Protocol` must be one of TCP, UDP, HTTP, HTTPS, TCP_SSL, QUIC; got `%s`.", proto)
	}
	if len(req.Ports) == 0 {
		return nil, errMissing("Ports")
	}
	ports := make([]int64, 0, len(req.Ports))
	seen := map[int64]bool{}
	for _, p := range req.Ports {
		if p == nil || *p < 1 || *p > 65535 {
			return nil, Errorf("InvalidParameterValue", "Every port in `Ports` must be between 1 and 65535.")
		}
		if seen[*p] {
			return nil, Errorf("InvalidParameterValue.Duplicate", "The port %d appears more than once in `Ports`.", *p)
		}
		seen[*p] = true
		ports = append(ports, *p)
	}
	names := ptrStrs(req.ListenerNames)
	if len(req.ListenerNames) > 0 && len(names) != len(ports) {
		return nil, Errorf("InvalidParameter", "`ListenerNames` must have one name per port (%d names, %d ports).", len(names), len(ports))
	}
	for _, n := range names {
		if e := checkName("ListenerNames", n); e != nil {
			return nil, e
		}
	}
	if e := unsupportedListenerParams(req.EndPort != nil && *req.EndPort != 0, len(req.FullEndPorts) > 0,
		req.TargetType, req.SessionType); e != nil {
		return nil, e
	}
	opts := listenerOptions{scheduler: req.Scheduler, sessionExpire: req.SessionExpireTime, idleTimeout: req.IdleConnectTimeout}
	if e := checkListenerOptions(opts, []string{"WRR", "LEAST_CONN"}); e != nil {
		return nil, e
	}
	hc, e := defaultHealthCheck(proto).merge(proto, req.HealthCheck)
	if e != nil {
		return nil, e
	}

	lbID := ptrStr(req.LoadBalancerId)
	var ids []string
	_, err := l.startTask(call, []string{lbID}, func() (func() error, *Error) {
		lb, e := l.lbLocked(call.Region, lbID)
		if e != nil {
			return nil, e
		}
		for _, li := range lb.listeners {
			if portFamily(li.protocol) == portFamily(proto) && slices.Contains(ports, li.port) {
				return nil, Errorf("InvalidParameter.PortCheckFailed", "The port %d already has a %s listener (%s) on LoadBalancer `%s`.", li.port, proto, li.id, lbID)
			}
		}
		if len(lb.listeners)+len(ports) > ListenerQuota {
			return nil, Errorf("LimitExceeded", "LoadBalancer `%s` has %d listeners; the quota is %d per load balancer.", lbID, len(lb.listeners), ListenerQuota)
		}
		// Last: an inline certificate is stored only by a call that goes ahead.
		cert, e := l.listenerCertLocked(proto, req.Certificate, req.MultiCertInfo != nil)
		if e != nil {
			return nil, e
		}
		now := l.core.Now()
		var add []*clbListener
		for i, port := range ports {
			li := &clbListener{
				id: l.newListenerIDLocked(), protocol: proto, port: port, hc: hc,
				scheduler: "WRR", created: now, cert: cert,
			}
			// A listener id must be unique before the task applies too.
			for slices.ContainsFunc(add, func(o *clbListener) bool { return o.id == li.id }) {
				li.id = l.newListenerIDLocked()
			}
			if len(names) > 0 {
				li.name = names[i]
			}
			li.idleTimeout = defaultTCPIdleTimeout
			if proto == protoUDP {
				li.idleTimeout = defaultUDPIdleTimeout
			}
			applyListenerOptions(li, opts)
			add = append(add, li)
			ids = append(ids, li.id)
		}
		return func() error {
			if l.lbs[lb.id] != lb {
				return errLBNotFound(lb.id)
			}
			lb.listeners = append(lb.listeners, add...)
			return nil
		}, nil
	})
	if err != nil {
		return nil, err
	}
	return &clb.CreateListenerResponseParams{ListenerIds: common.StringPtrs(ids)}, nil
}

func applyListenerOptions(li *clbListener, o listenerOptions) {
	if o.scheduler != nil {
		li.scheduler = *o.scheduler
	}
	if o.sessionExpire != nil {
		li.sessionExpire = *o.sessionExpire
	}
	if o.idleTimeout != nil {
		li.idleTimeout = *o.idleTimeout
	}
}

// describeListeners implements DescribeListeners.
func (l *CLB) describeListeners(call *Call, body []byte) (any, error) {
	var req clb.DescribeListenersRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	ids := ptrStrs(req.ListenerIds)
	if len(ids) > MaxListenerIDs {
		return nil, Errorf("InvalidParameterValue.Length", "The number of `ListenerIds` (%d) exceeds the limit of %d.", len(ids), MaxListenerIDs)
	}
	if p := req.Protocol; p != nil && !slices.Contains(append([]string{protoTCP, protoUDP, protoTCPSSL}, layer7...), *p) {
		return nil, Errorf("InvalidParameterValue", "`Protocol` must be one of TCP, UDP, HTTP, HTTPS, TCP_SSL, QUIC; got `%s`.", *p)
	}
	if p := req.Port; p != nil && (*p < 1 || *p > 65535) {
		return nil, Errorf("InvalidParameterValue", "`Port` must be between 1 and 65535, got %d.", *p)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	lb, e := l.readLBLocked(call.Region, ptrStr(req.LoadBalancerId)) // as the read lag shows it (clb_lag.go)
	if e != nil {
		return nil, e
	}
	out := &clb.DescribeListenersResponseParams{Listeners: []*clb.Listener{}}
	for _, li := range lb.listeners {
		if (len(ids) > 0 && !slices.Contains(ids, li.id)) ||
			(req.Protocol != nil && *req.Protocol != li.protocol) ||
			(req.Port != nil && *req.Port != li.port) {
			continue
		}
		out.Listeners = append(out.Listeners, li.toSDK(l.nullHC))
	}
	out.TotalCount = common.Uint64Ptr(uint64(len(out.Listeners)))
	return out, nil
}

func (li *clbListener) toSDK(nulls bool) *clb.Listener {
	out := &clb.Listener{
		ListenerId:          common.StringPtr(li.id),
		Protocol:            common.StringPtr(li.protocol),
		Port:                common.Int64Ptr(li.port),
		HealthCheck:         li.hc.toSDK(nulls),
		Scheduler:           common.StringPtr(li.scheduler),
		SessionExpireTime:   common.Int64Ptr(li.sessionExpire),
		SniSwitch:           common.Int64Ptr(0),
		ListenerName:        common.StringPtr(li.name),
		CreateTime:          common.StringPtr(clbTime(li.created)),
		EndPort:             common.Int64Ptr(0),
		TargetType:          common.StringPtr("NODE"),
		SessionType:         common.StringPtr("NORMAL"),
		DeregisterTargetRst: common.BoolPtr(false),
		AttrFlags:           []*string{},
		MaxConn:             common.Int64Ptr(-1),
		MaxCps:              common.Int64Ptr(-1),
		IdleConnectTimeout:  common.Int64Ptr(li.idleTimeout),
		Certificate:         certOutput(li.cert),
	}
	if isLayer7(li.protocol) { // rules hold these (clb_rules.go)
		out.HealthCheck, out.Scheduler, out.SessionExpireTime, out.Rules = nil, nil, nil, li.rulesToSDK(nulls)
	}
	return out
}

// certOutput is a listener's Certificate in DescribeListeners: null for a
// listener without one ("注意：此字段可能返回 null", Listener.Certificate).
func certOutput(lc *listenerCert) *clb.CertificateOutput {
	if lc == nil {
		return nil
	}
	return lc.toSDK()
}

// modifyListener implements ModifyListener: name, health check (fields not
// given keep their values), scheduler, session expire time and idle
// timeout, applied when the task ends.
func (l *CLB) modifyListener(call *Call, body []byte) (any, error) {
	var req clb.ModifyListenerRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	if req.ListenerName != nil {
		if e := checkName("ListenerName", *req.ListenerName); e != nil {
			return nil, e
		}
	}
	if e := unsupportedListenerParams(false, false, req.TargetType, req.SessionType); e != nil {
		return nil, e
	}
	opts := listenerOptions{scheduler: req.Scheduler, sessionExpire: req.SessionExpireTime, idleTimeout: req.IdleConnectTimeout}
	if e := checkListenerOptions(opts, []string{"WRR", "LEAST_CONN", "IP_HASH"}); e != nil {
		return nil, e
	}
	lbID, lisID := ptrStr(req.LoadBalancerId), ptrStr(req.ListenerId)
	_, err := l.startTask(call, []string{lbID}, func() (func() error, *Error) {
		lb, e := l.lbLocked(call.Region, lbID)
		if e != nil {
			return nil, e
		}
		if lisID == "" {
			return nil, errMissing("ListenerId")
		}
		li := lb.listener(lisID)
		if li == nil {
			return nil, errListenerNotFound(lbID, lisID)
		}
		hc, e := li.hc.merge(li.protocol, req.HealthCheck)
		if e != nil {
			return nil, e
		}
		// A Certificate replaces the listener's, its unset fields taking
		// their defaults (SSLMode UNIDIRECTIONAL): cloudsim's reading, as
		// the SDK does not say whether ModifyListener merges it.
		cert := li.cert
		if req.Certificate != nil || req.MultiCertInfo != nil {
			if cert, e = l.listenerCertLocked(li.protocol, req.Certificate, req.MultiCertInfo != nil); e != nil {
				return nil, e
			}
		}
		return func() error {
			if lb.listener(lisID) != li {
				return errListenerNotFound(lbID, lisID)
			}
			if req.ListenerName != nil {
				li.name = *req.ListenerName
			}
			li.hc = hc
			li.cert = cert
			applyListenerOptions(li, opts)
			return nil
		}, nil
	})
	if err != nil {
		return nil, err
	}
	return &clb.ModifyListenerResponseParams{}, nil
}

// deleteListener implements DeleteListener.
func (l *CLB) deleteListener(call *Call, body []byte) (any, error) {
	var req clb.DeleteListenerRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	lbID, lisID := ptrStr(req.LoadBalancerId), ptrStr(req.ListenerId)
	_, err := l.startTask(call, []string{lbID}, func() (func() error, *Error) {
		return l.prepareDeleteListeners(call.Region, lbID, []string{lisID}, true)
	})
	if err != nil {
		return nil, err
	}
	return &clb.DeleteListenerResponseParams{}, nil
}

// deleteLoadBalancerListeners implements DeleteLoadBalancerListeners; no
// ListenerIds deletes every listener.
func (l *CLB) deleteLoadBalancerListeners(call *Call, body []byte) (any, error) {
	var req clb.DeleteLoadBalancerListenersRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	ids := ptrStrs(req.ListenerIds)
	if len(ids) > MaxDeleteListenerIDs {
		return nil, Errorf("InvalidParameterValue.Length", "The number of `ListenerIds` (%d) exceeds the limit of %d.", len(ids), MaxDeleteListenerIDs)
	}
	lbID := ptrStr(req.LoadBalancerId)
	_, err := l.startTask(call, []string{lbID}, func() (func() error, *Error) {
		return l.prepareDeleteListeners(call.Region, lbID, ids, false)
	})
	if err != nil {
		return nil, err
	}
	return &clb.DeleteLoadBalancerListenersResponseParams{}, nil
}

// prepareDeleteListeners validates a deletion of listeners (all of them if
// ids is empty and !required) and returns its apply. Callers hold l.mu.
func (l *CLB) prepareDeleteListeners(region, lbID string, ids []string, required bool) (func() error, *Error) {
	lb, e := l.lbLocked(region, lbID)
	if e != nil {
		return nil, e
	}
	if required && (len(ids) == 0 || ids[0] == "") {
		return nil, errMissing("ListenerId")
	}
	if dup := firstDuplicate(ids); dup != "" {
		return nil, Errorf("InvalidParameterValue.Duplicate", "The listener `%s` appears more than once.", dup)
	}
	for _, id := range ids {
		if lb.listener(id) == nil {
			return nil, errListenerNotFound(lbID, id)
		}
	}
	return func() error {
		lb.listeners = slices.DeleteFunc(lb.listeners, func(li *clbListener) bool {
			return len(ids) == 0 || slices.Contains(ids, li.id)
		})
		return nil
	}, nil
}
