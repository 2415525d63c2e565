package oci

import (
	"crypto"
	"crypto/md5"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultMaxClockSkew is how far the Date header may be from the server's
// clock: OCI rejects requests more than 5 minutes off.
const DefaultMaxClockSkew = 5 * time.Minute

// The headers oci-go-sdk signs (draft-cavage-http-signatures-08): always
// these three, and for POST, PUT and PATCH also the body headers.
var (
	requiredHeaders     = []string{"(request-target)", "host"}
	requiredBodyHeaders = []string{"content-length", "content-type", "x-content-sha256"}
)

// keyring holds the API signing keys cloudsim accepts, by keyId
// "<tenancy OCID>/<user OCID>/<fingerprint>".
type keyring struct {
	mu   sync.RWMutex
	keys map[string]*rsa.PublicKey
}

func newKeyring() *keyring { return &keyring{keys: map[string]*rsa.PublicKey{}} }

// Key is a registered API signing key, as the admin API lists it.
type Key struct {
	KeyID       string `json:"keyId"`
	Tenancy     string `json:"tenancy"`
	User        string `json:"user"`
	Fingerprint string `json:"fingerprint"`
}

// ParsePublicKey parses a PEM RSA public key ("PUBLIC KEY" or
// "RSA PUBLIC KEY").
func ParsePublicKey(pemText string) (*rsa.PublicKey, error) {
	block, _ := pem.Decode([]byte(strings.TrimSpace(pemText)))
	if block == nil {
		return nil, errors.New("public key: no PEM block found")
	}
	switch block.Type {
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("public key: %w", err)
		}
		rk, ok := k.(*rsa.PublicKey)
		if !ok {
			return nil, fmt.Errorf("public key: %T is not an RSA key (OCI API keys are RSA)", k)
		}
		return rk, nil
	case "RSA PUBLIC KEY":
		k, err := x509.ParsePKCS1PublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("public key: %w", err)
		}
		return k, nil
	}
	return nil, fmt.Errorf("public key: PEM block %q is not a public key (a private key is never needed: register its public half)", block.Type)
}

// Fingerprint is OCI's fingerprint of an API key: the MD5 of the key's
// DER (PKIX) encoding, as colon-separated lower-case hex pairs.
func Fingerprint(pub *rsa.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return ""
	}
	sum := md5.Sum(der)
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02x", b)
	}
	return strings.Join(parts, ":")
}

// splitKeyID splits "<tenancy>/<user>/<fingerprint>".
func splitKeyID(keyID string) (tenancy, user, fingerprint string, err error) {
	parts := strings.Split(keyID, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", "", fmt.Errorf("keyId %q: want <tenancy OCID>/<user OCID>/<fingerprint>", keyID)
	}
	return parts[0], parts[1], parts[2], nil
}

// add registers a key. The fingerprint in keyID must be the key's own, as
// OCI computes it when a key is uploaded: a mismatch would never verify.
func (k *keyring) add(keyID, pemText string) (Key, error) {
	tenancy, user, fp, err := splitKeyID(keyID)
	if err != nil {
		return Key{}, err
	}
	pub, err := ParsePublicKey(pemText)
	if err != nil {
		return Key{}, fmt.Errorf("keyId %q: %w", keyID, err)
	}
	if want := Fingerprint(pub); fp != want {
		return Key{}, fmt.Errorf("keyId %q: the fingerprint %s is not the key's fingerprint %s", keyID, fp, want)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.keys[keyID] = pub
	return Key{KeyID: keyID, Tenancy: tenancy, User: user, Fingerprint: fp}, nil
}

func (k *keyring) remove(keyID string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.keys[keyID]
	delete(k.keys, keyID)
	return ok
}

func (k *keyring) get(keyID string) *rsa.PublicKey {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.keys[keyID]
}

func (k *keyring) list() []Key {
	k.mu.RLock()
	defer k.mu.RUnlock()
	out := make([]Key, 0, len(k.keys))
	for id := range k.keys {
		t, u, fp, _ := splitKeyID(id)
		out = append(out, Key{KeyID: id, Tenancy: t, User: u, Fingerprint: fp})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].KeyID < out[j].KeyID })
	return out
}

