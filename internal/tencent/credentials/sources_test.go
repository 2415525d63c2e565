package credentials

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/profile"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"

	"github.com/ccmkit/ccm/internal/testcluster/secretvolume"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

const (
	region    = "ap-guangzhou"
	staticID  = "AKIDcredentialstest000000000000000"
	staticKey = "credentials-test-key-0001"
)

func startSim(t *testing.T, opts cloudsim.TencentOptions) (*cloudsim.Sim, string) {
	t.Helper()
	if opts.Credentials == nil {
		opts.Credentials = map[string]string{staticID: staticKey}
	}
	sim := cloudsim.New(cloudsim.Options{Region: region, Tencent: opts, Latency: cloudsim.ZeroLatency})
	url, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	return sim, url
}

// describe is one DescribeInstances through the real SDK signed by cred;
// it returns the error (nil on success).
func describe(url string, cred common.CredentialIface) error {
	cpf := profile.NewClientProfile()
	cpf.HttpProfile.Endpoint = strings.TrimPrefix(url, "http://")
	cpf.HttpProfile.Scheme = "HTTP"
	client, err := cvm.NewClient(cred, region, cpf)
	if err != nil {
		return err
	}
	_, err = client.DescribeInstances(cvm.NewDescribeInstancesRequest())
	return err
}

// TestCVMRole: the role is discovered when not named, the credentials
// sign calls with their token, and they are refreshed before they expire
// (a 6 s session, refreshed with half of it left: a starved refresher
// once let a 2 s session run out under a loaded CI machine).
func TestCVMRole(t *testing.T) {
	prov := provider("TestCVMRole")
	sim, url := startSim(t, cloudsim.TencentOptions{
		Roles:        []tencent.Role{{Name: "ccm-node", SessionDurationSeconds: 6}},
		MetadataRole: "ccm-node",
	})
	for _, name := range []string{"", "ccm-node"} {
		src := CVMRole{Endpoint: url, RoleName: name}
		v, err := src.Fetch(context.Background())
		if err != nil {
			t.Fatalf("role %q: %v", name, err)
		}
		if v.Token == "" || time.Until(v.Expiry) > 6*time.Second {
			t.Fatalf("role %q: %+v", name, v.Expiry)
		}
	}
	if _, err := (CVMRole{Endpoint: url, RoleName: "other"}).Fetch(context.Background()); err == nil || !strings.Contains(err.Error(), "404: no such CAM role is bound") {
		t.Fatalf("unbound role: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := Start(ctx, prov, CVMRole{Endpoint: url}, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	before := sim.Tencent().CAM().Issued("ccm-node")
	deadline := time.Now().Add(7 * time.Second)
	calls := 0
	for time.Now().Before(deadline) { // past the first credentials' expiry
		if err := describe(url, c); err != nil {
			t.Fatalf("call %d: %v", calls, err)
		}
		calls++
		time.Sleep(50 * time.Millisecond)
	}
	// Every call past the first credentials' expiry (6 s) succeeded, so
	// they were refreshed in time; at least once, whatever the load.
	if got := sim.Tencent().CAM().Issued("ccm-node") - before; got < 1 {
		t.Fatalf("%d refreshes in 7 s of 6 s credentials, want at least 1", got)
	}
}

// issuer is a minimal OIDC issuer, as a kube-apiserver serves one.
type issuer struct {
	url string
	key *rsa.PrivateKey
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is := &issuer{key: key}
	b64 := base64.RawURLEncoding.EncodeToString
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": is.url, "jwks_uri": is.url + "openid/v1/jwks"})
	})
	mux.HandleFunc("/openid/v1/jwks", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
			"kty": "RSA", "kid": "k1", "n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes()),
		}}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	is.url = srv.URL + "/"
	return is
}

