package tencentcloud

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/lb/lbkit"
	"github.com/ccmkit/ccm/internal/lb/lbspec"
	"github.com/ccmkit/ccm/internal/tencent/clbops"
)

// TKE's specify-protocol annotation (annotations.TKESpecifyProtocol): per
// port, the CLB listener protocol, and for TCP_SSL the certificate, named
// through a Secret as TKE does ("Service Extension Protocol", Tencent Cloud
// 457/39141: `{"80":{"protocol":["TCP_SSL"],"tls":"cert-secret"}}`, where
// cert-secret is an Opaque Secret whose key qcloud_cert_id holds the
// certificate id; for mutual TLS qcloud_ca_cert_id holds the client CA's,
// as for TKE's Ingress certificates, 457/37016).

// Keys of TKE's certificate Secret.
const (
	secretKeyCertID   = "qcloud_cert_id"
	secretKeyCACertID = "qcloud_ca_cert_id"
)

// portProtocol is one port's entry of the annotation. hosts is TKE's
// per-domain form of HTTP and HTTPS listeners, parsed only to say that it
// is not supported: an HTTP or HTTPS listener gets one default rule
// (clbops/rules.go), and routing by domain is an Ingress controller's job.
type portProtocol struct {
	Protocol []string                   `json:"protocol"`
	TLS      string                     `json:"tls,omitempty"`
	Hosts    map[string]json.RawMessage `json:"hosts,omitempty"`
}

// certSecrets reads TKE's certificate Secrets (lbkit.SecretReader: nothing
// until the provider has a Kubernetes client, at Initialize).
type certSecrets struct {
	lbkit.SecretReader
}

// readProtocols reads the annotation against the Service's ports and
// returns the listeners whose protocol it changes, keyed by listener name
// (TCP-443). Every problem is reported, each naming its port, before any
// cloud call.
func (c *certSecrets) readProtocols(svc *v1.Service) (map[string]clbops.PortProtocol, error) {
	raw, err := annotations.TKESpecifyProtocol.StringFromService(svc)
	switch {
	case errors.Is(err, annotations.ErrNotSet):
		return nil, nil
	case err != nil:
		return nil, err
	}
	ann := annotations.TKESpecifyProtocol
	var byPort map[string]portProtocol
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&byPort); err != nil {
		return nil, ann.Invalid(raw, `want TKE's JSON form {"<port>":{"protocol":["TCP_SSL"],"tls":"<Secret>"}}: %v`, err)
	}
	var errs []error
	keys := make([]string, 0, len(byPort))
	for p := range byPort {
		keys = append(keys, p)
	}
	slices.Sort(keys)
	for _, p := range keys {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			errs = append(errs, ann.Invalid(raw, "key %q is not a port number (1-65535)", p))
		}
	}
	out := map[string]clbops.PortProtocol{}
	for _, sp := range svc.Spec.Ports {
		entry, ok := byPort[strconv.Itoa(int(sp.Port))]
		if !ok {
			continue // as on TKE: the port keeps its own protocol
		}
		l := lbspec.Listener{Protocol: lbspec.Protocol(sp.Protocol), Port: sp.Port}
		pp, err := c.portProtocol(svc, sp, entry)
		if err != nil {
			errs = append(errs, ann.Invalid(raw, "port %d/%s: %v", sp.Port, sp.Protocol, err))
			continue
		}
		if pp.Protocol != string(sp.Protocol) {
			out[l.Name()] = pp
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// portProtocol checks one port's entry and reads its certificate Secret.
func (c *certSecrets) portProtocol(svc *v1.Service, sp v1.ServicePort, e portProtocol) (clbops.PortProtocol, error) {
	if len(e.Protocol) != 1 {
		return clbops.PortProtocol{}, fmt.Errorf("give exactly one protocol, got %d (TKE mixes protocols on one port only in direct-access mode, which this CCM does not support)", len(e.Protocol))
	}
	proto := e.Protocol[0]
	allowed := map[v1.Protocol][]string{
		v1.ProtocolTCP: {"TCP", clbops.ProtocolTCPSSL, clbops.ProtocolHTTP, clbops.ProtocolHTTPS},
		v1.ProtocolUDP: {"UDP"},
	}[sp.Protocol]
	switch {
	case slices.Contains(allowed, proto):
	case proto == "QUIC":
		return clbops.PortProtocol{}, errors.New("protocol QUIC is not supported; use UDP")
	default:
		return clbops.PortProtocol{}, fmt.Errorf("protocol %q cannot serve a %s port; use one of %s", proto, sp.Protocol, strings.Join(allowed, ", "))
	}
	if len(e.Hosts) > 0 {
		return clbops.PortProtocol{}, errors.New(`"hosts" (rules per domain) is not supported: an HTTP or HTTPS listener gets one default rule for every host and path; route by domain or path with an Ingress controller`)
	}
	if proto != clbops.ProtocolTCPSSL && proto != clbops.ProtocolHTTPS {
		if e.TLS != "" {
			return clbops.PortProtocol{}, fmt.Errorf(`"tls" applies to TCP_SSL and HTTPS only, not %s`, proto)
		}
		return clbops.PortProtocol{Protocol: proto}, nil
	}
	if e.TLS == "" {
		return clbops.PortProtocol{}, fmt.Errorf(`%s needs "tls": the name of a Secret with the certificate id in %s`, proto, secretKeyCertID)
	}
	certID, caID, err := c.certIDs(svc.Namespace, e.TLS)
	if err != nil {
		return clbops.PortProtocol{}, err
	}
	return clbops.PortProtocol{Protocol: proto, CertID: certID, CACertID: caID}, nil
}

// certIDs reads the certificate ids from TKE's certificate Secret. Only
// those two keys are read, and only ids (never key material) appear in
// errors.
func (c *certSecrets) certIDs(namespace, name string) (certID, caID string, err error) {
	var s *v1.Secret
	if c != nil {
		s, err = c.Get(namespace, name)
	} else {
		err = lbkit.ErrNoClient
	}
	if errors.Is(err, lbkit.ErrNoClient) {
		return "", "", fmt.Errorf("the Secret %s/%s cannot be read: the CCM has no Kubernetes client", namespace, name)
	}
	switch {
	case apierrors.IsNotFound(err):
		return "", "", fmt.Errorf("the Secret %s/%s (named by \"tls\") does not exist", namespace, name)
	case err != nil:
		return "", "", fmt.Errorf("reading Secret %s/%s: %v", namespace, name, err)
	}
	certID = strings.TrimSpace(string(s.Data[secretKeyCertID]))
	if certID == "" {
		return "", "", fmt.Errorf("the Secret %s/%s has no %s (the server certificate's id)", namespace, name, secretKeyCertID)
	}
	return certID, strings.TrimSpace(string(s.Data[secretKeyCACertID])), nil
}
