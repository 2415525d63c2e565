package oci

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/lb/lbkit"
	"github.com/ccmkit/ccm/internal/oci/lbops"
)

// TLS on the Load Balancer (issue 14 item 1), read from the public OCI
// CCM's annotations: ssl-ports, tls-secret, tls-backendset-secret and the
// two ssl-config annotations. The Secrets are read here, at each sync of
// the Service (the CCM watches no Secrets; RBAC: get secrets, see
// docs/operations.md), and only their tls.crt, tls.key and ca.crt keys;
// errors name the Service's annotation and the Secret, never key material.

// EventReasonTLSNotOnNLB is the reason of the Warning Event on a Service
// that asks a Network Load Balancer for TLS, which it does not end.
const EventReasonTLSNotOnNLB = "TLSNotSupportedOnNLB"

// Keys of a TLS Secret (kubernetes.io/tls, with the CA certificate under
// ca.crt as cert-manager writes it).
const (
	secretKeyCert = corev1.TLSCertKey       // tls.crt
	secretKeyKey  = corev1.TLSPrivateKeyKey // tls.key
	secretKeyCA   = "ca.crt"
)

// tlsSecrets reads the TLS Secrets (lbkit.SecretReader: nothing until the
// provider has a Kubernetes client, at Initialize).
type tlsSecrets struct {
	lbkit.SecretReader
}

// tlsAnnotations are every annotation of the TLS feature.
var tlsAnnotations = []annotations.Name{annotations.OCILBSSLPorts, annotations.OCILBTLSSecret, annotations.OCILBTLSBackendSetSecret,
	annotations.OCILBListenerSSLConfig, annotations.OCILBBackendSetSSLConfig}

// readTLS reads the TLS annotations and their Secrets into d.TLS. On a
// Network Load Balancer they are ignored with a warning.
func (s *tlsSecrets) readTLS(svc *corev1.Service, d *lbops.Settings, warnings *[]lbkit.Warning) []error {
	var set []string
	for _, n := range tlsAnnotations {
		if n.IsSet(svc) {
			set = append(set, string(n))
		}
	}
	if len(set) == 0 {
		return nil
	}
	if d.Kind == lbops.KindNLB {
		*warnings = append(*warnings, lbkit.Warning{Reason: EventReasonTLSNotOnNLB, Message: fmt.Sprintf(
			"%s: ignored: an OCI Network Load Balancer passes TLS through to the nodes and does not end it; "+
				"set %s: lb to end TLS at the load balancer", strings.Join(set, ", "), annotations.OCILoadBalancerType)})
		return nil
	}
	var errs []error
	ports, err := sslPorts(svc)
	if err != nil {
		errs = append(errs, err)
	}
	t := lbops.TLS{Ports: ports}
	for _, r := range []struct {
		secret, config annotations.Name
		cert           **lbops.Certificate
		ssl            *lbops.SSLConfig
		needsKey       bool
	}{
		{annotations.OCILBTLSSecret, annotations.OCILBListenerSSLConfig, &t.Listener, &t.ListenerSSL, true},
		{annotations.OCILBTLSBackendSetSecret, annotations.OCILBBackendSetSSLConfig, &t.Backend, &t.BackendSSL, false},
	} {
		name, err := r.secret.StringFromService(svc)
		switch {
		case errors.Is(err, annotations.ErrNotSet):
			if r.config.IsSet(svc) {
				errs = append(errs, fmt.Errorf("%s applies with %s, which is not set", r.config, r.secret))
			}
			continue
		case err != nil:
			errs = append(errs, err)
			continue
		}
		if len(ports) == 0 && !annotations.OCILBSSLPorts.IsSet(svc) {
			errs = append(errs, fmt.Errorf("%s is set, but %s names no port to use it on", r.secret, annotations.OCILBSSLPorts))
		}
		if c, err := s.certificate(svc.Namespace, name, r.secret, r.needsKey); err != nil {
			errs = append(errs, err)
		} else {
			*r.cert = c
		}
		if cfg, err := sslConfig(svc, r.config); err != nil {
			errs = append(errs, err)
		} else {
			*r.ssl = cfg
		}
	}
	if len(ports) > 0 && !annotations.OCILBTLSSecret.IsSet(svc) && !annotations.OCILBTLSBackendSetSecret.IsSet(svc) {
		errs = append(errs, fmt.Errorf("%s needs %s (TLS at the listener) or %s (TLS to the nodes), or both",
			annotations.OCILBSSLPorts, annotations.OCILBTLSSecret, annotations.OCILBTLSBackendSetSecret))
	}
	d.TLS = t
	return errs
}

