package oci

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// Certificates of a Load Balancer (CreateCertificate, ListCertificates,
// DeleteCertificate) and the sslConfiguration of its listeners and backend
// sets. A certificate bundle is immutable and its name unique on its load
// balancer (oci-go-sdk v65.129.0 loadbalancer/create_certificate_details.go,
// CertificateName: "It must be unique and it cannot be changed"), so a
// rotation is a new certificate, the listener moved to it, then the old one
// deleted.

// lbCertificate is one certificate bundle of a load balancer: the model
// the API shows (never the key) and what the data plane serves with.
type lbCertificate struct {
	model loadbalancer.Certificate
	// pair is the public certificate (its chain, then the CA certificate)
	// with its key; nil for a bundle that holds only a CA certificate.
	pair *tls.Certificate
	// roots are the bundle's CA certificates, nil if it has none: what a
	// listener verifies clients against and a backend set verifies
	// backends against (verifyPeerCertificate).
	roots *x509.CertPool
}

// maxCertificateNameLen bounds a certificate name: the SDK states no
// limit, so cloudsim takes the 255 of listener and backend set names.
const maxCertificateNameLen = 255

// sslProtocols are the TLS versions sslConfiguration.protocols may name
// (oci-go-sdk v65.129.0 loadbalancer/ssl_configuration_details.go,
// Protocols: "TLSv1, TLSv1.1, TLSv1.2, TLSv1.3"; "If this field is not
// specified, TLSv1.2 is the default").
var sslProtocols = map[string]uint16{
	"TLSv1": tls.VersionTLS10, "TLSv1.1": tls.VersionTLS11, "TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13,
}

const defaultSSLProtocol = "TLSv1.2"

// Predefined cipher suites (oci-go-sdk v65.129.0
// loadbalancer/ssl_cipher_suite_details.go, Name). cloudsim emulates no
// custom suites (CreateLoadBalancer refuses sslCipherSuites), so a
// configuration names one of these; "oci-customized-ssl-cipher-suite" is
// reserved and "not accepted as valid input" (ssl_configuration_details.go).
// The ciphers themselves are not applied: Go's TLS stack picks them
// (cloudsim's choice).
var predefinedCipherSuites = []string{
	"oci-default-ssl-cipher-suite-v1", "oci-modern-ssl-cipher-suite-v1", "oci-compatible-ssl-cipher-suite-v1",
	"oci-wider-compatible-ssl-cipher-suite-v1", "oci-default-http2-ssl-cipher-suite-v1",
	"oci-default-http2-tls-13-ssl-cipher-suite-v1", "oci-default-http2-tls-12-13-ssl-cipher-suite-v1",
	"oci-tls-13-recommended-ssl-cipher-suite-v1", "oci-tls-12-13-wider-ssl-cipher-suite-v1",
	"oci-tls-11-12-13-wider-ssl-cipher-suite-v1",
}

// defaultCipherSuite is the suite of a configuration that names none
// (ssl_configuration_details.go, CipherSuiteName: "If this field is not
// specified, the default is `oci-default-ssl-cipher-suite-v1`").
const defaultCipherSuite = "oci-default-ssl-cipher-suite-v1"

// defaultVerifyDepth is verifyDepth when the request gives none: the SDK
// names no default, cloudsim takes 1. The depth is shown, not enforced.
const defaultVerifyDepth = 1

func (d *Dialect) routeCertificates(p string) {
	const svc = "loadbalancer"
	d.mux.Handle("POST "+p+"/{loadBalancerId}/certificates", d.route(svc, "CreateCertificate", true, d.createLBCertificate))
	d.mux.Handle("GET "+p+"/{loadBalancerId}/certificates", d.route(svc, "ListCertificates", false, d.listLBCertificates))
	d.mux.Handle("DELETE "+p+"/{loadBalancerId}/certificates/{certificateName}", d.route(svc, "DeleteCertificate", true, d.deleteLBCertificate))
}