// signature is a parsed Authorization header.
type signature struct {
	keyID     string
	algorithm string
	headers   []string
	sig       []byte
}

// parseSignature parses
//
//	Signature version="1",headers="date (request-target) host",keyId="...",algorithm="rsa-sha256",signature="<base64>"
func parseSignature(h string) (*signature, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(h), "Signature ")
	if !ok {
		return nil, errors.New("the Authorization header must use the Signature scheme")
	}
	params := map[string]string{}
	for rest = strings.TrimSpace(rest); rest != ""; {
		name, after, ok := strings.Cut(rest, "=")
		if !ok || !strings.HasPrefix(after, `"`) {
			return nil, errors.New(`the Authorization header must be a list of name="value" parameters`)
		}
		end := strings.IndexByte(after[1:], '"')
		if end < 0 {
			return nil, errors.New("the Authorization header has an unterminated quoted value")
		}
		params[strings.ToLower(strings.TrimSpace(name))] = after[1 : 1+end]
		rest = strings.TrimSpace(after[2+end:])
		rest = strings.TrimSpace(strings.TrimPrefix(rest, ","))
	}
	if v, ok := params["version"]; ok && v != "1" {
		return nil, fmt.Errorf("signature version %q is not supported (want 1)", v)
	}
	s := &signature{keyID: params["keyid"], algorithm: params["algorithm"]}
	if s.keyID == "" {
		return nil, errors.New("the Authorization header has no keyId")
	}
	if s.algorithm != "rsa-sha256" {
		return nil, fmt.Errorf("algorithm %q is not supported (want rsa-sha256)", s.algorithm)
	}
	hs := params["headers"]
	if hs == "" {
		hs = "date" // the draft's default
	}
	s.headers = strings.Fields(strings.ToLower(hs))
	sig, err := base64.StdEncoding.DecodeString(params["signature"])
	if err != nil || len(sig) == 0 {
		return nil, errors.New("the signature is not base64")
	}
	s.sig = sig
	return s, nil
}

// authenticate verifies r's signature the way OCI does and returns who
// signed it (principal.go): the user of an API key, or the instance of a
// security token (keyId "ST$<token>", securitytoken.go). body is the
// request body, already read. The error is always a 401
// NotAuthenticated; its message says what was wrong, which the real API
// does not, but which makes a misconfigured client easy to fix. On
// failure the principal names what could be told (never a token).
func (d *Dialect) authenticate(r *http.Request, body []byte) (caller, *Error) {
	fail := func(who caller, format string, args ...any) (caller, *Error) {
		return who, notAuthenticated(format, args...)
	}
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return fail(caller{}, "no Authorization header")
	}
	s, err := parseSignature(auth)
	if err != nil {
		return fail(caller{}, "%v", err)
	}
	// What the caller claims to be, for the call log of a refused call.
	claimed := caller{KeyID: s.keyID}
	if isSecurityToken(s.keyID) {
		claimed = caller{KeyID: securityTokenPrefix + "(token)"}
	}

	// The signed headers must cover what the SDK signs.
	need := slices.Clone(requiredHeaders)
	if r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch {
		need = append(need, requiredBodyHeaders...)
	}
	if msg := d.checkSigned(r, body, s, need); msg != "" {
		return fail(claimed, "%s", msg)
	}

	var pub *rsa.PublicKey
	var who caller
	if isSecurityToken(s.keyID) {
		claims, key, msg := d.verifySecurityToken(strings.TrimPrefix(s.keyID, securityTokenPrefix))
		if msg != "" {
			if claims.Instance != "" {
				claimed = callerOfToken(claims)
			}
			return fail(claimed, "%s", msg)
		}
		pub, who = key, callerOfToken(claims)
	} else {
		pub = d.keys.get(s.keyID)
		if pub == nil {
			return fail(claimed, "no API key is registered for keyId %q", s.keyID)
		}
		who = d.callerOfKey(s.keyID)
	}
	if msg := verifySignature(r, s, pub); msg != "" {
		if !isSecurityToken(s.keyID) && msg == errSignature {
			msg = fmt.Sprintf("%s with the key registered for keyId %q", errSignature, s.keyID)
		}
		return fail(claimed, "%s", msg)
	}
	return who, nil
}

