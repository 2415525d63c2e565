// Package testca makes throwaway certificate authorities and the
// certificates they sign, for tests and demos of TLS listeners: a CA whose
// certificate a client trusts, a server certificate to upload to a cloud's
// certificate store, and client certificates for mutual TLS. Keys are ECDSA
// P-256 and certificates last a day. Nothing here is fit for production.
package testca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"time"
)

// CA is a throwaway certificate authority.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA certificate, PEM-encoded.
	PEM []byte
}

// New returns a new self-signed CA named cn.
func New(cn string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("testca: generating the key of CA %q: %w", cn, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("testca: signing CA %q: %w", cn, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("testca: parsing CA %q: %w", cn, err)
	}
	return &CA{Cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// Pool is a pool holding only this CA, for a client's RootCAs or a
// server's ClientCAs.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Leaf is a certificate the CA signed, with its key.
type Leaf struct {
	CertPEM, KeyPEM []byte
}

// TLS returns the leaf as a tls.Certificate.
func (l Leaf) TLS() (tls.Certificate, error) { return tls.X509KeyPair(l.CertPEM, l.KeyPEM) }

// Server signs a server certificate for the given host names and IP
// addresses (each host is a DNS name unless it parses as an IP).
func (ca *CA) Server(hosts ...string) (Leaf, error) {
	return ca.issue(x509.ExtKeyUsageServerAuth, hosts)
}

// Client signs a client certificate named cn, for mutual TLS.
func (ca *CA) Client(cn string) (Leaf, error) {
	return ca.issue(x509.ExtKeyUsageClientAuth, []string{cn})
}

func (ca *CA) issue(usage x509.ExtKeyUsage, hosts []string) (Leaf, error) {
	if len(hosts) == 0 {
		return Leaf{}, fmt.Errorf("testca: a certificate needs a name")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Leaf{}, fmt.Errorf("testca: generating the key of %q: %w", hosts[0], err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: hosts[0]},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	if usage == x509.ExtKeyUsageServerAuth {
		for _, h := range hosts {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return Leaf{}, fmt.Errorf("testca: signing %q: %w", hosts[0], err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return Leaf{}, fmt.Errorf("testca: encoding the key of %q: %w", hosts[0], err)
	}
	return Leaf{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

// Get GETs url over HTTPS, trusting only roots and verifying serverName
// ("" verifies the URL's host), presenting client if it is not nil, with
// a fresh connection and a 2 s timeout; it returns the body.
func Get(url string, roots *x509.CertPool, serverName string, client *tls.Certificate) (string, error) {
	conf := &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12}
	if client != nil {
		conf.Certificates = []tls.Certificate{*client}
	}
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: conf, DisableKeepAlives: true, Proxy: nil}}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
