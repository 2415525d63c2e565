package tencent

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	tchttp "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/http"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// describe calls DescribeInstances through the real SDK with cred and
// returns the error code ("" on success).
func (e *env) describe(t *testing.T, cred common.CredentialIface) string {
	t.Helper()
	c, err := cvm.NewClient(cred, testRegion, clientProfile(e))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.DescribeInstances(cvm.NewDescribeInstancesRequest())
	return sdkCode(err)
}

func getMetadata(t *testing.T, e *env, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(e.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMetadataRoleCredentials: the metadata service lists the bound role
// and answers its temporary credentials in the SDK's shape; they work with
// their token, and are refused with AuthFailure.TokenFailure without it,
// with another token, and once expired.
func TestMetadataRoleCredentials(t *testing.T) {
	clock := newFakeClock()
	e := newEnv(t, core.Config{Region: testRegion, Clock: clock.Now})
	cam := e.d.CAM()

	if code, _ := getMetadata(t, e, metadataCredentials); code != http.StatusNotFound {
		t.Fatalf("no role bound: HTTP %d, want 404 (the SDK's \"role not bound\")", code)
	}
	if _, err := cam.PutRole(Role{Name: "ccm-node", SessionDurationSeconds: 20}); err != nil {
		t.Fatal(err)
	}
	if err := cam.BindMetadataRole("ccm-node"); err != nil {
		t.Fatal(err)
	}
	if code, body := getMetadata(t, e, metadataCredentials); code != 200 || body != "ccm-node" {
		t.Fatalf("role list: %d %q", code, body)
	}
	if code, _ := getMetadata(t, e, metadataCredentials+"other"); code != http.StatusNotFound {
		t.Fatalf("another role: HTTP %d, want 404", code)
	}
	code, body := getMetadata(t, e, metadataCredentials+"ccm-node")
	if code != 200 {
		t.Fatalf("credentials: %d %s", code, body)
	}
	var got metadataRoleCredentials
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	want := clock.Now().Add(20 * time.Second).Truncate(time.Second)
	if got.Code != "Success" || got.TmpSecretId == "" || got.TmpSecretKey == "" || got.Token == "" || got.ExpiredTime != want.Unix() {
		t.Fatalf("credentials %+v, want Code Success, all three parts and ExpiredTime %d", got, want.Unix())
	}
	if exp, err := time.Parse(time.RFC3339, got.Expiration); err != nil || !exp.Equal(want) {
		t.Fatalf("Expiration %q, want %s", got.Expiration, want.Format(time.RFC3339))
	}
	if cam.Issued("ccm-node") != 1 || e.d.SubjectOf(got.TmpSecretId) != "role/ccm-node" || e.d.SubjectOf(testID) != testID {
		t.Fatalf("issued %d, subject %q", cam.Issued("ccm-node"), e.d.SubjectOf(got.TmpSecretId))
	}

	tests := []struct {
		name    string
		cred    common.CredentialIface
		advance time.Duration
		want    string
	}{
		{"with its token", common.NewTokenCredential(got.TmpSecretId, got.TmpSecretKey, got.Token), 0, ""},
		{"without its token", common.NewCredential(got.TmpSecretId, got.TmpSecretKey), 0, "AuthFailure.TokenFailure"},
		{"with another token", common.NewTokenCredential(got.TmpSecretId, got.TmpSecretKey, "x"+got.Token), 0, "AuthFailure.TokenFailure"},
		{"with a wrong key", common.NewTokenCredential(got.TmpSecretId, "wrong", got.Token), 0, "AuthFailure.SignatureFailure"},
		{"a static key with a token", common.NewTokenCredential(testID, testKey, got.Token), 0, "AuthFailure.TokenFailure"},
		{"just before expiry", common.NewTokenCredential(got.TmpSecretId, got.TmpSecretKey, got.Token), 19 * time.Second, ""},
		{"expired", common.NewTokenCredential(got.TmpSecretId, got.TmpSecretKey, got.Token), time.Second, "AuthFailure.TokenFailure"},
	}
	for _, tt := range tests {
		clock.Advance(tt.advance)
		if code := e.describe(t, tt.cred); code != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, code, tt.want)
		}
	}
	// Issuing forgets credentials expired longer than expiredKept (a call
	// with them is then refused as AuthFailure.SecretIdNotFound; the
	// clock cannot jump that far here without the request's timestamp
	// being refused first).
	clock.Advance(expiredKept + time.Second)
	if code, _ := getMetadata(t, e, metadataCredentials+"ccm-node"); code != 200 {
		t.Fatal("second issue failed")
	}
	if temps := cam.TempCredentials(); len(temps) != 1 || temps[0].SecretID == got.TmpSecretId {
		t.Errorf("after expiredKept: %+v, want only the new credentials", temps)
	}
	if _, err := cam.signingKey(got.TmpSecretId, got.Token); err == nil || err.Code != "AuthFailure.SecretIdNotFound" {
		t.Errorf("forgotten credentials: %v, want AuthFailure.SecretIdNotFound", err)
	}
}

