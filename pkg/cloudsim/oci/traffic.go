package oci

import (
	"maps"
	"net/netip"
	"slices"
	"time"

	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	nlb "github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// syncPlaneLocked hands the data plane what a load balancer must carry:
// nothing until it is ACTIVE, then each listener forwarding to the
// backends of its default backend set, health-checked as the backend set
// says. Callers hold d.lbs.mu, which orders the syncs of one load balancer
// as its changes.
func (d *Dialect) syncPlaneLocked(b *balancer) {
	switch b.lifecycle {
	case stateActive, stateUpdating, stateDeleting:
	default:
		if b.lifecycle == stateDeleted {
			d.nsgs.bindLB(b.id, netip.Addr{}, nil)
		}
		d.plane.Remove(b.id)
		return
	}
	want := dataplane.LoadBalancer{ID: b.id, VIP: b.vip, Firewall: d.firewallFor(b)}
	if b.kind == kindLB {
		for _, name := range slices.Sorted(maps.Keys(b.listeners)) {
			l := b.listeners[name]
			pl := lbPlaneListener(l, b.backendSets[*l.DefaultBackendSetName])
			planeTLS(b, l, b.backendSets[*l.DefaultBackendSetName], &pl) // certificates.go
			planeHeaderRules(b, l, &pl)                                  // rulesets_plane.go
			want.Listeners = append(want.Listeners, pl)
		}
	} else {
		for _, name := range slices.Sorted(maps.Keys(b.nlbListeners)) {
			l := b.nlbListeners[name]
			ls := d.nlbPlaneListeners(l, b.nlbBackendSets[*l.DefaultBackendSetName])
			if l.IpVersion == nlb.IpVersionIpv6 {
				// On the NLB's IPv6 address, which this host must have
				// for the listener to bind (docs/oci.md#dual-stack).
				for i := range ls {
					ls[i].Addr = d.nlbIPv6Of(b)
				}
			}
			want.Listeners = append(want.Listeners, ls...)
		}
	}
	d.plane.Sync(want)
}

// Every Load Balancing listener is carried at layer 4: an HTTP listener's
// bytes reach the backend unchanged, which is what a client can observe of
// a proxy that adds no headers. (An HTTP listener whose rule sets edit
// headers is a layer-7 proxy: rulesets_plane.go.)
func lbPlaneListener(l loadbalancer.Listener, bs loadbalancer.BackendSet) dataplane.Listener {
	out := dataplane.Listener{ID: *l.Name, Protocol: dataplane.TCP, Port: *l.Port, Scheduler: dataplane.WRR}
	if l.ConnectionConfiguration != nil && l.ConnectionConfiguration.IdleTimeout != nil {
		out.IdleTimeout = time.Duration(*l.ConnectionConfiguration.IdleTimeout) * time.Second
	}
	out.ProxyProtocol = lbProxyProtocol(l)
	if bs.Policy != nil {
		switch *bs.Policy {
		case "LEAST_CONNECTIONS":
			out.Scheduler = dataplane.LeastConn
		case "IP_HASH":
			out.Scheduler = dataplane.IPHash
		}
	}
	for _, be := range bs.Backends {
		ip, err := netip.ParseAddr(*be.IpAddress)
		if err != nil {
			continue // cannot happen: validated on the way in
		}
		// A drained or offline backend takes no new connections. A backup
		// backend is used like any other: the data plane has no standby.
		w := *be.Weight
		if *be.Drain || *be.Offline {
			w = 0
		}
		out.Targets = append(out.Targets, dataplane.Target{ID: *be.Name, Addr: netip.AddrPortFrom(ip, uint16(*be.Port)), Weight: w})
	}
	if hc := bs.HealthChecker; hc != nil {
		c := &dataplane.HealthCheck{
			Type:               dataplane.CheckTCP,
			Port:               *hc.Port,
			Interval:           time.Duration(*hc.IntervalInMillis) * time.Millisecond,
			Timeout:            time.Duration(*hc.TimeoutInMillis) * time.Millisecond,
			HealthyThreshold:   *hc.Retries,
			UnhealthyThreshold: *hc.Retries,
		}
		if *hc.Protocol == "HTTP" {
			c.Type, c.HTTPPath, c.HTTPMethod = dataplane.CheckHTTP, *hc.UrlPath, "GET"
			c.HTTPCodes = codeClass(*hc.ReturnCode)
		}
		out.HealthCheck = c
	}
	return out
}

// codeClass is the data plane's status-class mask for an expected code:
// the data plane checks the class (2xx), not the exact code.
func codeClass(code int) int {
	if code < 100 || code > 599 {
		return 2
	}
	return 1 << (code/100 - 1)
}

// nlbPlaneListeners maps one NLB listener to data-plane listeners:
// TCP_AND_UDP is two, ANY and L3IP (every port) are not carried.
func (d *Dialect) nlbPlaneListeners(l nlb.Listener, bs nlb.BackendSet) []dataplane.Listener {
	var protos []string
	switch l.Protocol {
	case nlb.ListenerProtocolsTcp:
		protos = []string{dataplane.TCP}
	case nlb.ListenerProtocolsUdp:
		protos = []string{dataplane.UDP}
	case nlb.ListenerProtocolsTcpAndUdp:
		protos = []string{dataplane.TCP, dataplane.UDP}
	default:
		return nil
	}
	scheduler := dataplane.WRR
	if bs.Policy == nlb.NetworkLoadBalancingPolicyTwoTuple || bs.Policy == nlb.NetworkLoadBalancingPolicyThreeTuple {
		scheduler = dataplane.IPHash // both hash on the client address
	}
	var targets []dataplane.Target
	for _, be := range bs.Backends {
		addr := ""
		switch {
		case be.IpAddress != nil:
			addr = *be.IpAddress
		case be.TargetId != nil:
			r, err := d.instanceRecord(*be.TargetId)
			if err != nil {
				continue // the instance is gone: no traffic to it
			}
			addr = r.PrivateIP
		}
		ip, err := netip.ParseAddr(addr)
		if err != nil {
			continue
		}
		port := *be.Port
		if port == 0 {
			port = *l.Port
		}
		w := *be.Weight
		if *be.IsDrain || *be.IsOffline {
			w = 0
		}
		targets = append(targets, dataplane.Target{ID: *be.Name, Addr: netip.AddrPortFrom(ip, uint16(port)), Weight: w})
	}
	var out []dataplane.Listener
	for _, p := range protos {
		dl := dataplane.Listener{ID: *l.Name, Protocol: p, Port: *l.Port, Scheduler: scheduler, Targets: targets}
		if len(protos) > 1 {
			dl.ID = *l.Name + "/" + p
		}
		if p == dataplane.TCP && l.TcpIdleTimeout != nil {
			dl.IdleTimeout = time.Duration(*l.TcpIdleTimeout) * time.Second
		}
		if p == dataplane.TCP {
			dl.ProxyProtocol = nlbProxyProtocol(l)
		}
		if p == dataplane.UDP && l.UdpIdleTimeout != nil {
			dl.IdleTimeout = time.Duration(*l.UdpIdleTimeout) * time.Second
		}
		dl.HealthCheck = nlbPlaneCheck(bs.HealthChecker)
		out = append(out, dl)
	}
	return out
}

func nlbPlaneCheck(hc *nlb.HealthChecker) *dataplane.HealthCheck {
	if hc == nil {
		return nil
	}
	c := &dataplane.HealthCheck{Type: dataplane.CheckTCP, Interval: time.Duration(*hc.IntervalInMillis) * time.Millisecond,
		Timeout: time.Duration(*hc.TimeoutInMillis) * time.Millisecond, HealthyThreshold: *hc.Retries, UnhealthyThreshold: *hc.Retries}
	if hc.Port != nil {
		c.Port = *hc.Port
	}
	switch hc.Protocol {
	case nlb.HealthCheckProtocolsHttp:
		c.Type, c.HTTPMethod = dataplane.CheckHTTP, "GET"
		c.HTTPPath = *hc.UrlPath
		if hc.ReturnCode != nil {
			c.HTTPCodes = codeClass(*hc.ReturnCode)
		}
	case nlb.HealthCheckProtocolsTcp:
		// With request and response data the check sends and expects
		// them; without, it is a TCP connect.
		if len(hc.RequestData) > 0 || len(hc.ResponseData) > 0 {
			c.Type, c.Send, c.Expect = dataplane.CheckCustom, hc.RequestData, hc.ResponseData
		}
	case nlb.HealthCheckProtocolsUdp:
		// A UDP probe without data has no answer to observe: such a check
		// counts every backend as reachable.
		c.Type = dataplane.CheckPing
		if len(hc.RequestData) > 0 || len(hc.ResponseData) > 0 {
			c.Type, c.Send, c.Expect = dataplane.CheckCustom, hc.RequestData, hc.ResponseData
		}
	case nlb.HealthCheckProtocolsHttps:
		// cloudsim speaks no TLS to backends; a TCP connect stands in.
	case nlb.HealthCheckProtocolsDns:
		c.Type = dataplane.CheckPing
	}
	return c
}

// setHealth is a backend set's health, in the API's terms.
type setHealth struct {
	status                     string
	warning, critical, unknown []string
}

// backendSetHealth reads the data plane's view of the first listener that
// uses the backend set (a backend set no listener uses is not checked:
// UNKNOWN). OK when every backend passes, CRITICAL when none does.
func (d *Dialect) backendSetHealth(b *balancer, setName string, backends []string) setHealth {
	out := setHealth{warning: []string{}, critical: []string{}, unknown: []string{}}
	listenerID := ""
	if b.kind == kindLB {
		for _, name := range slices.Sorted(maps.Keys(b.listeners)) {
			if *b.listeners[name].DefaultBackendSetName == setName {
				listenerID = name
				break
			}
		}
	} else {
		for _, name := range slices.Sorted(maps.Keys(b.nlbListeners)) {
			if l := b.nlbListeners[name]; *l.DefaultBackendSetName == setName {
				listenerID = name
				if l.Protocol == nlb.ListenerProtocolsTcpAndUdp {
					listenerID = name + "/" + dataplane.TCP
				}
				break
			}
		}
	}
	health := map[string]string{}
	if listenerID != "" {
		for _, t := range d.plane.TargetHealth(b.id, listenerID) {
			health[t.ID] = t.Health
		}
	}
	okCount := 0
	for _, name := range backends {
		switch health[name] {
		case dataplane.HealthHealthy, dataplane.HealthOff:
			okCount++
		case dataplane.HealthUnhealthy:
			out.critical = append(out.critical, name)
		default:
			out.unknown = append(out.unknown, name)
		}
	}
	switch {
	case len(backends) == 0 || len(out.unknown) == len(backends):
		out.status = "UNKNOWN"
	case okCount == len(backends):
		out.status = "OK"
	case okCount == 0:
		out.status = "CRITICAL"
	default:
		out.status = "WARNING"
	}
	return out
}
