package lbops

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
)

// TLS on an OCI Load Balancer (issue 14 item 1): listeners on the
// Service's ssl-ports end TLS with the certificate of its tls-secret, and
// their backend sets speak TLS to the nodes with the certificate of its
// tls-backendset-secret. A certificate is a bundle on the load balancer,
// immutable and unique by name (oci-go-sdk v65.129.0
// loadbalancer/create_certificate_details.go), so ours are named by a hash
// of their content: a changed Secret is a new name, and a rotation is
// create the new certificate, move the listeners and backend sets to it,
// then delete the old one, with no moment without a certificate.

// TLS is the Service's TLS settings. The zero value is no TLS.
type TLS struct {
	// Ports are the listener ports that end TLS (ssl-ports).
	Ports []int32
	// Listener is the certificate the listeners on Ports serve
	// (tls-secret); nil: they do not end TLS.
	Listener *Certificate
	// Backend is the certificate the backend sets of the listeners on
	// Ports use toward the nodes (tls-backendset-secret): its CA
	// certificate verifies the nodes, its public certificate is the client
	// certificate; nil: plain TCP to the nodes.
	Backend *Certificate
	// ListenerSSL and BackendSSL are the cipher suite and protocols
	// (listener-ssl-config, backendset-ssl-config); empty fields take the
	// defaults below.
	ListenerSSL, BackendSSL SSLConfig
}

// Certificate is a certificate bundle read from a Secret, in PEM.
type Certificate struct {
	// Secret is namespace/name of the Secret it came from, for messages.
	Secret            string
	PublicCertificate string
	PrivateKey        string
	CACertificate     string
}

// SSLConfig is what a Service chooses of an sslConfiguration.
type SSLConfig struct {
	CipherSuite string
	Protocols   []string
}

// Defaults, as the public OCI CCM documents them: a listener uses
// oci-default-ssl-cipher-suite-v1 and a backend set
// oci-wider-compatible-ssl-cipher-suite-v1 when no ssl-config annotation
// names one (docs.oracle.com, "Defining Kubernetes Services of Type
// LoadBalancer"); TLSv1.2 is OCI's default protocol
// (ssl_configuration_details.go). They are sent, not left to OCI, so
// that removing the annotation goes back to them.
const (
	DefaultListenerCipherSuite   = "oci-default-ssl-cipher-suite-v1"
	DefaultBackendSetCipherSuite = "oci-wider-compatible-ssl-cipher-suite-v1"
	DefaultSSLProtocol           = "TLSv1.2"
)

// certificatePrefix starts the names of the certificates we create; only
// such names are ever deleted.
const certificatePrefix = "ccmkit-"

// Name is the certificate's name on the load balancer: the prefix and a
// hash of its content (OCI names take letters, digits, - and _).
func (c *Certificate) Name() string {
	h := sha256.New()
	for _, s := range []string{c.PublicCertificate, c.PrivateKey, c.CACertificate} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return certificatePrefix + hex.EncodeToString(h.Sum(nil))[:20]
}

// sslModel is what we manage of an sslConfiguration.
type sslModel struct {
	Certificate string
	CipherSuite string
	Protocols   []string // sorted
	VerifyPeer  bool
}

func equalSSL(want, got *sslModel) bool {
	if want == nil || got == nil {
		return want == got
	}
	return want.Certificate == got.Certificate && want.CipherSuite == got.CipherSuite &&
		slices.Equal(want.Protocols, got.Protocols) && want.VerifyPeer == got.VerifyPeer
}

func newSSLModel(cert *Certificate, cfg SSLConfig, defaultSuite string) *sslModel {
	m := &sslModel{Certificate: cert.Name(), CipherSuite: cfg.CipherSuite, Protocols: slices.Sorted(slices.Values(cfg.Protocols))}
	if m.CipherSuite == "" {
		m.CipherSuite = defaultSuite
	}
	if len(m.Protocols) == 0 {
		m.Protocols = []string{DefaultSSLProtocol}
	}
	return m
}