// notAuthenticated is OCI's 401 answer to a request it cannot authenticate.
func notAuthenticated(format string, args ...any) *Error {
	return Errorf(http.StatusUnauthorized, CodeNotAuthenticated,
		"The required information to complete authentication was not provided or was incorrect (cloudsim: %s).", fmt.Sprintf(format, args...))
}

// checkSigned checks what comes before the key: the signed headers cover
// need, the date is within the allowed skew, and the body headers match
// the body. It returns what is wrong, or "".
func (d *Dialect) checkSigned(r *http.Request, body []byte, s *signature, need []string) string {
	for _, h := range need {
		if !slices.Contains(s.headers, h) {
			return fmt.Sprintf("the signed headers %q do not include %q", strings.Join(s.headers, " "), h)
		}
	}
	dateHeader := "date"
	if !slices.Contains(s.headers, "date") {
		if !slices.Contains(s.headers, "x-date") {
			return "the signed headers do not include date (or x-date)"
		}
		dateHeader = "x-date"
	}
	// The clock check comes before the key lookup, as it costs nothing.
	raw := r.Header.Get(dateHeader)
	when, perr := http.ParseTime(raw)
	if perr != nil {
		return fmt.Sprintf("the %s header %q is not an HTTP date", dateHeader, raw)
	}
	if skew := d.core.Now().Sub(when); skew > d.skew || skew < -d.skew {
		return fmt.Sprintf("the %s header %s is more than %s from the server's clock", dateHeader, raw, d.skew)
	}
	if slices.Contains(s.headers, "x-content-sha256") {
		sum := sha256.Sum256(body)
		if got := r.Header.Get("X-Content-Sha256"); got != base64.StdEncoding.EncodeToString(sum[:]) {
			return "x-content-sha256 does not match the body"
		}
	}
	if slices.Contains(s.headers, "content-length") {
		if got := headerValue(r, "content-length"); got != strconv.Itoa(len(body)) {
			return fmt.Sprintf("content-length %q does not match the body's %d bytes", got, len(body))
		}
	}
	return ""
}

const errSignature = "the signature does not verify"

// verifySignature checks the signature over the signed headers with pub,
// returning what is wrong, or "".
func verifySignature(r *http.Request, s *signature, pub *rsa.PublicKey) string {
	lines := make([]string, len(s.headers))
	for i, h := range s.headers {
		var v string
		switch h {
		case "(request-target)":
			v = strings.ToLower(r.Method) + " " + r.RequestURI
		case "host":
			v = r.Host
		default:
			if _, present := r.Header[http.CanonicalHeaderKey(h)]; !present && h != "content-length" {
				return fmt.Sprintf("the signed header %q is missing from the request", h)
			}
			v = headerValue(r, h)
		}
		lines[i] = h + ": " + v
	}
	digest := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], s.sig); err != nil {
		return errSignature
	}
	return ""
}

// headerValue is the request's value of a header; net/http keeps the
// Content-Length of a request in r.ContentLength only.
func headerValue(r *http.Request, name string) string {
	if v := r.Header.Get(name); v != "" {
		return v
	}
	if strings.EqualFold(name, "content-length") && r.ContentLength >= 0 {
		return strconv.FormatInt(r.ContentLength, 10)
	}
	return ""
}
