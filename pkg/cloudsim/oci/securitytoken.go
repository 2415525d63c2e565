package oci

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// securityTokenPrefix starts the keyId of a request signed with a
// security token: "ST$<token>" (oci-go-sdk common/auth
// instance_principal_key_provider.go, KeyID).
const securityTokenPrefix = "ST$"

// DefaultSecurityTokenLifetime is how long an instance principal's
// security token is valid. OCI does not document it; users report tokens
// that expire after 15 to 30 minutes, and the SDK renews 5 minutes before
// `exp` (common/auth/jwt.go, bufferTimeBeforeTokenExpiration): 20 minutes
// is cloudsim's choice within that range.
const DefaultSecurityTokenLifetime = 20 * time.Minute

// tokenIssuer is the iss claim of the tokens the federation endpoint issues.
const tokenIssuer = "authService.oracle.com"

// tokenClaims are a security token's claims: the ones instance principal
// tokens carry (oci-go-sdk common/auth federation_client_test.go and
// jwt_test.go show them: sub, iss, aud, iat, exp, opc-certtype,
// opc-instance, opc-compartment, opc-tenant, tenant, ptype, ttype), plus
// jwk, the session public key the token is bound to (a JSON Web Key, as a
// string), which requests signed with the token must verify against. The
// SDK reads only exp (jwt.go).
type tokenClaims struct {
	Sub         string `json:"sub"`
	Iss         string `json:"iss"`
	Aud         string `json:"aud"`
	Iat         int64  `json:"iat"`
	Exp         int64  `json:"exp"`
	Jti         string `json:"jti"`
	CertType    string `json:"opc-certtype"`
	Instance    string `json:"opc-instance"`
	Compartment string `json:"opc-compartment"`
	Tenant      string `json:"opc-tenant"`
	TenantAlias string `json:"tenant"`
	Ptype       string `json:"ptype"`
	Ttype       string `json:"ttype"`
	Fprint      string `json:"fprint"`
	JWK         string `json:"jwk"`
}

// jwk is an RSA JSON Web Key (RFC 7517).
type jwk struct {
	Kid string `json:"kid"`
	Kty string `json:"kty"`
	Alg string `json:"alg"`
	Use string `json:"use"`
	N   string `json:"n"`
	E   string `json:"e"`
}

var b64 = base64.RawURLEncoding

// tokenHeader is the JWT header of every token cloudsim issues.
var tokenHeader = func() string {
	h, _ := json.Marshal(map[string]string{"alg": "RS256", "kid": "cloudsim", "typ": "JWT"})
	return b64.EncodeToString(h)
}()

// SecurityTokenPrefix is how every security token cloudsim issues begins
// (its JWT header and the dot after it): tests scan logs for it, as a token
// is a credential.
var SecurityTokenPrefix = tokenHeader + "."

// issueSecurityToken signs a token for the instance of l, bound to the
// session key pub, valid for the configured lifetime from now.
func (d *Dialect) issueSecurityToken(l *leaf, pub *rsa.PublicKey) (string, tokenClaims, error) {
	now := d.core.Now()
	key, _ := json.Marshal(jwk{Kid: "session", Kty: "RSA", Alg: "RS256", Use: "sig",
		N: b64.EncodeToString(pub.N.Bytes()), E: b64.EncodeToString(big.NewInt(int64(pub.E)).Bytes())})
	c := tokenClaims{
		Sub: l.instanceID, Iss: tokenIssuer, Aud: "oci", Iat: now.Unix(), Exp: now.Add(d.ids.securityTokenLife).Unix(),
		Jti: core.NewUUID(), CertType: "instance", Instance: l.instanceID, Compartment: l.compartmentID,
		Tenant: l.tenancy, TenantAlias: l.tenancy, Ptype: "instance", Ttype: "x509",
		Fprint: certFingerprintSHA256(l.cert), JWK: string(key),
	}
	payload, _ := json.Marshal(c)
	signing := SecurityTokenPrefix + b64.EncodeToString(payload)
	d.ids.mu.Lock()
	tokKey := d.ids.tokKey
	d.ids.mu.Unlock()
	digest := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, tokKey, crypto.SHA256, digest[:])
	if err != nil {
		return "", c, err
	}
	return signing + "." + b64.EncodeToString(sig), c, nil
}

// verifySecurityToken checks a token cloudsim issued: its signature, its
// issuer, that it has not expired (OCI refuses an expired token with 401
// NotAuthenticated) and that its instance still exists. It returns the
// claims (set as far as they could be read, even on failure) and the
// session key requests must be signed with, or what is wrong.
func (d *Dialect) verifySecurityToken(token string) (tokenClaims, *rsa.PublicKey, string) {
	var c tokenClaims
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return c, nil, "the security token is not a JWT"
	}
	d.ids.mu.Lock()
	tokKey := d.ids.tokKey
	d.ids.mu.Unlock()
	sig, err := b64.DecodeString(parts[2])
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if tokKey == nil || err != nil || rsa.VerifyPKCS1v15(&tokKey.PublicKey, crypto.SHA256, digest[:], sig) != nil {
		return c, nil, "the security token was not issued by this cloud (unknown token)"
	}
	payload, err := b64.DecodeString(parts[1])
	if err != nil || json.Unmarshal(payload, &c) != nil || c.Iss != tokenIssuer {
		return tokenClaims{}, nil, "the security token's claims cannot be read"
	}
	if now := d.core.Now(); now.Unix() >= c.Exp {
		return c, nil, fmt.Sprintf("the security token expired at %s (%s ago)",
			time.Unix(c.Exp, 0).UTC().Format(time.RFC3339), now.Sub(time.Unix(c.Exp, 0)).Round(time.Second))
	}
	rec, err := d.core.InstanceRecord(c.Instance)
	if err != nil || rec.OCID != c.Instance || rec.State == core.StateTerminating {
		return c, nil, "the security token's instance " + c.Instance + " no longer exists"
	}
	var k jwk
	if json.Unmarshal([]byte(c.JWK), &k) != nil || k.Kty != "RSA" {
		return c, nil, "the security token carries no session key"
	}
	n, errN := b64.DecodeString(k.N)
	e, errE := b64.DecodeString(k.E)
	if errN != nil || errE != nil || len(e) == 0 || len(e) > 4 {
		return c, nil, "the security token's session key cannot be read"
	}
	return c, &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}, ""
}
