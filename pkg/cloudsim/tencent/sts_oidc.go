package tencent

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// OIDCProvider is a CAM OIDC identity provider: whose tokens STS
// AssumeRoleWithWebIdentity accepts. On Tencent Cloud it is made in the
// CAM console (or CreateOIDCConfig) with the IdP's URL and client ids;
// TKE makes one per cluster for its ServiceAccount issuer.
type OIDCProvider struct {
	// ID is the provider's name, AssumeRoleWithWebIdentity's ProviderId.
	ID string `json:"id"`
	// Issuer is the IdP URL: a token's iss must equal it, and its OIDC
	// discovery document is at Issuer + /.well-known/openid-configuration
	// (a kube-apiserver's --service-account-issuer).
	Issuer string `json:"issuer"`
	// ClientIDs: a token's aud must name one of them.
	ClientIDs []string `json:"clientIds"`
	// CAPEM, when set, is the only CA trusted for the issuer's TLS
	// certificate (a test cluster's own CA); empty: the system's roots.
	CAPEM string `json:"caPEM,omitempty"`
}

// oidcProvider verifies tokens of one provider against its published
// keys, fetched through discovery and cached.
type oidcProvider struct {
	OIDCProvider
	client *http.Client

	mu      sync.Mutex
	keys    map[string]crypto.PublicKey // by kid: *rsa.PublicKey or *ecdsa.PublicKey
	fetched time.Time
}

// jwksTTL is how long fetched signing keys are used before they are
// fetched again; an unknown kid fetches at once (a rotated key).
// cloudsim's choice.
const jwksTTL = time.Minute

func newOIDCProvider(p OIDCProvider) (*oidcProvider, error) {
	switch {
	case p.ID == "":
		return nil, fmt.Errorf("%w: an OIDC provider needs an id", core.ErrInvalid)
	case !strings.HasPrefix(p.Issuer, "https://") && !strings.HasPrefix(p.Issuer, "http://"):
		return nil, fmt.Errorf("%w: OIDC provider %s: issuer %q must be an http(s) URL", core.ErrInvalid, p.ID, p.Issuer)
	case len(p.ClientIDs) == 0:
		return nil, fmt.Errorf("%w: OIDC provider %s needs at least one client id (the tokens' audience)", core.ErrInvalid, p.ID)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if p.CAPEM != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(p.CAPEM)) {
			return nil, fmt.Errorf("%w: OIDC provider %s: caPEM holds no PEM certificate", core.ErrInvalid, p.ID)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	p.ClientIDs = slices.Clone(p.ClientIDs)
	return &oidcProvider{OIDCProvider: p, client: &http.Client{Transport: tr, Timeout: 10 * time.Second}}, nil
}

// tokenClaims are the JWT claims checked (RFC 7519 §4.1).
type tokenClaims struct {
	Issuer    string   `json:"iss"`
	Subject   string   `json:"sub"`
	Audience  audience `json:"aud"`
	ExpiresAt *int64   `json:"exp"`
	NotBefore *int64   `json:"nbf"`
}

// audience is aud: one string or an array of strings (RFC 7519 §4.1.3).
type audience []string

func (a *audience) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*a = audience{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("aud is neither a string nor an array of strings")
	}
	*a = many
	return nil
}

// errToken is a token refused for what it is (bad signature, claims):
// InvalidParameter.WebIdentityTokenError. Other errors are failures to
// reach the issuer.
type errToken struct{ msg string }

func (e errToken) Error() string { return e.msg }

func badToken(format string, args ...any) error { return errToken{fmt.Sprintf(format, args...)} }

// verify checks a JWT: an RS256 or ES256 signature (RFC 7518 §3.3, §3.4:
// a kube-apiserver signs ServiceAccount tokens with RS256 for an RSA key,
// ES256 for a P-256 key) by one of the issuer's keys, and iss, aud, exp
// and nbf. It returns the claims.
func (p *oidcProvider) verify(ctx context.Context, token string, now time.Time) (*tokenClaims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, badToken("the token is not a JWT (want three base64url parts separated by dots)")
	}
	var header struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	if err := decodeSegment(parts[0], &header); err != nil {
		return nil, badToken("the token's header: %v", err)
	}
	if header.Alg != "RS256" && header.Alg != "ES256" {
		return nil, badToken("the token is signed with %q; cloudsim verifies RS256 and ES256", header.Alg)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, badToken("the token's signature is not base64url")
	}
	key, err := p.key(ctx, header.Kid, now)
	if err != nil {
		return nil, err
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !verifySignature(header.Alg, key, digest[:], sig) {
		return nil, badToken("the token's signature does not verify with the issuer's key %q", header.Kid)
	}
	var c tokenClaims
	if err := decodeSegment(parts[1], &c); err != nil {
		return nil, badToken("the token's claims: %v", err)
	}
	switch {
	case c.Issuer != p.Issuer:
		return nil, badToken("the token's issuer %q is not the identity provider's %q", c.Issuer, p.Issuer)
	case !slices.ContainsFunc(c.Audience, func(a string) bool { return slices.Contains(p.ClientIDs, a) }):
		return nil, badToken("the token's audience %q names none of the identity provider's client ids %q", []string(c.Audience), p.ClientIDs)
	case c.ExpiresAt == nil:
		return nil, badToken("the token has no expiry (exp)")
	case now.Unix() >= *c.ExpiresAt:
		return nil, badToken("the token expired at %s", time.Unix(*c.ExpiresAt, 0).UTC().Format(time.RFC3339))
	case c.NotBefore != nil && now.Unix() < *c.NotBefore:
		return nil, badToken("the token is not valid before %s", time.Unix(*c.NotBefore, 0).UTC().Format(time.RFC3339))
	}
	return &c, nil
}