// withTLS adds the sslConfigurations the Service's TLS asks for to the
// listeners and backend sets of a Load Balancer (an NLB does not end TLS).
func withTLS(d *Desired, ls []listenerModel, bss []backendSetModel) {
	t := d.TLS
	if d.Kind != KindLB || len(t.Ports) == 0 {
		return
	}
	sslSets := map[string]bool{}
	for i := range ls {
		if !slices.Contains(t.Ports, int32(ls[i].Port)) {
			continue
		}
		sslSets[ls[i].BackendSet] = true
		if t.Listener != nil {
			ls[i].SSL = newSSLModel(t.Listener, t.ListenerSSL, DefaultListenerCipherSuite)
		}
	}
	if t.Backend == nil {
		return
	}
	for i := range bss {
		if sslSets[bss[i].Name] {
			bss[i].SSL = newSSLModel(t.Backend, t.BackendSSL, DefaultBackendSetCipherSuite)
			bss[i].SSL.VerifyPeer = t.Backend.CACertificate != ""
			// A backend set with TLS health-checks over TLS unless told
			// not to (oci-go-sdk v65.129.0 health_checker_details.go,
			// IsForcePlainText); kube-proxy's health port and the
			// healthCheckNodePort answer plain HTTP, only the Service's
			// own NodePort (port 0 in the spec) speaks the nodes' TLS.
			bss[i].Health.ForcePlainText = d.HealthCheck.Port != 0 || bss[i].Health.Port == kubeProxyHealthPort
		}
	}
}

// wantedCertificates are the certificates the listeners and backend sets
// name, by name.
func wantedCertificates(d *Desired, ls []listenerModel, bss []backendSetModel) map[string]*Certificate {
	out := map[string]*Certificate{}
	for _, l := range ls {
		if l.SSL != nil {
			out[l.SSL.Certificate] = d.TLS.Listener
		}
	}
	for _, bs := range bss {
		if bs.SSL != nil {
			out[bs.SSL.Certificate] = d.TLS.Backend
		}
	}
	return out
}

// withCertificates wraps a plan of listeners and backend sets with the
// certificate writes: the missing certificates are created first, so that
// the listeners can name them; ours that nothing names any more are
// deleted last, once nothing uses them.
func withCertificates(a *actual, d *Desired, ls []listenerModel, bss []backendSetModel, steps []step) []step {
	want := wantedCertificates(d, ls, bss)
	var creates, deletes []step
	for _, name := range sortedKeys(want) {
		if !a.Certificates[name] {
			creates = append(creates, step{verb: verbCreate, what: objCertificate, name: name, cert: want[name]})
		}
	}
	// A certificate a listener or backend set we keep (not ours, or one
	// the plan leaves) still names cannot go.
	inUse := map[string]bool{}
	for _, l := range a.Listeners {
		if l.SSL != nil && !ownedName(l.Name) {
			inUse[l.SSL.Certificate] = true
		}
	}
	for _, bs := range a.BackendSets {
		if bs.SSL != nil && !ownedName(bs.Name) {
			inUse[bs.SSL.Certificate] = true
		}
	}
	for _, name := range sortedKeys(a.Certificates) {
		if strings.HasPrefix(name, certificatePrefix) && want[name] == nil && !inUse[name] {
			deletes = append(deletes, step{verb: verbDelete, what: objCertificate, name: name})
		}
	}
	if len(creates) == 0 && len(deletes) == 0 {
		return steps
	}
	return append(append(creates, steps...), deletes...)
}

// lbSSLDetails is the API's sslConfiguration of a model.
func lbSSLDetails(m *sslModel) *loadbalancer.SslConfigurationDetails {
	if m == nil {
		return nil
	}
	return &loadbalancer.SslConfigurationDetails{
		CertificateName: common.String(m.Certificate), CipherSuiteName: common.String(m.CipherSuite),
		Protocols: m.Protocols, VerifyPeerCertificate: common.Bool(m.VerifyPeer),
	}
}

// sslOf reads an sslConfiguration into the model.
func sslOf(c *loadbalancer.SslConfiguration) *sslModel {
	if c == nil {
		return nil
	}
	return &sslModel{Certificate: deref(c.CertificateName), CipherSuite: deref(c.CipherSuiteName),
		Protocols: slices.Sorted(slices.Values(c.Protocols)), VerifyPeer: deref(c.VerifyPeerCertificate)}
}

// lbCertificateDetails is the API's form of a certificate.
func lbCertificateDetails(name string, c *Certificate) loadbalancer.CertificateDetails {
	d := loadbalancer.CertificateDetails{CertificateName: common.String(name)}
	if c.PublicCertificate != "" {
		d.PublicCertificate, d.PrivateKey = common.String(c.PublicCertificate), common.String(c.PrivateKey)
	}
	if c.CACertificate != "" {
		d.CaCertificate = common.String(c.CACertificate)
	}
	return d
}
