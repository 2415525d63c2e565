// Package ociauth is where the OCI provider's request signatures come
// from: an API key (inline, or from files re-read when they change) or
// the instance's own identity (instance principals), each a Source of
// the key to sign with and the keyId that names it.
//
// Every SDK client signs through Signer, which takes the key and its keyId
// from one snapshot of the source: the SDK's own signer asks its key
// provider for the key and the keyId in two calls, and a refresh between
// them would sign with one credential under the other's name.
package ociauth

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
)

// Credential is one consistent signing identity.
type Credential struct {
	// KeyID names the key: "<tenancy>/<user>/<fingerprint>" for an API
	// key, "ST$<security token>" for an instance principal. A token is a
	// credential: never log a KeyID that starts with "ST$".
	KeyID string
	Key   *rsa.PrivateKey
	// Expiry is when the credential stops working; zero: never.
	Expiry time.Time
}

// Source hands out the credential to sign with now.
type Source interface {
	// Credential returns the credential to sign a request with. It may
	// block to refresh one that is about to expire.
	Credential(ctx context.Context) (Credential, error)
	// Kind is the source's name, a ccmmetrics Source* constant.
	Kind() string
	// Describe says what the source is, for logs and preflight: which
	// key or instance, and for a token when it expires. Never a secret.
	Describe() string
}

// Runner is a Source that refreshes in the background until ctx ends.
type Runner interface {
	Run(ctx context.Context)
}

// Doer sends an HTTP request: the CCM's OCI transport (internal/oci/ociapi),
// so that the credential calls share its timeouts and metrics.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Signer signs every request of an SDK client with src's current
// credential (see the package comment).
func Signer(src Source) common.HTTPRequestSigner { return signer{src} }

type signer struct{ src Source }

func (s signer) Sign(r *http.Request) error {
	c, err := s.src.Credential(r.Context())
	if err != nil {
		return fmt.Errorf("sign the request: %w", err)
	}
	// The SDK's default signer (the headers it signs, the body hash),
	// over a key provider that cannot change between its two questions.
	return common.DefaultRequestSigner(fixedKey{c}).Sign(r)
}

// fixedKey is a common.KeyProvider of one credential.
type fixedKey struct{ c Credential }

func (k fixedKey) PrivateRSAKey() (*rsa.PrivateKey, error) { return k.c.Key, nil }
func (k fixedKey) KeyID() (string, error)                  { return k.c.KeyID, nil }

// ClientConfig is what the SDK's client constructors need (they check a
// configuration provider and read its region); the clients then sign with
// Signer(src) instead.
func ClientConfig(region, tenancy string, src Source) common.ConfigurationProvider {
	return clientConfig{region: region, tenancy: tenancy, src: src}
}

type clientConfig struct {
	region, tenancy string
	src             Source
}

func (c clientConfig) TenancyOCID() (string, error)    { return c.tenancy, nil }
func (c clientConfig) UserOCID() (string, error)       { return "", nil }
func (c clientConfig) KeyFingerprint() (string, error) { return "", nil }
func (c clientConfig) Region() (string, error)         { return c.region, nil }
func (c clientConfig) KeyID() (string, error) {
	cred, err := c.src.Credential(context.Background())
	return cred.KeyID, err
}

func (c clientConfig) PrivateRSAKey() (*rsa.PrivateKey, error) {
	cred, err := c.src.Credential(context.Background())
	return cred.Key, err
}

func (c clientConfig) AuthType() (common.AuthConfig, error) {
	return common.AuthConfig{AuthType: common.UnknownAuthenticationType}, errors.New("not used: the clients sign with ociauth.Signer")
}

// Static is an API key given once (inline in the cloud config): it never
// changes.
type Static struct{ c Credential }

// NewStatic parses a PEM key (with its passphrase, "" if none) for keyId
// "<tenancy>/<user>/<fingerprint>". The error never contains the key.
func NewStatic(tenancy, user, fingerprint, keyPEM, passphrase string) (*Static, error) {
	key, err := parseKey([]byte(keyPEM), passphrase)
	if err != nil {
		return nil, err
	}
	return &Static{Credential{KeyID: tenancy + "/" + user + "/" + fingerprint, Key: key}}, nil
}

func (s *Static) Credential(context.Context) (Credential, error) { return s.c, nil }
func (s *Static) Kind() string                                   { return ccmmetrics.SourceStaticKey }
func (s *Static) Describe() string                               { return "API key " + s.c.KeyID + " (inline, read once)" }

// parseKey parses a PEM RSA private key; the SDK's errors name the format
// problem, never the key.
func parseKey(pemBytes []byte, passphrase string) (*rsa.PrivateKey, error) {
	var pass *string
	if passphrase != "" {
		pass = &passphrase
	}
	key, err := common.PrivateKeyFromBytes(pemBytes, pass)
	if err != nil {
		return nil, fmt.Errorf("not a usable PEM RSA private key (the value is not shown): %w", err)
	}
	return key, nil
}
