package oci

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // the SDK's older federation keyId names the leaf by its SHA-1 fingerprint
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// Instance identities: every OCI instance has an X.509 certificate, issued
// by an OCI intermediate CA and rotated by OCI, whose private key the
// instance metadata service hands to software on the instance
// (/opc/v2/identity/{cert,key,intermediate}.pem, metadata.go). The
// federation endpoint (federation.go) exchanges it for a security token.
// Sources: oci-go-sdk common/auth/instance_principal_key_provider.go (the
// paths), utils.go extractTenancyIDFromCertificate (the tenancy is a
// subject attribute "opc-tenant:<tenancy OCID>"), and OCI's "Calling
// Services from an Instance" (each instance has its own identity, its
// certificates created, assigned and rotated by OCI).
//
// cloudsim's choices: one self-signed root and one intermediate per
// dialect, made on first use (RSA key generation is slow, and most runs
// never need them); a leaf per instance valid for a year and never
// rotated; the subject's other attributes (opc-certtype, opc-instance,
// opc-compartment) as real instance certificates carry them.
type identities struct {
	mu sync.Mutex

	root, inter       *x509.Certificate
	interKey, tokKey  *rsa.PrivateKey // tokKey signs security tokens
	interPEM          []byte
	roots             *x509.CertPool
	leaves            map[string]*leaf // by instance OCID
	metadataFor       string           // the instance the metadata service answers for
	metadataTenancy   string
	securityTokenLife time.Duration
}

// leaf is one instance's identity certificate and key.
type leaf struct {
	instanceID, compartmentID, tenancy string
	cert                               *x509.Certificate
	certPEM, keyPEM                    []byte
}

func newIdentities(tokenLifetime time.Duration) *identities {
	return &identities{leaves: map[string]*leaf{}, securityTokenLife: tokenLifetime}
}

// caLocked makes the CA chain and the token signing key on first use.
func (ids *identities) caLocked() error {
	if ids.root != nil {
		return nil
	}
	rootKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	now := time.Now()
	rootTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cloudsim OCI root CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	rootDER, err := x509.CreateCertificate(rand.Reader, rootTmpl, rootTmpl, &rootKey.PublicKey, rootKey)
	if err != nil {
		return err
	}
	root, _ := x509.ParseCertificate(rootDER)
	interKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	interTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "cloudsim OCI intermediate CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(5, 0, 0),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	interDER, err := x509.CreateCertificate(rand.Reader, interTmpl, root, &interKey.PublicKey, rootKey)
	if err != nil {
		return err
	}
	inter, _ := x509.ParseCertificate(interDER)
	tokKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	ids.root, ids.inter, ids.interKey, ids.tokKey = root, inter, interKey, tokKey
	ids.interPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: interDER})
	ids.roots = x509.NewCertPool()
	ids.roots.AddCert(root)
	return nil
}