// sslPorts reads ssl-ports: a comma-separated list of the Service's ports.
func sslPorts(svc *corev1.Service) ([]int32, error) {
	raw, err := annotations.OCILBSSLPorts.StringFromService(svc)
	switch {
	case errors.Is(err, annotations.ErrNotSet):
		return nil, nil
	case err != nil:
		return nil, err
	}
	var out []int32
	for _, f := range strings.Split(raw, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 65535 {
			return nil, annotations.OCILBSSLPorts.Invalid(raw, "%q is not a port number (1-65535)", f)
		}
		if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == int32(n) }) {
			return nil, annotations.OCILBSSLPorts.Invalid(raw, "port %d is not a port of the Service", n)
		}
		if !slices.Contains(out, int32(n)) {
			out = append(out, int32(n))
		}
	}
	if len(out) == 0 {
		return nil, annotations.OCILBSSLPorts.Invalid(raw, "names no port")
	}
	return out, nil
}

// sslConfigJSON is the ssl-config annotations' JSON, with the public OCI
// CCM's field names.
type sslConfigJSON struct {
	CipherSuiteName string   `json:"CipherSuiteName"`
	Protocols       []string `json:"Protocols"`
}

// sslProtocols are the protocols OCI's sslConfiguration accepts
// (oci-go-sdk v65.129.0 loadbalancer/ssl_configuration_details.go).
var sslProtocols = []string{"TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"}

func sslConfig(svc *corev1.Service, n annotations.Name) (lbops.SSLConfig, error) {
	raw, err := n.StringFromService(svc)
	switch {
	case errors.Is(err, annotations.ErrNotSet):
		return lbops.SSLConfig{}, nil
	case err != nil:
		return lbops.SSLConfig{}, err
	}
	var v sslConfigJSON
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return lbops.SSLConfig{}, n.Invalid(raw, `want {"CipherSuiteName":"<suite>","Protocols":["TLSv1.2"]}: %v`, err)
	}
	for _, p := range v.Protocols {
		if !slices.Contains(sslProtocols, p) {
			return lbops.SSLConfig{}, n.Invalid(raw, "protocol %q is not one of %s", p, strings.Join(sslProtocols, ", "))
		}
	}
	if v.CipherSuiteName == "oci-customized-ssl-cipher-suite" {
		return lbops.SSLConfig{}, n.Invalid(raw, "%s is reserved by OCI and not accepted as input; name a predefined or custom suite", v.CipherSuiteName)
	}
	return lbops.SSLConfig{CipherSuite: v.CipherSuiteName, Protocols: v.Protocols}, nil
}

// certificate reads the Secret name (named by annotation ann) of
// namespace and checks its PEM: tls.crt with its matching tls.key, and
// ca.crt if present. The listener's (needsKey) must have the pair; the
// backend sets' may have only ca.crt.
func (s *tlsSecrets) certificate(namespace, name string, ann annotations.Name, needsKey bool) (*lbops.Certificate, error) {
	where := fmt.Sprintf("%s: the Secret %s/%s", ann, namespace, name)
	var sec *corev1.Secret
	var err error
	if s != nil {
		sec, err = s.Get(namespace, name)
	} else {
		err = lbkit.ErrNoClient
	}
	if errors.Is(err, lbkit.ErrNoClient) {
		return nil, fmt.Errorf("%s cannot be read: the CCM has no Kubernetes client", where)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("%s does not exist", where)
	case err != nil:
		return nil, fmt.Errorf("reading %s: %v", where, err)
	}
	c := &lbops.Certificate{Secret: namespace + "/" + name, PublicCertificate: string(sec.Data[secretKeyCert]),
		PrivateKey: string(sec.Data[secretKeyKey]), CACertificate: string(sec.Data[secretKeyCA])}
	switch {
	case c.PublicCertificate == "" && (needsKey || c.CACertificate == ""):
		return nil, fmt.Errorf("%s has no %s", where, secretKeyCert)
	case c.PublicCertificate != "" && c.PrivateKey == "":
		return nil, fmt.Errorf("%s has %s but no %s", where, secretKeyCert, secretKeyKey)
	case c.PublicCertificate != "":
		if _, err := tls.X509KeyPair([]byte(c.PublicCertificate), []byte(c.PrivateKey)); err != nil {
			return nil, fmt.Errorf("%s: %s and %s are not a matching PEM certificate and key: %v", where, secretKeyCert, secretKeyKey, err)
		}
	}
	if c.CACertificate != "" && !allCertificates([]byte(c.CACertificate)) {
		return nil, fmt.Errorf("%s: %s is not PEM certificates", where, secretKeyCA)
	}
	return c, nil
}

// allCertificates reports whether data is one or more PEM CERTIFICATE
// blocks and nothing else.
func allCertificates(data []byte) bool {
	n := 0
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return n > 0 && len(bytes.TrimSpace(data)) == 0
		}
		if b.Type != "CERTIFICATE" {
			return false
		}
		n++
	}
}