// TestKeyRotation: a key added at run time works at once; a revoked one is
// refused as unknown.
func TestKeyRotation(t *testing.T) {
	e := newEnv(t, core.Config{Region: testRegion})
	cam := e.d.CAM()
	const newID, newKey = "AKIDrotated", "rotated-secret-key"
	if code := e.describe(t, common.NewCredential(newID, newKey)); code != "AuthFailure.SecretIdNotFound" {
		t.Fatalf("before adding: %q", code)
	}
	if err := cam.AddKey(newID, newKey); err != nil {
		t.Fatal(err)
	}
	if code := e.describe(t, common.NewCredential(newID, newKey)); code != "" {
		t.Fatalf("new key: %q", code)
	}
	if err := cam.RevokeKey(testID); err != nil {
		t.Fatal(err)
	}
	if code := e.describe(t, common.NewCredential(testID, testKey)); code != "AuthFailure.SecretIdNotFound" {
		t.Fatalf("revoked key: %q, want AuthFailure.SecretIdNotFound", code)
	}
	if err := cam.RevokeKey(testID); err == nil {
		t.Fatal("revoking twice succeeded")
	}
}

// issuer is a minimal OIDC issuer: discovery and JWKS over HTTP, as a
// kube-apiserver serves them.
type issuer struct {
	url string
	key *rsa.PrivateKey
	kid string
	ec  *ecdsa.PrivateKey // published as "ec-1"
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	is := &issuer{key: key, kid: "key-1", ec: ec}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": is.url, "jwks_uri": is.url + "openid/v1/jwks"})
	})
	mux.HandleFunc("/openid/v1/jwks", func(w http.ResponseWriter, _ *http.Request) {
		b64 := base64.RawURLEncoding.EncodeToString
		pub, _ := is.ec.PublicKey.ECDH()
		point := pub.Bytes() // 0x04 || X || Y
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
			"kty": "RSA", "alg": "RS256", "use": "sig", "kid": is.kid,
			"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes()),
		}, {
			"kty": "EC", "alg": "ES256", "use": "sig", "kid": "ec-1", "crv": "P-256",
			"x": b64(point[1:33]), "y": b64(point[33:]),
		}}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	is.url = srv.URL + "/" // a kube-apiserver's issuer ends with a slash
	return is
}

