package tencent

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"
)

func TestSDKSignatureAcceptedAndKeyChecks(t *testing.T) {
	e := newEnv(t, core.Config{})
	e.mustAdd(t, core.Instance{ID: "ins-aaaaaaaa", PrivateIP: "10.0.0.1"})

	tests := []struct {
		name, id, key, wantCode string
	}{
		{"right key", testID, testKey, ""},
		{"wrong key", testID, "not-the-key", "AuthFailure.SignatureFailure"},
		{"unknown SecretId", "AKIDnobody", testKey, "AuthFailure.SecretIdNotFound"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := e.client(t, tt.id, tt.key).DescribeInstances(cvm.NewDescribeInstancesRequest())
			if got := sdkCode(err); got != tt.wantCode {
				t.Fatalf("code = %q, want %q (err %v)", got, tt.wantCode, err)
			}
			if tt.wantCode == "" {
				if *resp.Response.TotalCount != 1 || *resp.Response.InstanceSet[0].InstanceId != "ins-aaaaaaaa" {
					t.Fatalf("unexpected answer %s", resp.ToJsonString())
				}
				if resp.Response.RequestId == nil || len(*resp.Response.RequestId) != 36 {
					t.Fatalf("RequestId = %v", resp.Response.RequestId)
				}
			}
		})
	}
	calls := e.core.Calls()["DescribeInstances"]
	want := map[string]int{"OK": 1, "AuthFailure.SignatureFailure": 1, "AuthFailure.SecretIdNotFound": 1}
	for code, n := range want {
		if calls[code] != n {
			t.Errorf("calls[%s] = %d, want %d (all: %v)", code, calls[code], n, calls)
		}
	}
}

func TestSDKClockSkewFromServerSide(t *testing.T) {
	// The server's clock is 10 minutes ahead of the SDK's timestamp.
	e := newEnv(t, core.Config{Clock: func() time.Time { return time.Now().Add(10 * time.Minute) }})
	_, err := e.client(t, testID, testKey).DescribeInstances(cvm.NewDescribeInstancesRequest())
	if got := sdkCode(err); got != "AuthFailure.SignatureExpire" {
		t.Fatalf("code = %q, want AuthFailure.SignatureExpire", got)
	}
}

func TestHandCraftedAuth(t *testing.T) {
	e := newEnv(t, core.Config{})
	now := time.Now()
	tests := []struct {
		name     string
		req      rawReq
		wantCode string
	}{
		{"valid", rawReq{}, ""},
		{"timestamp 10 minutes old", rawReq{ts: now.Add(-10 * time.Minute)}, "AuthFailure.SignatureExpire"},
		{"timestamp 10 minutes ahead", rawReq{ts: now.Add(10 * time.Minute)}, "AuthFailure.SignatureExpire"},
		{"timestamp 4 minutes old is fine", rawReq{ts: now.Add(-4 * time.Minute)}, ""},
		{"scope date is not the timestamp's UTC date", rawReq{scopeDate: now.UTC().Add(-48 * time.Hour).Format("2006-01-02")}, "AuthFailure.SignatureFailure"},
		{"body changed after signing", rawReq{body: `{"Limit":1}`, tamperBody: `{"Limit":2}`}, "AuthFailure.SignatureFailure"},
		{"unknown SecretId", rawReq{id: "AKIDother", key: "x"}, "AuthFailure.SecretIdNotFound"},
		{"temporary token", rawReq{token: "sts-token"}, "AuthFailure.TokenFailure"},
		{"no Authorization", rawReq{authorization: "-"}, "AuthFailure.InvalidAuthorization"},
		{"v1 algorithm", rawReq{authorization: "HmacSHA256 Credential=x"}, "AuthFailure.InvalidAuthorization"},
		{"bad credential scope", rawReq{authorization: "TC3-HMAC-SHA256 Credential=AKID/2024-01-01/cvm, SignedHeaders=content-type;host, Signature=" + strings.Repeat("a", 64)}, "AuthFailure.InvalidAuthorization"},
		{"host not signed", rawReq{authorization: "TC3-HMAC-SHA256 Credential=AKID/2024-01-01/cvm/tc3_request, SignedHeaders=content-type, Signature=" + strings.Repeat("a", 64)}, "AuthFailure.InvalidAuthorization"},
		{"short signature", rawReq{authorization: "TC3-HMAC-SHA256 Credential=AKID/2024-01-01/cvm/tc3_request, SignedHeaders=content-type;host, Signature=abc"}, "AuthFailure.InvalidAuthorization"},
		{"service from real host matches scope", rawReq{hostHeader: "cvm.tencentcloudapi.com"}, ""},
		{"service from real host differs from scope", rawReq{hostHeader: "clb.tencentcloudapi.com"}, "AuthFailure.SignatureFailure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := e.do(t, tt.req)
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
			if got := envelopeCode(t, body); got != tt.wantCode {
				t.Fatalf("code = %q, want %q; body %s", got, tt.wantCode, body)
			}
		})
	}
}

func TestProtocolErrors(t *testing.T) {
	e := newEnv(t, core.Config{})
	tests := []struct {
		name     string
		req      rawReq
		wantCode string
	}{
		{"unknown action", rawReq{action: "RunInstances"}, "InvalidAction"},
		{"unknown service", rawReq{service: "cbs"}, "InvalidAction"},
		{"wrong version", rawReq{version: "2020-01-01"}, "NoSuchVersion"},
		{"missing region", rawReq{region: "-"}, "MissingParameter"},
		{"unknown region", rawReq{region: "xx-nowhere"}, "UnsupportedRegion"},
		{"unknown parameter", rawReq{body: `{"Bogus":1}`}, "UnknownParameter"},
		{"mistyped parameter", rawReq{body: `{"Limit":"ten"}`}, "InvalidParameter"},
		{"not JSON", rawReq{body: `{`}, "InvalidParameter"},
		{"form content type", rawReq{contentType: "application/x-www-form-urlencoded"}, "InvalidParameter"},
		{"GET", rawReq{method: http.MethodGet}, "UnsupportedProtocol"},
		{"json with charset", rawReq{contentType: "application/json; charset=utf-8"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, body := e.do(t, tt.req)
			if got := envelopeCode(t, body); got != tt.wantCode {
				t.Fatalf("code = %q, want %q; body %s", got, tt.wantCode, body)
			}
		})
	}
}

func TestWrongPathIs404(t *testing.T) {
	e := newEnv(t, core.Config{})
	resp, err := http.Post(e.url+"/somewhere", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

func TestErrorEnvelopeShape(t *testing.T) {
	e := newEnv(t, core.Config{})
	_, body := e.do(t, rawReq{action: "Nope"})
	var env struct {
		Response struct {
			Error struct {
				Code    string
				Message string
			}
			RequestId string
		}
	}
	if err := json.Unmarshal([]byte(body), &env); err != nil {
		t.Fatal(err)
	}
	if env.Response.Error.Code != "InvalidAction" || env.Response.Error.Message == "" || len(env.Response.RequestId) != 36 {
		t.Fatalf("bad envelope %s", body)
	}
}

func envelopeCode(t *testing.T, body string) string {
	t.Helper()
	var env struct {
		Response struct {
			Error *struct{ Code string }
		}
	}
	if err := json.Unmarshal([]byte(body), &env); err != nil {
		t.Fatalf("not JSON: %s", body)
	}
	if env.Response.Error == nil {
		return ""
	}
	return env.Response.Error.Code
}
