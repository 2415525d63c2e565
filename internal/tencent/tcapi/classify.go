package tcapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
)

// Result codes recorded for answers that carry no Tencent error code,
// besides the shared ccmmetrics.CodeOK and CodeNetworkError.
const (
	codeOK           = ccmmetrics.CodeOK
	codeNetworkError = ccmmetrics.CodeNetworkError
	codeBadAnswer    = "ParseError" // HTTP 200 whose body is not the JSON envelope
)

// serviceOf names the Tencent product a request is for. The Host says it
// when it is <service>.[<region>.]tencentcloudapi.com; behind a custom
// endpoint (cloudsim, a proxy) only the credential scope of the
// Authorization header does: "Credential=<id>/<date>/<service>/tc3_request".
// Only that scope is read from the header; the header itself is never kept.
func serviceOf(req *http.Request) string {
	host := req.Host
	if host == "" && req.URL != nil {
		host = req.URL.Host
	}
	if name, rest, ok := strings.Cut(host, "."); ok && strings.HasSuffix(rest, "tencentcloudapi.com") && name != "" {
		return name
	}
	auth := req.Header.Get("Authorization")
	if auth == "SKIP" && req.Header.Get("X-TC-Action") == "AssumeRoleWithWebIdentity" {
		return "sts" // unsigned, so no credential scope names the service
	}
	_, cred, ok := strings.Cut(auth, "Credential=")
	if !ok {
		return "unknown"
	}
	cred, _, _ = strings.Cut(cred, ",")
	parts := strings.Split(strings.TrimSpace(cred), "/")
	if len(parts) != 4 || parts[3] != "tc3_request" || !isServiceName(parts[2]) {
		return "unknown"
	}
	return parts[2]
}

func isServiceName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// outcome is what one HTTP exchange came to.
type outcome struct {
	code      string // "OK", a Tencent error code, "HTTP<status>", NetworkError, ParseError
	throttled bool   // RequestLimitExceeded[.*] or HTTP 429: wait, then retry
	serverErr bool   // HTTP 5xx: retry with backoff
}

// classify reads the answer's result code. Tencent answers errors with HTTP
// 200 and {"Response":{"Error":{"Code":...}}}; only gateways answer other
// statuses.
func classify(status int, body []byte) outcome {
	switch {
	case status == http.StatusTooManyRequests:
		return outcome{code: ccmmetrics.HTTPCode(status), throttled: true}
	case status >= 500:
		return outcome{code: ccmmetrics.HTTPCode(status), serverErr: true}
	case status != http.StatusOK:
		return outcome{code: ccmmetrics.HTTPCode(status)}
	}
	// A successful answer (100 instances is ~100 KB) has no "Error" key;
	// skip decoding it just to find none.
	if !bytes.Contains(body, []byte(`"Error"`)) {
		if len(bytes.TrimSpace(body)) == 0 || bytes.TrimSpace(body)[0] != '{' {
			return outcome{code: codeBadAnswer}
		}
		return outcome{code: codeOK}
	}
	var env struct {
		Response struct {
			Error *struct{ Code string } `json:"Error"`
		} `json:"Response"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return outcome{code: codeBadAnswer}
	}
	if env.Response.Error == nil || env.Response.Error.Code == "" {
		return outcome{code: codeOK}
	}
	code := env.Response.Error.Code
	return outcome{code: code, throttled: isThrottle(code)}
}

// isThrottle: RequestLimitExceeded and its refinements, e.g.
// RequestLimitExceeded.UinLimitExceeded.
func isThrottle(code string) bool {
	return code == "RequestLimitExceeded" || strings.HasPrefix(code, "RequestLimitExceeded.")
}
