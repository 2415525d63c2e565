package tencent

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Algorithm is the only signature method cloudsim accepts.
const Algorithm = "TC3-HMAC-SHA256"

var (
	hexSigRe = regexp.MustCompile(`^[0-9a-f]{64}$`)
	apiHost  = regexp.MustCompile(`^([a-z0-9-]+)\.(?:[a-z0-9-]+\.)*tencentcloudapi\.com$`)
)

type authorization struct {
	secretID      string
	date          string
	service       string
	signedHeaders []string
	signature     string
}

// parseAuthorization parses
//
//	TC3-HMAC-SHA256 Credential=<id>/<date>/<service>/tc3_request, SignedHeaders=a;b, Signature=<hex>
func parseAuthorization(h string) (*authorization, *Error) {
	bad := func(why string) *Error {
		return Errorf("AuthFailure.InvalidAuthorization", "The Authorization header is malformed: %s.", why)
	}
	alg, rest, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || alg != Algorithm {
		return nil, bad("it must start with `" + Algorithm + " `")
	}
	fields := map[string]string{}
	for part := range strings.SplitSeq(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, bad("expected `Credential=..., SignedHeaders=..., Signature=...`")
		}
		fields[k] = v
	}
	cred := strings.Split(fields["Credential"], "/")
	if len(cred) != 4 || cred[0] == "" || cred[2] == "" || cred[3] != "tc3_request" {
		return nil, bad("Credential must be `<SecretId>/<YYYY-MM-DD>/<service>/tc3_request`")
	}
	if _, err := time.Parse("2006-01-02", cred[1]); err != nil {
		return nil, bad("the Credential date must be YYYY-MM-DD")
	}
	signed := strings.Split(fields["SignedHeaders"], ";")
	if !slices.Contains(signed, "content-type") || !slices.Contains(signed, "host") {
		return nil, bad("SignedHeaders must include content-type and host")
	}
	for _, s := range signed {
		if s == "" || s != strings.ToLower(s) {
			return nil, bad("SignedHeaders must be lower-case header names separated by `;`")
		}
	}
	if !hexSigRe.MatchString(fields["Signature"]) {
		return nil, bad("Signature must be 64 lower-case hex digits")
	}
	return &authorization{
		secretID:      cred[0],
		date:          cred[1],
		service:       cred[2],
		signedHeaders: signed,
		signature:     fields["Signature"],
	}, nil
}

// authenticate verifies the TC3-HMAC-SHA256 signature of r. It returns the
// SecretId and the service (from the Host when it is
// <service>.[...].tencentcloudapi.com, else from the credential scope, which
// is the case when the SDK is pointed at cloudsim with HttpProfile.Endpoint).
func (d *Dialect) authenticate(r *http.Request, body []byte) (secretID, service string, _ *Error) {
	raw := r.Header.Get("Authorization")
	if raw == "" {
		return "", "", Errorf("AuthFailure.InvalidAuthorization", "The Authorization header is missing.")
	}
	auth, err := parseAuthorization(raw)
	if err != nil {
		return "", "", err
	}
	secretID, service = auth.secretID, auth.service
	if m := apiHost.FindStringSubmatch(hostOnly(r.Host)); m != nil {
		service = m[1]
	}

	tsHeader := r.Header.Get("X-TC-Timestamp")
	if tsHeader == "" {
		return secretID, service, Errorf("MissingParameter", "The request is missing a required parameter `Timestamp`.")
	}
	ts, perr := strconv.ParseInt(tsHeader, 10, 64)
	if perr != nil || ts < 0 {
		return secretID, service, Errorf("InvalidParameterValue", "The value `%s` of parameter `Timestamp` is not a valid Unix timestamp.", tsHeader)
	}
	now := d.core.Now()
	reqTime := time.Unix(ts, 0)
	if skew := now.Sub(reqTime); skew > d.skew || skew < -d.skew {
		return secretID, service, Errorf("AuthFailure.SignatureExpire",
			"Signature expired: the request timestamp %d (%s) differs from the server time (%s) by more than %v.",
			ts, reqTime.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), d.skew)
	}
	key, kerr := d.ids.signingKey(auth.secretID, r.Header.Get("X-TC-Token"))
	if kerr != nil {
		return secretID, service, kerr
	}
	if want := reqTime.UTC().Format("2006-01-02"); auth.date != want {
		return secretID, service, Errorf("AuthFailure.SignatureFailure",
			"The provided credentials could not be validated: the credential scope date %s is not the UTC date (%s) of X-TC-Timestamp.", auth.date, want)
	}
	if service != auth.service {
		return secretID, service, Errorf("AuthFailure.SignatureFailure",
			"The provided credentials could not be validated: the credential scope names service `%s` but the request is for `%s`.", auth.service, service)
	}

	payloadHash := sha256Hex(body)
	if r.Header.Get("X-TC-Content-SHA256") == "UNSIGNED-PAYLOAD" {
		payloadHash = sha256Hex([]byte("UNSIGNED-PAYLOAD"))
	}
	// The SDK signs header values as sent; the API documentation lower-cases
	// them. Accept either.
	for _, lower := range []bool{false, true} {
		canonical := canonicalRequest(r, auth.signedHeaders, payloadHash, lower)
		sig := Signature(key, auth.date, auth.service, tsHeader, canonical)
		if hmac.Equal([]byte(sig), []byte(auth.signature)) {
			return secretID, service, nil
		}
	}
	return secretID, service, Errorf("AuthFailure.SignatureFailure", "The provided credentials could not be validated. Please check your signature is correct.")
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return strings.ToLower(h)
	}
	return strings.ToLower(hostport)
}

func canonicalRequest(r *http.Request, signed []string, payloadHash string, lowerValues bool) string {
	var hdrs strings.Builder
	for _, name := range signed {
		v := r.Header.Get(name)
		if name == "host" {
			v = r.Host
		}
		v = strings.TrimSpace(v)
		if lowerValues {
			v = strings.ToLower(v)
		}
		hdrs.WriteString(name + ":" + v + "\n")
	}
	uri := r.URL.EscapedPath()
	if uri == "" {
		uri = "/"
	}
	return strings.Join([]string{
		r.Method,
		uri,
		r.URL.RawQuery,
		hdrs.String(),
		strings.Join(signed, ";"),
		payloadHash,
	}, "\n")
}

// Signature computes a TC3-HMAC-SHA256 signature: the string to sign
// (algorithm, timestamp, credential scope, hashed canonical request) signed
// with the key derived by the HMAC-SHA256 chain
// "TC3"+secretKey -> date -> service -> "tc3_request".
func Signature(secretKey, date, service, timestamp, canonicalRequest string) string {
	scope := date + "/" + service + "/tc3_request"
	stringToSign := Algorithm + "\n" + timestamp + "\n" + scope + "\n" + sha256Hex([]byte(canonicalRequest))
	k := hmacSHA256([]byte("TC3"+secretKey), date)
	k = hmacSHA256(k, service)
	k = hmacSHA256(k, "tc3_request")
	return hex.EncodeToString(hmacSHA256(k, stringToSign))
}

func hmacSHA256(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
