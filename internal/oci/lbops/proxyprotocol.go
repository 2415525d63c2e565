package lbops

import (
	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
)

// The PROXY protocol (issue 14 item 5). A Load Balancer listener sends it
// with connectionConfiguration.backendTcpProxyProtocolVersion (1 or 2), a
// Network Load Balancer listener with isPpv2Enabled (version 2). Like the
// rest of a listener it is part of the plan: a change is one UpdateListener
// per listener, an unchanged one no write; the Service's setting is the
// whole truth, so no annotation turns it off on a listener that has it.

// Idle timeouts an LB listener gets when the Service sets none but the
// connection configuration must be sent (it requires idleTimeout): the
// API's defaults per protocol (OCI docs, "Connection Configuration":
// 300 s for TCP, 60 s for HTTP).
const (
	lbDefaultIdleTCP  = 300
	lbDefaultIdleHTTP = 60
)

// proxyVersionFor is the version a listener of protocol proto sends: the
// Service's, on every LB listener (as the public OCI CCM sets it); on an
// NLB only on TCP listeners, since OCI offers proxy protocol for TCP-based
// listeners ("Network Load Balancer Management", Proxy Protocol).
func proxyVersionFor(d *Desired, proto string) int {
	if d.Kind == KindNLB && proto != "TCP" {
		return 0
	}
	return d.ProxyProtocol
}

// lbConnection is an LB listener's connectionConfiguration, nil when
// neither the idle timeout nor the proxy protocol needs one. An update
// keeps the idle timeout OCI has (idleNow) unless the Service sets it, so
// that turning the proxy protocol on or off changes nothing else.
func lbConnection(l listenerModel) *loadbalancer.ConnectionConfiguration {
	idle := l.IdleTimeoutSec
	if idle == 0 {
		idle = l.idleNow
	}
	if idle == 0 && l.ProxyVersion > 0 {
		idle = lbDefaultIdleTCP
		if l.Protocol == "HTTP" {
			idle = lbDefaultIdleHTTP
		}
	}
	if idle == 0 {
		return nil
	}
	cc := &loadbalancer.ConnectionConfiguration{IdleTimeout: common.Int64(idle)}
	if l.ProxyVersion > 0 {
		cc.BackendTcpProxyProtocolVersion = common.Int(l.ProxyVersion)
	}
	return cc
}

// lbProxyVersion reads an LB listener's version; none is 0.
func lbProxyVersion(cc *loadbalancer.ConnectionConfiguration) int {
	if cc == nil {
		return 0
	}
	return deref(cc.BackendTcpProxyProtocolVersion)
}

// nlbPpv2 is an NLB listener's isPpv2Enabled; sent on every write, false
// included, so that an update turns it off.
func nlbPpv2(l listenerModel) *bool { return common.Bool(l.ProxyVersion == 2) }

// nlbProxyVersion reads an NLB listener's isPpv2Enabled as a version.
func nlbProxyVersion(ppv2 *bool) int {
	if deref(ppv2) {
		return 2
	}
	return 0
}