func (is *issuer) token(t *testing.T, aud string, life time.Duration) string {
	t.Helper()
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	now := time.Now().Unix()
	signed := enc(map[string]string{"alg": "RS256", "kid": "k1"}) + "." + enc(map[string]any{
		"iss": is.url, "sub": "system:serviceaccount:kube-system:cloud-controller-manager", "aud": []string{aud},
		"iat": now, "nbf": now, "exp": now + int64(life/time.Second),
	})
	digest := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, is.key, crypto.SHA256, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// TestWebIdentity: the token file is exchanged at STS for credentials
// that sign calls; the file is read again at every refresh, so a token
// replaced by the kubelet is used, and a bad token fails with STS's code.
func TestWebIdentity(t *testing.T) {
	prov := provider("TestWebIdentity")
	is := newIssuer(t)
	sim, url := startSim(t, cloudsim.TencentOptions{
		OIDCProviders: []tencent.OIDCProvider{{ID: "cluster", Issuer: is.url, ClientIDs: []string{"sts.cloud.tencent.com"}}},
		Roles:         []tencent.Role{{Name: "ccm", SessionDurationSeconds: 2, OIDCProviders: []string{"cluster"}}},
	})
	dir := t.TempDir()
	if err := secretvolume.Write(dir, map[string]string{"token": is.token(t, "sts.cloud.tencent.com", time.Hour)}); err != nil {
		t.Fatal(err)
	}
	src := WebIdentity{
		Region: region, TokenFile: filepath.Join(dir, "token"), RoleArn: tencent.RoleArn("ccm"), ProviderID: "cluster",
		Session: "test", Duration: time.Hour, Endpoint: strings.TrimPrefix(url, "http://"), Scheme: "HTTP",
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := Start(ctx, prov, src, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if left := time.Until(c.Value().Expiry); left > 2*time.Second {
		t.Fatalf("credentials last %s, want the role's 2 s session at most", left)
	}
	if err := describe(url, c); err != nil {
		t.Fatal(err)
	}
	issued := sim.Tencent().CAM().Issued("ccm")
	// A new token with another audience: the next refresh reads it and is
	// refused, and the current credentials stay.
	if err := secretvolume.Write(dir, map[string]string{"token": is.token(t, "kubernetes", time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Fetch(ctx); err == nil || !strings.Contains(err.Error(), "InvalidParameter.WebIdentityTokenError") {
		t.Fatalf("wrong audience: %v", err)
	}
	if err := secretvolume.Write(dir, map[string]string{"token": is.token(t, "sts.cloud.tencent.com", time.Hour)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "a refresh", func() bool { return sim.Tencent().CAM().Issued("ccm") > issued })
	if err := describe(url, c); err != nil {
		t.Fatal(err)
	}
}

// TestKeyFilesRotation: the key files are swapped the way the kubelet
// swaps a mounted Secret; calls made all along never fail, the next calls
// use the new key, and then the old key can be revoked.
func TestKeyFilesRotation(t *testing.T) {
	prov := provider("TestKeyFilesRotation")
	const newID, newKey = "AKIDcredentialstestROTATED000000000", "credentials-test-key-0002"
	sim, url := startSim(t, cloudsim.TencentOptions{Credentials: map[string]string{staticID: staticKey, newID: newKey}})
	dir := t.TempDir()
	if err := secretvolume.Write(dir, map[string]string{"secret_id": staticID, "secret_key": staticKey + "\n"}); err != nil {
		t.Fatal(err)
	}
	src := KeyFiles{
		SecretID:  KeyPart{File: filepath.Join(dir, "secret_id")},
		SecretKey: KeyPart{File: filepath.Join(dir, "secret_key")},
		Poll:      time.Hour, // the change must come from the watch
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := Start(ctx, prov, src, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if c.GetSecretId() != staticID || c.GetSecretKey() != staticKey {
		t.Fatal("the files were not read")
	}

	// Calls in a loop while the files change.
	var failed, done atomic.Int32
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := describe(url, c); err != nil {
				t.Errorf("call during rotation: %v", err)
				failed.Add(1)
			}
			done.Add(1)
			time.Sleep(30 * time.Millisecond) // under DescribeInstances' 40/s
		}
	}()
	if err := secretvolume.Write(dir, map[string]string{"secret_id": newID, "secret_key": newKey}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the new key in use", func() bool { return c.GetSecretId() == newID })
	// The operator revokes the old key once nothing uses it: a call signed
	// just before the swap may still be on its way (it failed once, starved
	// in a loaded run), so the old key goes after two more calls have ended:
	// the one in flight, and one signed with the new key.
	seen := done.Load()
	waitFor(t, 5*time.Second, "the calls in flight at the swap ended", func() bool { return done.Load() >= seen+2 })
	if err := sim.Tencent().CAM().RevokeKey(staticID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // calls keep going with the new key only
	close(stop)
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d calls failed", failed.Load())
	}
	if metric(t, prov, "ok") != 1 {
		t.Fatalf("refreshes ok = %v, want 1 (one change)", metric(t, prov, "ok"))
	}

	// A Secret updated with an empty key is refused and the current key
	// stays.
	if err := secretvolume.Write(dir, map[string]string{"secret_id": staticID, "secret_key": ""}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the failed re-read counted", func() bool { return metric(t, prov, "error") >= 1 })
	if c.GetSecretKey() != newKey {
		t.Fatal("an empty key file replaced the key")
	}
}

// TestKeyFilesReadOneVersion: while the kubelet swaps the Secret between
// two key pairs back to back, every read returns one of the pairs, never
// the id of one with the key of the other (which would fail every call
// signed with it).
func TestKeyFilesReadOneVersion(t *testing.T) {
	pairs := []map[string]string{
		{"secret_id": "AKIDonetestpair00000000000000000000", "secret_key": "one-test-key"},
		{"secret_id": "AKIDtwotestpair00000000000000000000", "secret_key": "two-test-key"},
	}
	dir := t.TempDir()
	if err := secretvolume.Write(dir, pairs[0]); err != nil {
		t.Fatal(err)
	}
	src := KeyFiles{
		SecretID:  KeyPart{File: filepath.Join(dir, "secret_id")},
		SecretKey: KeyPart{File: filepath.Join(dir, "secret_key")},
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for i := 1; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if err := secretvolume.Write(dir, pairs[i%2]); err != nil {
				done <- err
				return
			}
		}
	}()
	reads, errs, torn := 0, 0, 0
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); reads++ {
		v, err := src.Fetch(context.Background())
		if err != nil {
			errs++ // a read may fail (the current key stays); it must not tear
			continue
		}
		if !slices.ContainsFunc(pairs, func(p map[string]string) bool {
			return v.SecretID == p["secret_id"] && v.SecretKey == p["secret_key"]
		}) {
			torn++
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if torn > 0 {
		t.Fatalf("%d of %d reads returned the id of one pair with the key of the other", torn, reads)
	}
	if errs > reads/2 {
		t.Fatalf("%d of %d reads failed", errs, reads)
	}
	t.Logf("%d reads, %d failed (the current key stays), none torn", reads, errs)
}