// newLBCertificate validates a certificate bundle. Names take
// "alphanumeric characters, dashes, and underscores" (CertificateName in
// create_certificate_details.go). A public certificate needs its private
// key, which must match it, and a bundle holds a public certificate or a
// CA certificate or both (cloudsim's choice of checks; OCI's messages are
// not documented). Encrypted keys (passphrase) are not emulated.
func newLBCertificate(in loadbalancer.CertificateDetails) (lbCertificate, error) {
	name := strOr(in.CertificateName)
	where := "certificate " + name
	switch {
	case name == "":
		return lbCertificate{}, missing("certificateName")
	case len(name) > maxCertificateNameLen || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "":
		return lbCertificate{}, badRequest("The certificateName %q must be 1 to %d alphanumeric characters, dashes and underscores.", name, maxCertificateNameLen)
	case in.Passphrase != nil && *in.Passphrase != "":
		return lbCertificate{}, badRequest("%s: cloudsim does not emulate encrypted private keys (passphrase).", where)
	case strOr(in.PublicCertificate) == "" && strOr(in.CaCertificate) == "":
		return lbCertificate{}, badRequest("%s: give a publicCertificate (with its privateKey), a caCertificate, or both.", where)
	case (strOr(in.PublicCertificate) == "") != (strOr(in.PrivateKey) == ""):
		return lbCertificate{}, badRequest("%s: a publicCertificate and its privateKey go together.", where)
	}
	out := lbCertificate{model: loadbalancer.Certificate{CertificateName: common.String(name),
		PublicCertificate: common.String(strOr(in.PublicCertificate)), CaCertificate: common.String(strOr(in.CaCertificate))}}
	var caDER [][]byte
	if ca := strOr(in.CaCertificate); ca != "" {
		certs, err := pemCertificates(ca)
		if err != nil {
			return lbCertificate{}, badRequest("%s: the caCertificate is not PEM certificates: %v.", where, err)
		}
		out.roots = x509.NewCertPool()
		for _, c := range certs {
			out.roots.AddCert(c)
			caDER = append(caDER, c.Raw)
		}
	}
	if pub := strOr(in.PublicCertificate); pub != "" {
		if _, err := pemCertificates(pub); err != nil {
			return lbCertificate{}, badRequest("%s: the publicCertificate is not PEM certificates: %v.", where, err)
		}
		pair, err := tls.X509KeyPair([]byte(pub), []byte(strOr(in.PrivateKey)))
		if err != nil {
			return lbCertificate{}, badRequest("%s: the privateKey does not match the publicCertificate, or is not a PEM key: %v.", where, err)
		}
		// The load balancer sends the CA ("interim") certificates after the
		// public one, completing the chain for its clients.
		pair.Certificate = append(pair.Certificate, caDER...)
		out.pair = &pair
	}
	return out, nil
}

// pemCertificates parses one or more PEM CERTIFICATE blocks.
func pemCertificates(s string) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	rest := []byte(s)
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, badRequest("unexpected PEM block %q", block.Type)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, badRequest("no PEM CERTIFICATE block")
	}
	return out, nil
}

// lbSSLConfig turns a request's sslConfiguration into the model, with the
// API's defaults. The certificate it names is checked against the load
// balancer by checkSSLReferences.
func lbSSLConfig(where string, in *loadbalancer.SslConfigurationDetails) (*loadbalancer.SslConfiguration, error) {
	if in == nil {
		return nil, nil
	}
	where += ".sslConfiguration"
	if len(in.CertificateIds) > 0 || len(in.TrustedCertificateAuthorityIds) > 0 {
		return nil, badRequest("%s: cloudsim does not emulate the OCI Certificates service (certificateIds, trustedCertificateAuthorityIds); name a load balancer certificate (certificateName).", where)
	}
	if strOr(in.CertificateName) == "" {
		return nil, missing(where + ".certificateName")
	}
	protocols := slices.Clone(in.Protocols)
	if len(protocols) == 0 {
		protocols = []string{defaultSSLProtocol}
	}
	for _, p := range protocols {
		if _, ok := sslProtocols[p]; !ok {
			return nil, badRequest("%s.protocols: %q is not one of TLSv1, TLSv1.1, TLSv1.2, TLSv1.3.", where, p)
		}
	}
	suite := strOr(in.CipherSuiteName)
	if suite == "" {
		suite = defaultCipherSuite
	}
	if !slices.Contains(predefinedCipherSuites, suite) {
		return nil, Errorf(http.StatusNotFound, CodeNotAuthorizedOrNotFound,
			"%s.cipherSuiteName: no cipher suite %q (cloudsim knows the predefined ones: %s).", where, suite, strings.Join(predefinedCipherSuites, ", "))
	}
	depth := defaultVerifyDepth
	if in.VerifyDepth != nil {
		if *in.VerifyDepth < 1 || *in.VerifyDepth > 10 { // cloudsim's choice of range
			return nil, badRequest("%s.verifyDepth %d must be from 1 to 10.", where, *in.VerifyDepth)
		}
		depth = *in.VerifyDepth
	}
	return &loadbalancer.SslConfiguration{
		CertificateName: in.CertificateName, Protocols: protocols, CipherSuiteName: common.String(suite),
		VerifyDepth: common.Int(depth), VerifyPeerCertificate: boolOr(in.VerifyPeerCertificate),
		HasSessionResumption: boolOr(in.HasSessionResumption), ServerOrderPreference: loadbalancer.SslConfigurationServerOrderPreferenceEnum(in.ServerOrderPreference),
	}, nil
}

