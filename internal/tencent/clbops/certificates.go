package clbops

import (
	"fmt"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"

	"github.com/ccmkit/ccm/internal/lb/lbspec"
)

// Listener protocols beyond the Service's own TCP and UDP. TCP_SSL ends
// TLS at the CLB and forwards plain TCP to the targets; HTTPS ends it and
// forwards HTTP (rules.go).
const ProtocolTCPSSL = "TCP_SSL"

// SSL modes of a listener's Certificate (clb@v1.3.105 models.go,
// CertificateInput.SSLMode: UNIDIRECTIONAL, the default, or MUTUAL).
const (
	sslUnidirectional = "UNIDIRECTIONAL"
	sslMutual         = "MUTUAL"
)

// PortProtocol is the listener protocol a Service port gets instead of its
// own (TKE's service.cloud.tencent.com/specify-protocol), with the
// certificate of a TCP_SSL listener.
type PortProtocol struct {
	Protocol string // TCP, UDP, ProtocolTCPSSL, ProtocolHTTP or ProtocolHTTPS
	// CertID is the server certificate's id (TCP_SSL, HTTPS); CACertID, if set,
	// the client CA certificate's, which makes the listener mutual TLS.
	CertID, CACertID string
}

// listenerCert is a listener's certificate, normalized so that a wanted
// and a found one compare with ==. The zero value is "no certificate".
type listenerCert struct {
	mode, certID, caID string
}

func (c listenerCert) String() string {
	switch {
	case c.certID == "":
		return "none"
	case c.mode == sslMutual:
		return fmt.Sprintf("%s (mutual, client CA %s)", c.certID, c.caID)
	}
	return c.certID
}

func wantCert(p PortProtocol) listenerCert {
	if p.Protocol != ProtocolTCPSSL && p.Protocol != ProtocolHTTPS {
		return listenerCert{}
	}
	if p.CACertID != "" {
		return listenerCert{mode: sslMutual, certID: p.CertID, caID: p.CACertID}
	}
	return listenerCert{mode: sslUnidirectional, certID: p.CertID}
}

// certFromSDK reads DescribeListeners' Certificate (null for a listener
// without one). A mode the answer omits is the documented default, and a
// CA id means nothing to a one-way listener.
func certFromSDK(in *clb.CertificateOutput) listenerCert {
	if in == nil || deref(in.CertId) == "" {
		return listenerCert{}
	}
	c := listenerCert{mode: deref(in.SSLMode), certID: deref(in.CertId)}
	if c.mode == "" {
		c.mode = sslUnidirectional
	}
	if c.mode == sslMutual {
		c.caID = deref(in.CertCaId)
	}
	return c
}

// sdk is the Certificate parameter of CreateListener and ModifyListener.
func (c listenerCert) sdk() *clb.CertificateInput {
	if c.certID == "" {
		return nil
	}
	out := &clb.CertificateInput{SSLMode: common.StringPtr(c.mode), CertId: common.StringPtr(c.certID)}
	if c.mode == sslMutual {
		out.CertCaId = common.StringPtr(c.caID)
	}
	return out
}

// listenerProtocol is the protocol and certificate of the Service's
// listener l: its own protocol unless Settings.Protocols names another.
func listenerProtocol(spec *Desired, l lbspec.Listener) (string, listenerCert) {
	if p, ok := spec.Protocols[l.Name()]; ok && p.Protocol != "" {
		return p.Protocol, wantCert(p)
	}
	return string(l.Protocol), listenerCert{}
}

// portFamily is the port space a listener protocol takes on a CLB: the
// TCP-based ones share one, so changing a port from TCP to TCP_SSL must
// delete the old listener before it creates the new one.
func portFamily(protocol string) string {
	if protocol == string(lbspec.UDP) || protocol == "QUIC" {
		return string(lbspec.UDP)
	}
	return string(lbspec.TCP)
}

// portClash reports whether a listener the plan creates takes the port of
// one it removes.
func (p *listenerPlan) portClash() bool {
	for _, w := range p.create {
		for _, l := range p.remove {
			if w.port == l.port && portFamily(w.protocol) == portFamily(l.protocol) {
				return true
			}
		}
	}
	return false
}
