package oci

import (
	"strings"

	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	nlb "github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// The PROXY protocol on OCI listeners. A Load Balancer listener asks for it
// with connectionConfiguration.backendTcpProxyProtocolVersion (version 1 or
// 2), a Network Load Balancer listener with isPpv2Enabled (version 2). The
// data plane then starts every connection to a backend with the header
// that names the client (dataplane/proxyproto.go).

// checkProxyProtocol validates a Load Balancer listener's proxy protocol
// settings. Versions: the SDK model (loadbalancer/connection_configuration.go)
// gives the field no range, and the PROXY protocol has versions 1 and 2
// only (haproxy.org proxy-protocol.txt), so anything else is refused.
// Options: the SDK's enum (PP2_TYPE_AUTHORITY), "PPV2 Options" in its
// comment, so cloudsim's choice is to refuse them without version 2.
func checkProxyProtocol(where string, cc *loadbalancer.ConnectionConfiguration) error {
	v := cc.BackendTcpProxyProtocolVersion
	if v != nil && *v != dataplane.ProxyV1 && *v != dataplane.ProxyV2 {
		return badRequest("%s.connectionConfiguration.backendTcpProxyProtocolVersion must be 1 or 2, not %d.", where, *v)
	}
	for _, o := range cc.BackendTcpProxyProtocolOptions {
		if _, ok := loadbalancer.GetMappingConnectionConfigurationBackendTcpProxyProtocolOptionsEnum(string(o)); !ok {
			return badRequest("%s.connectionConfiguration.backendTcpProxyProtocolOptions: %q must be one of %s.", where, o,
				strings.Join(loadbalancer.GetConnectionConfigurationBackendTcpProxyProtocolOptionsEnumStringValues(), ", "))
		}
		if v == nil || *v != dataplane.ProxyV2 {
			return badRequest("%s.connectionConfiguration.backendTcpProxyProtocolOptions %s needs backendTcpProxyProtocolVersion 2.", where, o)
		}
	}
	return nil
}

// lbProxyProtocol is the data plane's PROXY protocol version for a Load
// Balancer listener. The authority option (PP2_TYPE_AUTHORITY) is stored
// but not sent: the data plane sends the addresses only.
func lbProxyProtocol(l loadbalancer.Listener) int {
	if cc := l.ConnectionConfiguration; cc != nil && cc.BackendTcpProxyProtocolVersion != nil {
		return *cc.BackendTcpProxyProtocolVersion
	}
	return dataplane.ProxyOff
}

// nlbProxyProtocol is the data plane's PROXY protocol version for a
// Network Load Balancer listener: isPpv2Enabled is version 2. The OCI docs
// offer it for TCP-based listeners ("Network Load Balancer Management",
// Proxy Protocol); the data plane sends it on the TCP flows of a listener
// (TCP, and the TCP half of TCP_AND_UDP), never on UDP.
func nlbProxyProtocol(l nlb.Listener) int {
	if l.IsPpv2Enabled != nil && *l.IsPpv2Enabled {
		return dataplane.ProxyV2
	}
	return dataplane.ProxyOff
}

// ppv2OrOff is a listener's isPpv2Enabled: as given, false when not given
// (cloudsim's choice: the SDK model names no default, and PPv2 changes
// what a backend reads, so it is off unless asked for).
func ppv2OrOff(v *bool) *bool {
	if v == nil {
		f := false
		return &f
	}
	return v
}
