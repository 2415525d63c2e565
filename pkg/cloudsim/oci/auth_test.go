package oci

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
)

func TestSignatureThroughSDK(t *testing.T) {
	a, b := testKeys(t)
	tests := []struct {
		name     string
		provider common.ConfigurationProvider
		skew     time.Duration // of the server's clock
		wantCode string        // "" = success
	}{
		{"registered key", providerFor(a), 0, ""},
		{"clock 4m off is fine", providerFor(a), 4 * time.Minute, ""},
		{"unregistered key", providerFor(b), 0, CodeNotAuthenticated},
		{"keyId of A signed with B", common.NewRawConfigurationProvider(testTenancy, testUser, DefaultRegion, Fingerprint(&a.PublicKey), privatePEM(b), nil), 0, CodeNotAuthenticated},
		{"other user", common.NewRawConfigurationProvider(testTenancy, "ocid1.user.oc1..aaaaaaaaother", DefaultRegion, Fingerprint(&a.PublicKey), privatePEM(a), nil), 0, CodeNotAuthenticated},
		{"server clock 6m ahead", providerFor(a), 6 * time.Minute, CodeNotAuthenticated},
		{"server clock 6m behind", providerFor(a), -6 * time.Minute, CodeNotAuthenticated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			skew := tt.skew
			e := newTestEnv(t, Options{}, core.Config{Clock: func() time.Time { return time.Now().Add(skew) }})
			cc := e.computeWith(tt.provider)
			// GET signs date, (request-target), host.
			_, err := cc.ListInstances(ctx(t), ocicore.ListInstancesRequest{CompartmentId: common.String(DefaultCompartmentID)})
			// PUT also signs the body headers.
			_, perr := e.network().UpdateSecurityList(ctx(t), ocicore.UpdateSecurityListRequest{
				SecurityListId:            common.String(DefaultSecurityListID),
				UpdateSecurityListDetails: ocicore.UpdateSecurityListDetails{DisplayName: common.String("x")},
			})
			if tt.wantCode == "" {
				if err != nil {
					t.Fatal(err)
				}
				if tt.provider == e.provider && perr != nil {
					t.Fatal(perr)
				}
				return
			}
			wantErr(t, err, http.StatusUnauthorized, tt.wantCode)
			calls := e.core.Calls()["oci:ListInstances"]
			if calls[CodeNotAuthenticated] != 1 {
				t.Fatalf("calls: %v", calls)
			}
		})
	}
}

// signed builds a request signed as the SDK signs it.
func signed(t *testing.T, method, url string, body []byte) *http.Request {
	t.Helper()
	a, _ := testKeys(t)
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if err := common.DefaultRequestSigner(providerFor(a)).Sign(req); err != nil {
		t.Fatal(err)
	}
	return req
}

func TestSignatureTampering(t *testing.T) {
	e := newTestEnv(t, Options{}, core.Config{})
	secList := e.url + PrefixCore + "/securityLists/" + DefaultSecurityListID
	body := []byte(`{"displayName":"renamed"}`)
	tests := []struct {
		name   string
		req    func() *http.Request
		status int
	}{
		{"intact GET", func() *http.Request { return signed(t, http.MethodGet, secList, nil) }, 200},
		{"intact PUT", func() *http.Request { return signed(t, http.MethodPut, secList, body) }, 200},
		{"no Authorization", func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, secList, nil)
			return r
		}, 401},
		{"body changed after signing", func() *http.Request {
			r := signed(t, http.MethodPut, secList, body)
			other := []byte(`{"displayName":"hijack"}`)
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(other)), int64(len(other))
			r.Header.Set("Content-Length", "24")
			return r
		}, 401},
		{"path changed after signing", func() *http.Request {
			r := signed(t, http.MethodGet, secList, nil)
			r.URL.Path = PrefixCore + "/vcns/" + DefaultVCNID
			return r
		}, 401},
		{"date changed after signing", func() *http.Request {
			r := signed(t, http.MethodGet, secList, nil)
			r.Header.Set("Date", time.Now().Add(time.Minute).UTC().Format(http.TimeFormat))
			return r
		}, 401},
		{"PUT without body headers signed", func() *http.Request {
			r := signed(t, http.MethodPut, secList, body)
			auth := r.Header.Get("Authorization")
			r.Header.Set("Authorization", strings.Replace(auth, " content-length content-type x-content-sha256", "", 1))
			return r
		}, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.DefaultClient.Do(tt.req())
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, raw)
			}
			if resp.Header.Get("opc-request-id") == "" {
				t.Fatal("no opc-request-id")
			}
			if tt.status == 401 {
				var eb struct{ Code, Message string }
				if err := json.Unmarshal(raw, &eb); err != nil || eb.Code != CodeNotAuthenticated || eb.Message == "" {
					t.Fatalf("body %s", raw)
				}
			}
		})
	}
}

func TestParseSignature(t *testing.T) {
	tests := []struct {
		name, header string
		wantErr      bool
		wantHeaders  int
	}{
		{"sdk form", `Signature version="1",headers="date (request-target) host",keyId="t/u/f",algorithm="rsa-sha256",signature="AAAA"`, false, 3},
		{"spaces after commas", `Signature keyId="t/u/f", algorithm="rsa-sha256", headers="date", signature="AAAA"`, false, 1},
		{"default headers", `Signature keyId="t/u/f",algorithm="rsa-sha256",signature="AAAA"`, false, 1},
		{"other scheme", `Bearer abc`, true, 0},
		{"hmac", `Signature keyId="k",algorithm="hmac-sha256",signature="AAAA"`, true, 0},
		{"version 2", `Signature version="2",keyId="k",algorithm="rsa-sha256",signature="AAAA"`, true, 0},
		{"no key", `Signature algorithm="rsa-sha256",signature="AAAA"`, true, 0},
		{"bad base64", `Signature keyId="k",algorithm="rsa-sha256",signature="!!"`, true, 0},
		{"unterminated", `Signature keyId="k`, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parseSignature(tt.header)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && len(s.headers) != tt.wantHeaders {
				t.Fatalf("headers %v", s.headers)
			}
		})
	}
}

func TestKeyRegistration(t *testing.T) {
	a, b := testKeys(t)
	tests := []struct {
		name, keyID, pem string
		wantErr          bool
	}{
		{"ok", keyIDOf(a), publicPEM(t, &a.PublicKey), false},
		{"fingerprint of another key", keyIDOf(b), publicPEM(t, &a.PublicKey), true},
		{"two parts", testTenancy + "/" + Fingerprint(&a.PublicKey), publicPEM(t, &a.PublicKey), true},
		{"private key", keyIDOf(a), privatePEM(a), true},
		{"not PEM", keyIDOf(a), "hello", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kr := newKeyring()
			_, err := kr.add(tt.keyID, tt.pem)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "PRIVATE KEY-----\nMII") {
				t.Fatal("the error quotes the key")
			}
		})
	}
}
