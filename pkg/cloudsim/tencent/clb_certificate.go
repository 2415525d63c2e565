package tencent

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// This file is the certificate store behind TCP_SSL listeners: certificates
// are uploaded out of band (on Tencent Cloud, to the SSL certificate
// service or the CLB console; here, the admin API) and listeners name them
// by id in CreateListener / ModifyListener Certificate{SSLMode, CertId,
// CertCaId}. The data plane then terminates TLS with the named certificate.

// Certificate types, as Tencent's SSL certificate service names them
// (UploadCertificate CertificateType: "CA" a client CA certificate, "SVR" a
// server certificate, the default).
const (
	CertTypeServer = "SVR"
	CertTypeCA     = "CA"
)

// SSL modes and client verification of CertificateInput (clb@v1.3.105
// models.go: "SSLMode 认证类型，UNIDIRECTIONAL：单向认证，MUTUAL：双向认证。默认为
// UNIDIRECTIONAL"; "SSLVerifyClient 双向认证时，是否开启客户端认证，ON:开启，
// OPTIONAL:自适应，默认ON").
const (
	sslUnidirectional = "UNIDIRECTIONAL"
	sslMutual         = "MUTUAL"
	verifyOn          = "ON"
	verifyOptional    = "OPTIONAL"
)

// protoTCPSSL is the layer-4 TLS listener: TLS ends at the CLB and the
// targets get plain TCP.
const protoTCPSSL = "TCP_SSL"

// CertificateSpec is a certificate to upload (POST
// /admin/tencent/certificates).
type CertificateSpec struct {
	Name string `json:"name,omitempty"` // default: the id
	Type string `json:"type,omitempty"` // SVR (default) or CA
	// Certificate is PEM: for SVR the server certificate first, then its
	// chain; for CA one or more CA certificates clients are verified with.
	Certificate string `json:"certificate"`
	// Key is the server certificate's PEM private key (SVR only). It is
	// never shown again.
	Key string `json:"key,omitempty"`
}

// Certificate is an uploaded certificate as the admin API shows it; the key
// is never shown.
type Certificate struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	Type     string    `json:"type"`
	Subject  string    `json:"subject"`
	DNSNames []string  `json:"dnsNames,omitempty"`
	IPs      []string  `json:"ips,omitempty"`
	NotAfter time.Time `json:"notAfter"`
	Created  time.Time `json:"created"`
}

// sslCert is one stored certificate.
type sslCert struct {
	id, name, typ string
	pair          tls.Certificate   // SVR
	pool          *x509.CertPool    // CA
	leaf          *x509.Certificate // SVR: the server certificate; CA: the first one
	created       time.Time
}

func (c *sslCert) export() Certificate {
	out := Certificate{ID: c.id, Name: c.name, Type: c.typ, Subject: c.leaf.Subject.String(),
		DNSNames: slices.Clone(c.leaf.DNSNames), NotAfter: c.leaf.NotAfter, Created: c.created}
	for _, ip := range c.leaf.IPAddresses {
		out.IPs = append(out.IPs, ip.String())
	}
	return out
}

// listenerCert is a listener's Certificate, as DescribeListeners answers it.
type listenerCert struct {
	mode, verify, certID, caID string
}

func (lc *listenerCert) toSDK() *clb.CertificateOutput {
	out := &clb.CertificateOutput{SSLMode: common.StringPtr(lc.mode), CertId: common.StringPtr(lc.certID)}
	if lc.mode == sslMutual {
		out.CertCaId = common.StringPtr(lc.caID)
		out.SSLVerifyClient = common.StringPtr(lc.verify)
	}
	return out
}

// parseCertificate validates a certificate to store.
func parseCertificate(typ, certPEM, keyPEM string) (*sslCert, error) {
	c := &sslCert{typ: typ}
	switch typ {
	case CertTypeServer:
		pair, err := tls.X509KeyPair([]byte(certPEM), []byte(keyPEM))
		if err != nil {
			return nil, fmt.Errorf("the certificate and key do not form a key pair: %v", err)
		}
		if pair.Leaf == nil {
			if pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
				return nil, fmt.Errorf("the certificate does not parse: %v", err)
			}
		}
		c.pair, c.leaf = pair, pair.Leaf
	case CertTypeCA:
		if keyPEM != "" {
			return nil, fmt.Errorf("a CA certificate is uploaded without a key")
		}
		c.pool = x509.NewCertPool()
		rest := []byte(certPEM)
		for {
			var b *pem.Block
			if b, rest = pem.Decode(rest); b == nil {
				break
			}
			if b.Type != "CERTIFICATE" {
				continue
			}
			cert, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("a CA certificate does not parse: %v", err)
			}
			c.pool.AddCert(cert)
			if c.leaf == nil {
				c.leaf = cert
			}
		}
		if c.leaf == nil {
			return nil, fmt.Errorf("no PEM CERTIFICATE block")
		}
	default:
		return nil, fmt.Errorf("type must be %s or %s, got %q", CertTypeServer, CertTypeCA, typ)
	}
	return c, nil
}