// checkSSLReferences checks that every listener's and backend set's
// certificate exists on the load balancer and can do its job: a listener
// serves its public certificate (it needs one, with its key), a backend
// set that verifies its backends needs CA certificates. An unknown name is
// 404, as for a backend set the listener names (cloudsim's choice of code).
func checkSSLReferences(b *balancer) error {
	known := func(what, owner, name string) (lbCertificate, error) {
		c, found := b.certificates[name]
		if !found {
			return c, Errorf(http.StatusNotFound, CodeNotAuthorizedOrNotFound,
				"The %s %s names the certificate %s, which load balancer %s does not have.", what, owner, name, b.id)
		}
		return c, nil
	}
	for _, name := range slices.Sorted(maps.Keys(b.listeners)) {
		ssl := b.listeners[name].SslConfiguration
		if ssl == nil {
			continue
		}
		c, err := known("listener", name, *ssl.CertificateName)
		if err != nil {
			return err
		}
		if c.pair == nil {
			return badRequest("The listener %s names the certificate %s, which has no publicCertificate and privateKey to serve.", name, *ssl.CertificateName)
		}
		if *ssl.VerifyPeerCertificate && c.roots == nil {
			return badRequest("The listener %s verifies client certificates, but its certificate %s has no caCertificate.", name, *ssl.CertificateName)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(b.backendSets)) {
		ssl := b.backendSets[name].SslConfiguration
		if ssl == nil {
			continue
		}
		c, err := known("backend set", name, *ssl.CertificateName)
		if err != nil {
			return err
		}
		if *ssl.VerifyPeerCertificate && c.roots == nil {
			return badRequest("The backend set %s verifies its backends, but its certificate %s has no caCertificate.", name, *ssl.CertificateName)
		}
	}
	return nil
}

// certificateUser refuses to delete a certificate a listener or a backend
// set uses (cloudsim's choice of code: 400, as for a backend set in use).
func certificateUser(b *balancer, name string) error {
	for _, ln := range slices.Sorted(maps.Keys(b.listeners)) {
		if ssl := b.listeners[ln].SslConfiguration; ssl != nil && *ssl.CertificateName == name {
			return badRequest("The certificate %s is used by listener %s; change the listener first.", name, ln)
		}
	}
	for _, bn := range slices.Sorted(maps.Keys(b.backendSets)) {
		if ssl := b.backendSets[bn].SslConfiguration; ssl != nil && *ssl.CertificateName == name {
			return badRequest("The certificate %s is used by backend set %s; change the backend set first.", name, bn)
		}
	}
	return nil
}

// certificateModels is the load balancer's certificates as the API shows
// them (without keys).
func certificateModels(b *balancer) map[string]loadbalancer.Certificate {
	out := make(map[string]loadbalancer.Certificate, len(b.certificates))
	for name, c := range b.certificates {
		out[name] = c.model
	}
	return out
}

func (d *Dialect) createLBCertificate(c *call) (*reply, error) {
	id, err := pathID(c, "loadBalancerId", "loadbalancer")
	if err != nil {
		return nil, err
	}
	var req loadbalancer.CreateCertificateDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	cert, err := newLBCertificate(loadbalancer.CertificateDetails(req))
	if err != nil {
		return nil, err
	}
	name := *req.CertificateName
	build := func(b *balancer) error {
		if _, dup := b.certificates[name]; dup {
			return Errorf(http.StatusConflict, CodeAlreadyExists, "The certificate %s already exists in load balancer %s.", name, id)
		}
		if b.certificates == nil {
			b.certificates = map[string]lbCertificate{}
		}
		b.certificates[name] = cert
		return nil
	}
	return d.mutate(c, kindLB, id, "CreateCertificate", "", "UPDATED", checkedChange(build))
}

func (d *Dialect) listLBCertificates(c *call) (*reply, error) {
	b, err := d.balancerAt(c, kindLB)
	if err != nil {
		return nil, err
	}
	items := []loadbalancer.Certificate{}
	for _, name := range slices.Sorted(maps.Keys(b.certificates)) {
		items = append(items, b.certificates[name].model)
	}
	// The real operation is not paginated (no page or limit parameter in
	// list_certificates_request_response.go).
	return ok(items).with("etag", b.etag()), nil
}

func (d *Dialect) deleteLBCertificate(c *call) (*reply, error) {
	return deleteChild(d, c, kindLB, "certificateName", "certificate", "DeleteCertificate", "",
		func(b *balancer) map[string]lbCertificate { return b.certificates }, certificateUser)
}

// createCertificates adds a new load balancer's inline certificates
// (CreateLoadBalancerDetails.certificates, keyed by name).
func createCertificates(b *balancer, in map[string]loadbalancer.CertificateDetails) error {
	b.certificates = map[string]lbCertificate{}
	for _, key := range slices.Sorted(maps.Keys(in)) {
		det := in[key]
		if strOr(det.CertificateName) != key {
			return badRequest("certificates[%s]: the key must be the certificateName (%q).", key, strOr(det.CertificateName))
		}
		c, err := newLBCertificate(det)
		if err != nil {
			return err
		}
		b.certificates[key] = c
	}
	return nil
}

// withBackendSet is a copy of b with the backend set bs (added or
// replacing the one of its name), to check its certificate.
func withBackendSet(b *balancer, bs loadbalancer.BackendSet) *balancer {
	next := b.clone()
	next.backendSets[*bs.Name] = bs
	return next
}

// checkBackendSetSSL checks a new backend set's certificate against the
// load balancer as it is now. A 404 for the load balancer is left to the
// creation, which answers it.
func (d *Dialect) checkBackendSetSSL(id string, bs loadbalancer.BackendSet) error {
	if bs.SslConfiguration == nil {
		return nil
	}
	b, err := d.lbs.get(id, kindLB, d.core.Now(), d.retention)
	if err != nil {
		return nil
	}
	return checkSSLReferences(withBackendSet(b, bs))
}

// planeTLS makes a data-plane listener terminate TLS with its listener's
// certificate, and re-encrypt to the backends when the backend set has an
// sslConfiguration. Protocols bound the versions; the cipher suite is not
// applied (see predefinedCipherSuites). A backend set that verifies its
// peers checks the backend's chain against the certificate's CA
// certificates, not its name (backends are addressed by IP; cloudsim's
// choice); one that does not verify accepts any certificate. The bundle's
// public certificate, if any, is the client certificate backends may ask
// for.
func planeTLS(b *balancer, l loadbalancer.Listener, bs loadbalancer.BackendSet, out *dataplane.Listener) {
	if ssl := l.SslConfiguration; ssl != nil {
		if c, found := b.certificates[*ssl.CertificateName]; found && c.pair != nil {
			t := &dataplane.TLS{Certificate: *c.pair}
			t.MinVersion, t.MaxVersion = versionRange(ssl.Protocols)
			if *ssl.VerifyPeerCertificate {
				t.ClientCAs = c.roots
			}
			out.TLS = t
		}
	}
	if ssl := bs.SslConfiguration; ssl != nil {
		c, found := b.certificates[*ssl.CertificateName]
		if !found {
			return
		}
		conf := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // verified below when verifyPeerCertificate, by chain only
		conf.MinVersion, conf.MaxVersion = versionRange(ssl.Protocols)
		if c.pair != nil {
			conf.Certificates = []tls.Certificate{*c.pair}
		}
		if *ssl.VerifyPeerCertificate {
			roots := c.roots
			conf.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
				return verifyChain(raw, roots)
			}
		}
		out.BackendTLS = conf
	}
}

// verifyChain verifies a peer's certificates (leaf first) against roots,
// ignoring the name.
func verifyChain(raw [][]byte, roots *x509.CertPool) error {
	if len(raw) == 0 {
		return errors.New("the backend sent no certificate")
	}
	certs := make([]*x509.Certificate, len(raw))
	for i, r := range raw {
		c, err := x509.ParseCertificate(r)
		if err != nil {
			return fmt.Errorf("the backend's certificate %d: %w", i, err)
		}
		certs[i] = c
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	_, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	return err
}

// versionRange is the lowest and highest TLS version of protocols.
func versionRange(protocols []string) (lo, hi uint16) {
	for _, p := range protocols {
		v := sslProtocols[p]
		if lo == 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
	}
	return lo, hi
}
