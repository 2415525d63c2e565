package ociauth

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/common/auth"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
)

// DefaultMetadataURL is the instance metadata service (IMDSv2) on every
// OCI instance (oci-go-sdk common/auth/instance_principal_key_provider.go).
const DefaultMetadataURL = "http://169.254.169.254/opc/v2"

// FederationURL is the auth service of a region, which exchanges an
// instance's certificate for a security token: https://auth.<region>.<realm
// domain>, as the SDK derives it (common/auth/federation_client.go).
func FederationURL(region string) string {
	return "https://" + common.StringToRegion(region).Endpoint("auth")
}

// InstancePrincipalOptions configure the instance principal source.
type InstancePrincipalOptions struct {
	// MetadataURL is the metadata service's base URL (default
	// DefaultMetadataURL); FederationURL the auth service's (default
	// FederationURL(region)). Set only to point tests and demos at cloudsim.
	MetadataURL, FederationURL string
	// Region, when set, is the region; else the metadata service says.
	Region string
	// Tenancy, when set, must be the tenancy the instance's certificate
	// names.
	Tenancy string
	// HTTP sends the metadata and federation requests (required).
	HTTP Doer
	// Metrics records every token fetched (nil: none).
	Metrics *ccmmetrics.Credentials
}

// InstancePrincipal signs as the instance the CCM runs on: no key of its
// own. It reads the instance's identity certificate and key from the
// metadata service, exchanges them at the auth service for a security
// token bound to a fresh session key, and signs with that key under keyId
// "ST$<token>".
//
// Why not the SDK's own provider (auth.InstancePrincipalConfigurationProvider):
// it renews a token only once it is within 5 minutes of expiry
// (common/auth/jwt.go, a constant), under a lock, on the calling request's
// path; and it hands out the key and the token in two separate calls. With
// tokens shorter than its margin it renews on every call and signs with a
// key that no longer matches the token (measured against cloudsim with
// 20 s tokens: every call refused). This source renews ahead of expiry in
// the background (Run) by a margin that scales with the token's lifetime
// (a third of it, at most 5 minutes, as the SDK for the usual 20-minute
// tokens), hands out key and token together, keeps a token that is still
// valid when a renewal fails, and records the credential metrics. Its
// requests go through the CCM's own transport (timeouts, metrics), with
// no SDK retry or circuit breaker.
type InstancePrincipal struct {
	o       InstancePrincipalOptions
	region  string
	tenancy string

	mu       sync.Mutex // serializes renewals
	curM     sync.RWMutex
	cur      Credential
	lifetime time.Duration // of the current token, as issued
	instance string        // the instance OCID, from the certificate
}