// verifySignature checks a JWS signature: RS256 is PKCS #1 v1.5 with
// SHA-256; ES256 is ECDSA P-256 with SHA-256, the signature being R and S
// as two 32-byte big-endian integers (RFC 7518 §3.4).
func verifySignature(alg string, key crypto.PublicKey, digest, sig []byte) bool {
	switch k := key.(type) {
	case *rsa.PublicKey:
		return alg == "RS256" && rsa.VerifyPKCS1v15(k, crypto.SHA256, digest, sig) == nil
	case *ecdsa.PublicKey:
		if alg != "ES256" || len(sig) != 64 {
			return false
		}
		r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
		return ecdsa.Verify(k, digest, r, s)
	}
	return false
}

func decodeSegment(seg string, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return errors.New("not base64url")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	return nil
}

// key returns the issuer's signing key kid, fetching the keys when the
// cache is old or does not know kid.
func (p *oidcProvider) key(ctx context.Context, kid string, now time.Time) (crypto.PublicKey, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if k, ok := p.keys[kid]; ok && now.Sub(p.fetched) < jwksTTL {
		return k, nil
	}
	keys, err := p.fetchKeys(ctx)
	if err != nil {
		return nil, err
	}
	p.keys, p.fetched = keys, now
	if k, ok := keys[kid]; ok {
		return k, nil
	}
	return nil, badToken("the issuer publishes no key %q", kid)
}

// fetchKeys reads the discovery document (OpenID Connect Discovery 1.0
// §4: its issuer must be the one configured) and then the JWKS it names.
func (p *oidcProvider) fetchKeys(ctx context.Context) (map[string]crypto.PublicKey, error) {
	var discovery struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := p.getJSON(ctx, strings.TrimSuffix(p.Issuer, "/")+"/.well-known/openid-configuration", &discovery); err != nil {
		return nil, err
	}
	if discovery.Issuer != p.Issuer {
		return nil, fmt.Errorf("the discovery document names issuer %q, not %q", discovery.Issuer, p.Issuer)
	}
	if discovery.JWKSURI == "" {
		return nil, errors.New("the discovery document has no jwks_uri")
	}
	var set struct {
		Keys []struct {
			Kty string `json:"kty"`
			Kid string `json:"kid"`
			N   string `json:"n"`
			E   string `json:"e"`
			Crv string `json:"crv"`
			X   string `json:"x"`
			Y   string `json:"y"`
		} `json:"keys"`
	}
	if err := p.getJSON(ctx, discovery.JWKSURI, &set); err != nil {
		return nil, err
	}
	keys := map[string]crypto.PublicKey{}
	b64 := base64.RawURLEncoding.DecodeString
	for _, k := range set.Keys {
		switch k.Kty {
		case "RSA": // RFC 7518 §6.3: n and e
			n, errN := b64(k.N)
			e, errE := b64(k.E)
			if errN != nil || errE != nil || len(e) == 0 || len(e) > 4 {
				continue
			}
			keys[k.Kid] = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		case "EC": // RFC 7518 §6.2: crv, x and y
			x, errX := b64(k.X)
			y, errY := b64(k.Y)
			// x and y are the full 32 bytes each (RFC 7518 §6.2.1.2).
			if k.Crv != "P-256" || errX != nil || errY != nil || len(x) != 32 || len(y) != 32 {
				continue
			}
			pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
			if err != nil { // not a point on the curve
				continue
			}
			keys[k.Kid] = pub
		}
	}
	return keys, nil
}

func (p *oidcProvider) getJSON(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d: %s", url, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: not JSON: %v", url, err)
	}
	return nil
}

// PutOIDCProvider creates or replaces an identity provider.
func (m *CAM) PutOIDCProvider(p OIDCProvider) error {
	op, err := newOIDCProvider(p)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.providers[p.ID] = op
	return nil
}

// OIDCProviders lists the identity providers (their CAs left out).
func (m *CAM) OIDCProviders() []OIDCProvider {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]OIDCProvider, 0, len(m.providers))
	for _, p := range m.providers {
		q := p.OIDCProvider
		q.CAPEM = ""
		out = append(out, q)
	}
	slices.SortFunc(out, func(a, b OIDCProvider) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func (m *CAM) provider(id string) *oidcProvider {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.providers[id]
}