// leafLocked returns the instance's identity, issued on first use.
func (ids *identities) leafLocked(instanceID, compartmentID, tenancy string) (*leaf, error) {
	if l := ids.leaves[instanceID]; l != nil && l.tenancy == tenancy && l.compartmentID == compartmentID {
		return l, nil
	}
	if err := ids.caLocked(); err != nil {
		return nil, err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject: pkix.Name{CommonName: instanceID, OrganizationalUnit: []string{
			"opc-certtype:instance", "opc-instance:" + instanceID, "opc-compartment:" + compartmentID, "opc-tenant:" + tenancy,
		}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ids.inter, &key.PublicKey, ids.interKey)
	if err != nil {
		return nil, err
	}
	cert, _ := x509.ParseCertificate(der)
	l := &leaf{
		instanceID: instanceID, compartmentID: compartmentID, tenancy: tenancy, cert: cert,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
	}
	ids.leaves[instanceID] = l
	return l, nil
}

// InstanceIdentity is the instance the metadata service answers for, as
// the admin API shows it (never its private key).
type InstanceIdentity struct {
	InstanceID    string `json:"instanceId"`
	CompartmentID string `json:"compartmentId"`
	Tenancy       string `json:"tenancy"`
	// Fingerprint is the leaf certificate's SHA-256 fingerprint, as the
	// federation keyId names it.
	Fingerprint string `json:"fingerprint"`
	// CertificatePEM is the instance's identity certificate (public).
	CertificatePEM string `json:"certificatePem"`
}

// MetadataBody is the body of PUT /admin/oci/metadata.
type MetadataBody struct {
	InstanceID string `json:"instanceId"` // the instance OCID (or cloudsim id) software "runs on"
	Tenancy    string `json:"tenancy"`    // the tenancy OCID its certificate names
}

// SetMetadataInstance makes the instance metadata service (/opc/v2) answer
// for an instance of the fleet, in tenancy: which instance a request to
// the metadata service comes from is cloudsim's choice, set here, as one
// HTTP server plays every instance's link-local endpoint.
func (d *Dialect) SetMetadataInstance(instanceID, tenancy string) (InstanceIdentity, error) {
	if !core.ValidOCID(tenancy, "tenancy") {
		return InstanceIdentity{}, fmt.Errorf("%w: tenancy %q is not a tenancy OCID", core.ErrInvalid, tenancy)
	}
	r, err := d.core.InstanceRecord(instanceID)
	if err != nil {
		return InstanceIdentity{}, err
	}
	p := d.placementOf(r)
	d.ids.mu.Lock()
	defer d.ids.mu.Unlock()
	l, err := d.ids.leafLocked(r.OCID, p.compartment, tenancy)
	if err != nil {
		return InstanceIdentity{}, fmt.Errorf("issue the instance certificate: %w", err)
	}
	d.ids.metadataFor, d.ids.metadataTenancy = r.OCID, tenancy
	return identityView(l), nil
}

// MetadataInstance is the instance the metadata service answers for.
func (d *Dialect) MetadataInstance() (InstanceIdentity, error) {
	d.ids.mu.Lock()
	defer d.ids.mu.Unlock()
	l := d.ids.leaves[d.ids.metadataFor]
	if l == nil {
		return InstanceIdentity{}, fmt.Errorf("the OCI metadata service: %w (set one with PUT /admin/oci/metadata)", core.ErrNotFound)
	}
	return identityView(l), nil
}

func identityView(l *leaf) InstanceIdentity {
	return InstanceIdentity{InstanceID: l.instanceID, CompartmentID: l.compartmentID, Tenancy: l.tenancy,
		Fingerprint: certFingerprintSHA256(l.cert), CertificatePEM: string(l.certPEM)}
}

// certFingerprintSHA256 is the SDK's fingerprint of a certificate: SHA-256
// of its DER, colon-separated lower-case hex (common/auth/utils.go).
func certFingerprintSHA256(c *x509.Certificate) string {
	sum := sha256.Sum256(c.Raw)
	return colonHex(sum[:])
}

// certFingerprintSHA1 is the older form (keyId ".../fed-x509/<sha1>").
func certFingerprintSHA1(c *x509.Certificate) string {
	sum := sha1.Sum(c.Raw) //nolint:gosec // a fingerprint, as the older SDKs send it
	return colonHex(sum[:])
}

func colonHex(b []byte) string {
	parts := make([]string, len(b))
	for i, x := range b {
		parts[i] = fmt.Sprintf("%02x", x)
	}
	return strings.Join(parts, ":")
}

// subjectValue returns the value after prefix of a subject attribute
// ("opc-tenant:" -> the tenancy OCID).
func subjectValue(c *x509.Certificate, prefix string) string {
	for _, n := range c.Subject.Names {
		if s, ok := n.Value.(string); ok && strings.HasPrefix(s, prefix) {
			return strings.TrimPrefix(s, prefix)
		}
	}
	return ""
}