// NewInstancePrincipal reads the region (unless given) and fetches the
// first token. Its errors say which request failed and why.
func NewInstancePrincipal(ctx context.Context, o InstancePrincipalOptions) (*InstancePrincipal, error) {
	if o.MetadataURL == "" {
		o.MetadataURL = DefaultMetadataURL
	}
	o.MetadataURL = strings.TrimSuffix(o.MetadataURL, "/")
	p := &InstancePrincipal{o: o, region: o.Region}
	if p.region == "" {
		b, err := p.metadata(ctx, "/instance/region")
		if err != nil {
			return nil, err
		}
		p.region = string(common.StringToRegion(strings.TrimSpace(string(b))))
	}
	if p.o.FederationURL == "" {
		p.o.FederationURL = FederationURL(p.region)
	}
	p.o.FederationURL = strings.TrimSuffix(p.o.FederationURL, "/")
	if err := p.renew(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// Region is the region, given or from the metadata service.
func (p *InstancePrincipal) Region() string { return p.region }

// Tenancy is the instance's tenancy, from its certificate.
func (p *InstancePrincipal) Tenancy() string {
	p.curM.RLock()
	defer p.curM.RUnlock()
	return p.tenancy
}

func (p *InstancePrincipal) Kind() string { return ccmmetrics.SourceInstancePrincipal }

func (p *InstancePrincipal) Describe() string {
	p.curM.RLock()
	defer p.curM.RUnlock()
	return fmt.Sprintf("instance principal of %s (tenancy %s), security token valid until %s (in %s)",
		p.instance, p.tenancy, p.cur.Expiry.UTC().Format(time.RFC3339), time.Until(p.cur.Expiry).Round(time.Second))
}

// Expiry is when the token in use expires.
func (p *InstancePrincipal) Expiry() time.Time { return p.current().Expiry }

func (p *InstancePrincipal) current() Credential {
	c, _ := p.snapshot()
	return c
}

// snapshot is the token in use and its lifetime.
func (p *InstancePrincipal) snapshot() (Credential, time.Duration) {
	p.curM.RLock()
	defer p.curM.RUnlock()
	return p.cur, p.lifetime
}

// renewAhead is how long before expiry a token is renewed: a third of its
// lifetime, at most 5 minutes (the SDK's margin for 20-minute tokens).
func renewAhead(lifetime time.Duration) time.Duration { return min(5*time.Minute, lifetime/3) }

// usableFor is how long before expiry a token is no longer handed out
// without trying to renew it first: a request must reach the API before
// the token expires.
func usableFor(lifetime time.Duration) time.Duration { return min(time.Minute, lifetime/10) }

// Credential returns the current token and session key; one that is about
// to expire (Run not running, or its renewals failing) is renewed first,
// and kept if the renewal fails while it is still valid.
func (p *InstancePrincipal) Credential(ctx context.Context) (Credential, error) {
	c, life := p.snapshot()
	if time.Until(c.Expiry) > usableFor(life) {
		return c, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, life = p.snapshot(); time.Until(c.Expiry) > usableFor(life) {
		return c, nil // renewed meanwhile
	}
	err := p.renewLocked(ctx)
	if err == nil {
		return p.current(), nil
	}
	p.failed(err)
	if time.Until(c.Expiry) > 0 {
		return c, nil
	}
	return Credential{}, fmt.Errorf("the instance principal's security token expired at %s and could not be renewed: %w", c.Expiry.UTC().Format(time.RFC3339), err)
}

// Run renews the token ahead of its expiry until ctx ends; a failed
// renewal is retried with backoff while the token in use is still valid.
func (p *InstancePrincipal) Run(ctx context.Context) {
	backoff := time.Second
	for {
		c, life := p.snapshot()
		wait := time.Until(c.Expiry.Add(-renewAhead(life)))
		t := time.NewTimer(max(wait, 0))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		p.mu.Lock()
		err := error(nil)
		if p.current().Expiry.Equal(c.Expiry) { // not renewed by Credential meanwhile
			err = p.renewLocked(ctx)
		}
		p.mu.Unlock()
		if err == nil {
			backoff = time.Second
			continue
		}
		if ctx.Err() != nil {
			return
		}
		p.failed(err)
		// Retry sooner than the next renewal time, and never past expiry.
		retry := min(backoff, max(time.Until(c.Expiry)/4, 500*time.Millisecond))
		backoff = min(backoff*2, 30*time.Second)
		select {
		case <-ctx.Done():
			return
		case <-time.After(retry):
		}
	}
}

func (p *InstancePrincipal) failed(err error) {
	if p.o.Metrics != nil {
		p.o.Metrics.RefreshFailed()
	}
	p.curM.RLock()
	instance, expiry := p.instance, p.cur.Expiry
	p.curM.RUnlock()
	klog.ErrorS(err, "Renewing the OCI instance principal's security token failed; the token in use stays until it expires",
		"instance", instance, "expires", expiry.UTC().Format(time.RFC3339))
}

func (p *InstancePrincipal) renew(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.renewLocked(ctx)
}

// renewLocked fetches the instance's certificates (OCI rotates them) and a
// new token for a new session key, as the SDK's x509 federation client
// does, and swaps them in.
func (p *InstancePrincipal) renewLocked(ctx context.Context) error {
	certPEM, err := p.metadata(ctx, "/identity/cert.pem")
	if err != nil {
		return err
	}
	keyPEM, err := p.metadata(ctx, "/identity/key.pem")
	if err != nil {
		return err
	}
	interPEM, err := p.metadata(ctx, "/identity/intermediate.pem")
	if err != nil {
		return err
	}
	cert, err := parseCertPEM(certPEM)
	if err != nil {
		return fmt.Errorf("the instance certificate from %s/identity/cert.pem: %w", p.o.MetadataURL, err)
	}
	leafKey, err := parseKey(keyPEM, "")
	if err != nil {
		return fmt.Errorf("the instance key from %s/identity/key.pem: %w", p.o.MetadataURL, err)
	}
	tenancy := subjectValue(cert, "opc-tenant:")
	switch {
	case tenancy == "":
		return fmt.Errorf("the instance certificate from %s names no tenancy (opc-tenant:)", p.o.MetadataURL)
	case p.o.Tenancy != "" && tenancy != p.o.Tenancy:
		return fmt.Errorf("auth.tenancy %s is not the instance's tenancy %s (from its certificate): remove auth.tenancy or fix it", p.o.Tenancy, tenancy)
	case p.Tenancy() != "" && tenancy != p.Tenancy():
		return fmt.Errorf("the instance certificate's tenancy changed from %s to %s", p.Tenancy(), tenancy)
	}
	session, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generate the session key: %w", err)
	}
	sessionDER, err := x509.MarshalPKIXPublicKey(&session.PublicKey)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(cert.Raw)
	fedKey := fixedKey{Credential{KeyID: tenancy + "/fed-x509-sha256/" + colonHex(sum[:]), Key: leafKey}}
	token, err := p.federate(ctx, fedKey, auth.X509FederationDetails{
		Certificate:              pemBody(certPEM),
		PublicKey:                base64.StdEncoding.EncodeToString(sessionDER),
		IntermediateCertificates: []string{pemBody(interPEM)},
		FingerprintAlgorithm:     "SHA256",
	})
	if err != nil {
		return err
	}
	claims, err := readClaims(token)
	if err != nil {
		return fmt.Errorf("the security token from %s%s: %w", p.o.FederationURL, federationPath, err)
	}
	expiry := time.Unix(claims.Exp, 0)
	life := time.Until(expiry)
	if claims.Iat > 0 && claims.Exp > claims.Iat {
		life = time.Duration(claims.Exp-claims.Iat) * time.Second
	}
	instance := subjectValue(cert, "opc-instance:")
	p.curM.Lock()
	p.cur, p.lifetime = Credential{KeyID: "ST$" + token, Key: session, Expiry: expiry}, life
	p.tenancy, p.instance = tenancy, instance
	p.curM.Unlock()
	if p.o.Metrics != nil {
		p.o.Metrics.Refreshed(expiry)
	}
	klog.V(2).InfoS("Fetched a security token for the OCI instance principal", "instance", instance, "expires", expiry.UTC().Format(time.RFC3339))
	return nil
}

const federationPath = "/v1/x509"

// federate posts the request to the auth service, signed with the
// instance's key as the SDK signs it (no host header), and returns the
// token.
func (p *InstancePrincipal) federate(ctx context.Context, key fixedKey, details auth.X509FederationDetails) (string, error) {
	url := p.o.FederationURL + federationPath
	body, err := json.Marshal(details)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("POST %s: %w", url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	signer := common.RequestSigner(key, []string{"date", "(request-target)"}, []string{"content-length", "content-type", "x-content-sha256"})
	if err := signer.Sign(req); err != nil {
		return "", fmt.Errorf("sign the federation request: %w", err)
	}
	resp, err := p.o.HTTP.Do(req)
	if err != nil {
		return "", fmt.Errorf("POST %s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", fmt.Errorf("POST %s: reading the answer: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Code, Message string }
		_ = json.Unmarshal(b, &e)
		return "", fmt.Errorf("POST %s: the auth service refused the instance's certificate: HTTP %d %s: %s (opc-request-id %s)",
			url, resp.StatusCode, e.Code, e.Message, resp.Header.Get("opc-request-id"))
	}
	var tok auth.Token
	if err := json.Unmarshal(b, &tok); err != nil || tok.Token == "" {
		return "", fmt.Errorf("POST %s: the answer holds no token", url)
	}
	return tok.Token, nil
}

// metadata GETs one path of the metadata service, with the header IMDSv2
// requires.
func (p *InstancePrincipal) metadata(ctx context.Context, path string) ([]byte, error) {
	url := p.o.MetadataURL + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	req.Header.Set("Authorization", "Bearer Oracle")
	resp, err := p.o.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the instance metadata service: GET %s: %w (instance principals work only on an OCI instance)", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxFileSize))
	if err != nil {
		return nil, fmt.Errorf("the instance metadata service: GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the instance metadata service: GET %s: HTTP %d: %s", url, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return b, nil
}

// tokenClaims are the claims read from a security token (a JWT): the SDK
// reads exp; iat gives the lifetime.
type tokenClaims struct {
	Exp int64 `json:"exp"`
	Iat int64 `json:"iat"`
}

func readClaims(token string) (tokenClaims, error) {
	var c tokenClaims
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return c, errors.New("not a JWT")
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return c, errors.New("the claims are not base64url")
	}
	if err := json.Unmarshal(b, &c); err != nil || c.Exp == 0 {
		return c, errors.New("the claims have no exp")
	}
	return c, nil
}

func parseCertPEM(b []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

// pemBody is a PEM block's base64 body on one line, as the SDK sends
// certificates to the federation endpoint.
func pemBody(b []byte) string {
	block, _ := pem.Decode(b)
	if block == nil {
		return ""
	}
	return base64.StdEncoding.EncodeToString(block.Bytes)
}

func subjectValue(c *x509.Certificate, prefix string) string {
	for _, n := range c.Subject.Names {
		if s, ok := n.Value.(string); ok && strings.HasPrefix(s, prefix) {
			return strings.TrimPrefix(s, prefix)
		}
	}
	return ""
}

func colonHex(b []byte) string {
	parts := make([]string, len(b))
	for i, x := range b {
		parts[i] = fmt.Sprintf("%02x", x)
	}
	return strings.Join(parts, ":")
}