// token signs claims with the issuer's key (or with key, if given).
func (is *issuer) token(t *testing.T, claims map[string]any, key *rsa.PrivateKey) string {
	t.Helper()
	if key == nil {
		key = is.key
	}
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	signed := enc(map[string]string{"alg": "RS256", "kid": is.kid}) + "." + enc(claims)
	digest := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// tokenES256 signs claims with the issuer's P-256 key (RFC 7518 §3.4:
// R and S, 32 bytes each).
func (is *issuer) tokenES256(t *testing.T, kid string, claims map[string]any) string {
	t.Helper()
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	signed := enc(map[string]string{"alg": "ES256", "kid": kid}) + "." + enc(claims)
	digest := sha256.Sum256([]byte(signed))
	r, sv, err := ecdsa.Sign(rand.Reader, is.ec, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	sv.FillBytes(sig[32:])
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// assumeRole calls AssumeRoleWithWebIdentity the way the CCM does: the
// SDK's common client, unsigned (Authorization: SKIP).
func (e *env) assumeRole(t *testing.T, params map[string]any) (map[string]any, string) {
	t.Helper()
	client := common.NewCommonClient(nil, testRegion, clientProfile(e))
	req := tchttp.NewCommonRequest("sts", "2018-08-13", "AssumeRoleWithWebIdentity")
	req.SetSkipSign(true)
	if err := req.SetActionParameters(params); err != nil {
		t.Fatal(err)
	}
	resp := tchttp.NewCommonResponse()
	if err := client.Send(req, resp); err != nil {
		return nil, sdkCode(err)
	}
	var out struct{ Response map[string]any }
	if err := json.Unmarshal(resp.GetBody(), &out); err != nil {
		t.Fatal(err)
	}
	return out.Response, ""
}

// TestAssumeRoleWithWebIdentity: the token is verified against the
// issuer's published keys and claims; the role must trust the provider
// and the subject; the credentials last the role's session duration at
// most and work with their token.
func TestAssumeRoleWithWebIdentity(t *testing.T) {
	clock := newFakeClock()
	e := newEnv(t, core.Config{Region: testRegion, Clock: clock.Now})
	cam := e.d.CAM()
	is := newIssuer(t)
	const sub = "system:serviceaccount:kube-system:cloud-controller-manager"
	if err := cam.PutOIDCProvider(OIDCProvider{ID: "cluster", Issuer: is.url, ClientIDs: []string{"sts.cloud.tencent.com"}}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []Role{
		{Name: "ccm", SessionDurationSeconds: 20, OIDCProviders: []string{"cluster"}, Subjects: []string{sub}},
		{Name: "untrusting"},
		{Name: "other-subject", OIDCProviders: []string{"cluster"}, Subjects: []string{"system:serviceaccount:default:x"}},
	} {
		if _, err := cam.PutRole(r); err != nil {
			t.Fatal(err)
		}
	}
	now := clock.Now().Unix()
	claims := func(change func(map[string]any)) map[string]any {
		c := map[string]any{"iss": is.url, "sub": sub, "aud": []string{"sts.cloud.tencent.com"}, "exp": now + 600, "nbf": now, "iat": now}
		if change != nil {
			change(c)
		}
		return c
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	params := func(token, provider, role string) map[string]any {
		return map[string]any{"ProviderId": provider, "WebIdentityToken": token, "RoleArn": RoleArn(role), "RoleSessionName": "ccm-test", "DurationSeconds": 7200}
	}
	good := is.token(t, claims(nil), nil)
	tests := []struct {
		name   string
		params map[string]any
		want   string
	}{
		{"bad signature", params(is.token(t, claims(nil), other), "cluster", "ccm"), "InvalidParameter.WebIdentityTokenError"},
		{"other issuer", params(is.token(t, claims(func(c map[string]any) { c["iss"] = "https://elsewhere/" }), nil), "cluster", "ccm"), "InvalidParameter.WebIdentityTokenError"},
		{"other audience", params(is.token(t, claims(func(c map[string]any) { c["aud"] = "kubernetes" }), nil), "cluster", "ccm"), "InvalidParameter.WebIdentityTokenError"},
		{"expired", params(is.token(t, claims(func(c map[string]any) { c["exp"] = now - 1 }), nil), "cluster", "ccm"), "InvalidParameter.WebIdentityTokenError"},
		{"not yet valid", params(is.token(t, claims(func(c map[string]any) { c["nbf"] = now + 60 }), nil), "cluster", "ccm"), "InvalidParameter.WebIdentityTokenError"},
		{"not a JWT", params("not-a-jwt", "cluster", "ccm"), "InvalidParameter.WebIdentityTokenError"},
		{"ES256 with the RSA key's id", params(is.tokenES256(t, "key-1", claims(nil)), "cluster", "ccm"), "InvalidParameter.WebIdentityTokenError"},
		{"unknown provider", params(good, "nobody", "ccm"), "InvalidParameter.ParamError"},
		{"unknown role", params(good, "cluster", "nobody"), "InvalidParameter.ParamError"},
		{"untrusting role", params(good, "cluster", "untrusting"), "UnauthorizedOperation"},
		{"other subject", params(good, "cluster", "other-subject"), "UnauthorizedOperation"},
		{"too long", map[string]any{"ProviderId": "cluster", "WebIdentityToken": good, "RoleArn": RoleArn("ccm"), "RoleSessionName": "s", "DurationSeconds": 43201}, "InvalidParameter.ParamError"},
		{"no session name", map[string]any{"ProviderId": "cluster", "WebIdentityToken": good, "RoleArn": RoleArn("ccm")}, "MissingParameter"},
	}
	for _, tt := range tests {
		if _, code := e.assumeRole(t, tt.params); code != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, code, tt.want)
		}
	}
	if cam.Issued("ccm") != 0 {
		t.Fatalf("refused calls issued %d credentials", cam.Issued("ccm"))
	}

	resp, code := e.assumeRole(t, params(good, "cluster", "ccm"))
	if code != "" {
		t.Fatalf("good token: %s", code)
	}
	creds, _ := resp["Credentials"].(map[string]any)
	id, _ := creds["TmpSecretId"].(string)
	key, _ := creds["TmpSecretKey"].(string)
	token, _ := creds["Token"].(string)
	if id == "" || key == "" || token == "" {
		t.Fatalf("answer %v lacks credentials", resp)
	}
	// DurationSeconds 7200 asked, the role's 20 s session duration given.
	if exp, _ := resp["ExpiredTime"].(float64); int64(exp) != clock.Now().Add(20*time.Second).Truncate(time.Second).Unix() {
		t.Fatalf("ExpiredTime %v, want now+20s", resp["ExpiredTime"])
	}
	if code := e.describe(t, common.NewTokenCredential(id, key, token)); code != "" {
		t.Fatalf("call with the role's credentials: %s", code)
	}
	if e.d.SubjectOf(id) != "role/ccm" {
		t.Fatalf("subject %q", e.d.SubjectOf(id))
	}
	clock.Advance(21 * time.Second)
	if code := e.describe(t, common.NewTokenCredential(id, key, token)); code != "AuthFailure.TokenFailure" {
		t.Fatalf("expired: %q, want AuthFailure.TokenFailure", code)
	}
	// A P-256 signing key (ES256), as envtest's apiserver has.
	if _, code := e.assumeRole(t, params(is.tokenES256(t, "ec-1", claims(nil)), "cluster", "ccm")); code != "" {
		t.Fatalf("ES256 token: %s", code)
	}
	// The reference's own example sends DurationSeconds as a string.
	p := params(is.token(t, claims(nil), nil), "cluster", "ccm")
	p["DurationSeconds"] = "5000"
	if _, code := e.assumeRole(t, p); code != "" {
		t.Fatalf("DurationSeconds as a string: %s", code)
	}
}

// TestUnsignedOnlyForSTS: only AssumeRoleWithWebIdentity may be called
// unsigned; a signed-only action with `Authorization: SKIP` is refused.
func TestUnsignedOnlyForSTS(t *testing.T) {
	e := newEnv(t, core.Config{Region: testRegion})
	if _, body := e.do(t, rawReq{authorization: "SKIP"}); !strings.Contains(body, "AuthFailure.InvalidAuthorization") {
		t.Fatalf("DescribeInstances with Authorization SKIP: %s", body)
	}
	if _, body := e.do(t, rawReq{authorization: "-"}); !strings.Contains(body, "AuthFailure.InvalidAuthorization") {
		t.Fatalf("DescribeInstances unsigned: %s", body)
	}
	if _, body := e.do(t, rawReq{authorization: "SKIP", action: "AssumeRoleWithWebIdentity", version: "2018-08-13", hostHeader: "cvm.tencentcloudapi.com"}); !strings.Contains(body, "InvalidAction") {
		t.Fatalf("AssumeRoleWithWebIdentity at the cvm host: %s", body)
	}
}

// TestParseMetadataRole: the --metadata-role flag's value.
func TestParseMetadataRole(t *testing.T) {
	tests := []struct {
		in      string
		want    Role
		wantErr bool
	}{
		{"ccm", Role{Name: "ccm"}, false},
		{"ccm:20", Role{Name: "ccm", SessionDurationSeconds: 20}, false},
		{"ccm:0", Role{}, true},
		{"ccm:x", Role{}, true},
		{"bad name:20", Role{}, true},
	}
	for _, tt := range tests {
		got, err := parseMetadataRole(tt.in)
		if (err != nil) != tt.wantErr || got.Name != tt.want.Name || got.SessionDurationSeconds != tt.want.SessionDurationSeconds {
			t.Errorf("parseMetadataRole(%q) = %+v, %v", tt.in, got, err)
		}
	}
}
