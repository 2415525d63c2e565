package tencent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// FuzzParseAuthorization: any Authorization header is either parsed or
// rejected with an AuthFailure code; it never panics.
func FuzzParseAuthorization(f *testing.F) {
	f.Add("TC3-HMAC-SHA256 Credential=AKID/2026-11-22/cvm/tc3_request, SignedHeaders=content-type;host, Signature=abc")
	f.Add("TC3-HMAC-SHA256 Credential=, SignedHeaders=, Signature=")
	f.Add("Basic dXNlcjpwYXNz")
	f.Add("")
	f.Fuzz(func(t *testing.T, h string) {
		a, err := parseAuthorization(h)
		if (a == nil) == (err == nil) {
			t.Fatalf("parseAuthorization(%q) = %v, %v: want exactly one of a result and an error", h, a, err)
		}
		if err != nil && len(err.Code) < len("AuthFailure") {
			t.Fatalf("parseAuthorization(%q): error code %q is not an AuthFailure code", h, err.Code)
		}
	})
}

// FuzzSignedRequest: a correctly signed request with any action and body
// gets a well-formed answer envelope (success or a coded error), never a
// panic or a broken body.
func FuzzSignedRequest(f *testing.F) {
	f.Add("DescribeInstances", `{"InstanceIds":["ins-aaaa0001"]}`)
	f.Add("DescribeInstances", `{"Filters":[{"Name":"vpc-id","Values":["vpc-aaaa0001"]}],"Limit":100}`)
	f.Add("DescribeInstances", `{"Filters":[{"Name":"private-ip-address","Values":[1,2]}]}`)
	f.Add("DescribeInstances", `{"Offset":-1,"Limit":1e309}`)
	f.Add("DescribeInstances", `[]`)
	f.Add("NoSuchAction", `{}`)
	f.Add("DescribeInstances", `{"InstanceIds":null,"Filters":null}`)
	e := newEnv(f, core.Config{})
	f.Fuzz(func(t *testing.T, action, body string) {
		if action == "" || body == "" || strings.ContainsFunc(action, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return // empty values get the helper's defaults; control characters cannot be sent in a header
		}
		code, out := e.do(t, rawReq{action: action, body: body})
		var env struct {
			Response struct {
				RequestID string `json:"RequestId"`
				Error     *struct{ Code, Message string }
			}
		}
		if err := json.Unmarshal([]byte(out), &env); err != nil {
			t.Fatalf("%s %q: answer is not JSON (%v): %s", action, body, err, out)
		}
		if code != 200 || env.Response.RequestID == "" {
			t.Fatalf("%s %q: HTTP %d, RequestId %q: %s", action, body, code, env.Response.RequestID, out)
		}
		if env.Response.Error != nil && env.Response.Error.Code == "" {
			t.Fatalf("%s %q: error without a code: %s", action, body, out)
		}
	})
}
