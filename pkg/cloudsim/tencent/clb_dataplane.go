package tencent

import (
	"encoding/hex"
	"net/netip"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// syncPlaneLocked hands the data plane the current state of a load
// balancer: nothing until its create task has ended, then every listener
// with its targets and health check. A load balancer that no longer exists
// is removed. Callers hold l.mu, which orders the syncs of one load
// balancer as its changes.
func (l *CLB) syncPlaneLocked(id string) {
	lb := l.lbs[id]
	if lb == nil {
		l.plane.Remove(id)
		return
	}
	if lb.status != 1 {
		return
	}
	want := dataplane.LoadBalancer{ID: lb.id, VIP: lb.vip, Firewall: l.firewall(lb)}
	for _, li := range lb.listeners {
		pl := li.toPlane()
		if isLayer7(li.protocol) { // HTTP proxy by rules (clb_rules.go)
			li.layer7Plane(&pl)
		}
		if li.cert != nil { // TCP_SSL, HTTPS: TLS ends at the listener, targets get TCP (HTTP)
			pl.Protocol, pl.TLS = dataplane.TCP, l.planeTLSLocked(li.cert)
		}
		want.Listeners = append(want.Listeners, pl)
	}
	l.plane.Sync(want)
}

func (li *clbListener) toPlane() dataplane.Listener {
	out := dataplane.Listener{
		ID:          li.id,
		Protocol:    li.protocol,
		Port:        int(li.port),
		Scheduler:   li.scheduler,
		Stickiness:  time.Duration(li.sessionExpire) * time.Second,
		IdleTimeout: time.Duration(li.idleTimeout) * time.Second,
		HealthCheck: li.hc.toPlane(),
	}
	for _, t := range li.targets {
		ip, err := netip.ParseAddr(t.ip)
		if err != nil {
			continue // cannot happen: addresses are validated on registration
		}
		out.Targets = append(out.Targets, dataplane.Target{
			ID:     t.backend(),
			Addr:   netip.AddrPortFrom(ip, uint16(t.port)),
			Weight: int(t.weight),
		})
	}
	return out
}

func (hc lbHealthCheck) toPlane() *dataplane.HealthCheck {
	if !hc.on {
		return nil
	}
	out := &dataplane.HealthCheck{
		Interval:           time.Duration(hc.interval) * time.Second,
		Timeout:            time.Duration(hc.timeout) * time.Second,
		HealthyThreshold:   int(hc.healthNum),
		UnhealthyThreshold: int(hc.unhealthNum),
	}
	if hc.checkPort > 0 {
		out.Port = int(hc.checkPort)
	}
	switch hc.checkType {
	case "HTTP":
		out.Type = dataplane.CheckHTTP
		out.HTTPPath, out.HTTPHost, out.HTTPMethod = hc.httpPath, hc.httpDomain, hc.httpMethod
		out.HTTPCodes = int(hc.httpCode)
	case "CUSTOM":
		out.Type = dataplane.CheckCustom
		out.Send, out.Expect = []byte(hc.send), []byte(hc.recv)
		if hc.contextType == "HEX" {
			out.Send, _ = hex.DecodeString(hc.send)
			out.Expect, _ = hex.DecodeString(hc.recv)
		}
	case "PING":
		out.Type = dataplane.CheckPing
	default:
		out.Type = dataplane.CheckTCP
	}
	return out
}