// UploadCertificate stores a certificate and returns it with its id.
func (l *CLB) UploadCertificate(spec CertificateSpec) (Certificate, error) {
	typ := spec.Type
	if typ == "" {
		typ = CertTypeServer
	}
	c, err := parseCertificate(typ, spec.Certificate, spec.Key)
	if err != nil {
		return Certificate{}, fmt.Errorf("%w: uploading certificate %q: %v", core.ErrInvalid, spec.Name, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.addCertLocked(c, spec.Name)
	return c.export(), nil
}

// addCertLocked gives c an id (and its name, by default the id) and stores
// it. Callers hold l.mu.
func (l *CLB) addCertLocked(c *sslCert, name string) {
	c.id = l.newCertIDLocked()
	c.name = name
	if c.name == "" {
		c.name = c.id
	}
	c.created = l.core.Now()
	l.certs[c.id] = c
}

// newCertIDLocked returns an unused certificate id: 8 letters and digits,
// the shape of Tencent's certificate ids (e.g. "8u8DII0l"); the exact
// alphabet is cloudsim's choice.
func (l *CLB) newCertIDLocked() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	for {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		for i := range b {
			b[i] = alphabet[int(b[i])%len(alphabet)]
		}
		if l.certs[string(b)] == nil {
			return string(b)
		}
	}
}

// Certificates lists the stored certificates by id.
func (l *CLB) Certificates() []Certificate {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Certificate, 0, len(l.certs))
	for _, c := range l.certs {
		out = append(out, c.export())
	}
	slices.SortFunc(out, func(a, b Certificate) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// DeleteCertificate removes a certificate no listener uses.
func (l *CLB) DeleteCertificate(id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.certs[id] == nil {
		return fmt.Errorf("certificate %w: %q", core.ErrNotFound, id)
	}
	for _, lb := range l.lbs {
		for _, li := range lb.listeners {
			if li.cert != nil && (li.cert.certID == id || li.cert.caID == id) {
				return fmt.Errorf("%w: certificate %q is used by listener %s of %s", core.ErrInvalid, id, li.id, lb.id)
			}
		}
	}
	delete(l.certs, id)
	return nil
}

// errCertNotFound: the SDK documents no certificate-specific code for
// CreateListener or ModifyListener (clb@v1.3.105 errors.go has none; both
// actions list InvalidParameter in client.go), so an unknown or mistyped
// id answers InvalidParameter; the message is cloudsim's choice.
func errCertNotFound(param, id, typ string) *Error {
	return Errorf("InvalidParameter", "`%s` %q is not a %s certificate of this account: it does not exist or has another type.", param, id, typ)
}

// listenerCertLocked validates a listener's Certificate for protocol proto
// and returns it; an inline certificate (CertContent/CertKey, CertCaContent
// instead of ids) is stored and named by its new id, as the API does.
// Callers hold l.mu.
func (l *CLB) listenerCertLocked(proto string, in *clb.CertificateInput, multi bool) (*listenerCert, *Error) {
	if multi {
		return nil, Errorf("UnsupportedOperation", "cloudsim does not emulate `MultiCertInfo`; give one certificate in `Certificate`.")
	}
	if proto != protoTCPSSL && proto != protoHTTPS {
		if in != nil {
			return nil, Errorf("InvalidParameter", "`Certificate` applies only to HTTPS, TCP_SSL and QUIC listeners, not %s.", proto)
		}
		return nil, nil
	}
	if in == nil {
		return nil, Errorf("MissingParameter", "A %s listener needs `Certificate` (or `MultiCertInfo`).", proto)
	}
	lc := &listenerCert{mode: sslUnidirectional, verify: verifyOn}
	if v := ptrStr(in.SSLMode); v != "" {
		if v != sslUnidirectional && v != sslMutual {
			return nil, Errorf("InvalidParameterValue", "`Certificate.SSLMode` must be %s or %s, got `%s`.", sslUnidirectional, sslMutual, v)
		}
		lc.mode = v
	}
	if v := ptrStr(in.SSLVerifyClient); v != "" {
		if v != verifyOn && v != verifyOptional {
			return nil, Errorf("InvalidParameterValue", "`Certificate.SSLVerifyClient` must be %s or %s, got `%s`.", verifyOn, verifyOptional, v)
		}
		lc.verify = v
	}
	id, e := l.certRefLocked("Certificate.CertId", CertTypeServer, in.CertId, in.CertName, in.CertContent, in.CertKey)
	if e != nil {
		return nil, e
	}
	lc.certID = id
	if lc.mode == sslMutual {
		if lc.caID, e = l.certRefLocked("Certificate.CertCaId", CertTypeCA, in.CertCaId, in.CertCaName, in.CertCaContent, nil); e != nil {
			return nil, e
		}
	}
	return lc, nil
}

// certRefLocked resolves one certificate of a Certificate parameter: an id
// that must name a stored certificate of type typ, or, without an id, the
// content to upload ("如果不填写此项则必须上传证书", CertificateInput.CertId).
func (l *CLB) certRefLocked(param, typ string, id, name, content, key *string) (string, *Error) {
	if v := ptrStr(id); v != "" {
		if c := l.certs[v]; c == nil || c.typ != typ {
			return "", errCertNotFound(param, v, typ)
		}
		return v, nil
	}
	if ptrStr(content) == "" || ptrStr(name) == "" || (typ == CertTypeServer && ptrStr(key) == "") {
		what := "CertContent, CertKey and CertName"
		if typ == CertTypeCA {
			what = "CertCaContent and CertCaName"
		}
		return "", Errorf("MissingParameter", "`%s` is missing: give it, or %s to upload the certificate.", param, what)
	}
	c, err := parseCertificate(typ, ptrStr(content), ptrStr(key))
	if err != nil {
		return "", Errorf("InvalidParameterValue", "The certificate for `%s` is not valid: %v.", param, err)
	}
	l.addCertLocked(c, ptrStr(name))
	return c.id, nil
}

// planeTLSLocked is what the data plane terminates a listener's TLS with.
// Callers hold l.mu.
func (l *CLB) planeTLSLocked(lc *listenerCert) *dataplane.TLS {
	srv := l.certs[lc.certID]
	if srv == nil {
		return nil // cannot happen: a certificate in use cannot be deleted
	}
	out := &dataplane.TLS{Certificate: srv.pair}
	if lc.mode == sslMutual {
		if ca := l.certs[lc.caID]; ca != nil {
			out.ClientCAs = ca.pool
			out.ClientOptional = lc.verify == verifyOptional
		}
	}
	return out
}

// portFamily is the port space a listener protocol takes: the TCP-based
// listeners (TCP, TCP_SSL, HTTP, HTTPS) share one, so two of them cannot
// listen on the same port, while UDP (and QUIC, over UDP) have the other.
// The SDK does not say so; it is cloudsim's reading of one socket per
// transport port, and it makes a TCP -> TCP_SSL change on one port a
// delete before a create.
func portFamily(proto string) string {
	switch proto {
	case protoUDP, "QUIC":
		return protoUDP
	}
	return protoTCP
}

// registerCertificateAdmin adds the certificate store to the admin API:
//
//	GET    /admin/tencent/certificates       every certificate (never a key)
//	POST   /admin/tencent/certificates       upload one (CertificateSpec); answers its id
//	DELETE /admin/tencent/certificates/{id}  delete one no listener uses
func (l *CLB) registerCertificateAdmin() {
	const base = "/admin/tencent/certificates"
	h := l.core.HandleAdminFunc
	h("GET "+base, func(*http.Request) (int, any, error) { return http.StatusOK, l.Certificates(), nil })
	h("POST "+base, func(r *http.Request) (int, any, error) {
		var in CertificateSpec
		if err := core.DecodeAdmin(r, &in); err != nil {
			return 0, nil, err
		}
		out, err := l.UploadCertificate(in)
		return http.StatusCreated, out, err
	})
	h("DELETE "+base+"/{id}", func(r *http.Request) (int, any, error) {
		return http.StatusNoContent, nil, l.DeleteCertificate(r.PathValue("id"))
	})
}
