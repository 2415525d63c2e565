//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/deploy"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/internal/testcluster/secretvolume"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// credentialLifetime is the temporary credentials' lifetime in these tests
// (the roles' session duration in cloudsim): the CCM refreshes them at
// half of it, so three refreshes take about 30 s.
const credentialLifetime = 20

// writeCredentialConfig writes a Tencent cloud config without a key,
// with the credential settings in extra. The drift check runs every 5 s,
// so that the CCM calls the API with every generation of credentials.
func writeCredentialConfig(t *testing.T, name, extra string) string {
	t.Helper()
	path := filepath.Join(suite.dir, name+".yaml")
	cfg := fmt.Sprintf("region: %s\nvpc_id: %s\napi_endpoint: %s\nlb_delete_retry_after: %s\nlb_drain_period: %s\nlb_drift_check_period: 5s\n%s",
		region, vpcID, suite.simURL, clbDeleteRetryAfter, e2eDrainPeriod, extra)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// underShippedCAMPolicy attaches the shipped CAM policy to subject (a role,
// or a key's SecretId) for the test, as the suite's own CCM runs under it.
func underShippedCAMPolicy(t *testing.T, subject string) {
	t.Helper()
	if err := suite.sim.Tencent().AttachPolicy(subject, deploy.TencentCAMPolicy); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = suite.sim.Tencent().DetachPolicies(subject) })
}

// credentialRun is what a credential scenario measured.
type credentialRun struct {
	metrics string // the CCM's /metrics at the end
}

// runWithCredentials starts a CCM (the suite's own paused) with cloudConfig,
// initializes a node, serves a LoadBalancer Service with traffic, keeps
// traffic flowing until the credentials of source were refreshed
// minRefreshes times and calls were made with each, initializes a second
// node with the newest ones, and checks that no call was refused: in
// cloudsim's call log (every call made as subject) and in the CCM's
// metrics.
func runWithCredentials(t *testing.T, name, cloudConfig, source, subject string, minRefreshes int) credentialRun {
	t.Helper()
	pauseMainCCM(t)
	p, err := startCCM(name, cloudConfig, "--controllers=cloud-node,cloud-node-lifecycle,service")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop) // after the Service's cleanup, which needs the CCM
	token := metricsReaderToken(t)
	refreshes := func() (ok, failed float64, body string) {
		code, body := scrape(t, p.SecurePort, "/metrics", token)
		if code != 200 {
			return 0, 0, ""
		}
		labels := map[string]string{"provider": "tencentcloud", "source": source}
		return sumMetric(body, "ccmkit_credentials_refreshes_total", withLabel(labels, "result", "ok")),
			sumMetric(body, "ccmkit_credentials_refreshes_total", withLabel(labels, "result", "error")), body
	}

	// Node initialization.
	in := newInstance(t, name+"-node")
	registerNode(t, testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP})
	waitNode(t, in.PrivateIP, 60*time.Second, "initialized", initialized)

	// A LoadBalancer Service carrying traffic.
	n := lbNode(t, name)
	spec := lbServiceSpec(name, name, 8080)
	np := nodePort(spec, 8080)
	serve(t, n.PrivateIP, np, 200, name)
	svc := createService(t, spec)
	vip := waitIngress(t, svc, 60*time.Second)
	url := fmt.Sprintf("http://%s:8080/", vip)
	waitAnswers(t, url, 30*time.Second, name)

	// Traffic flows while the credentials are refreshed; the drift check
	// calls the API with every generation.
	probe := startProber(url)
	start, budget := time.Now(), time.Duration(minRefreshes+2)*credentialLifetime*time.Second/2+30*time.Second
	for {
		ok, _, _ := refreshes()
		_, keys := subjectCodes(subject)
		if int(ok) >= minRefreshes+1 && keys >= minRefreshes+1 { // the first fetch counts too
			t.Logf("%s: %v refreshes, calls with %d sets of credentials, after %s", name, ok, keys, time.Since(start).Round(time.Second))
			break
		}
		if time.Since(start) > budget {
			t.Fatalf("%s: %v refreshes and calls with %d sets of credentials within %s, want %d of each", name, ok, keys, budget, minRefreshes+1)
		}
		time.Sleep(time.Second)
	}
	// A node initialized with the newest credentials.
	in2 := newInstance(t, name+"-node-2")
	registerNode(t, testcluster.NodeSpec{Name: in2.PrivateIP, InternalIP: in2.PrivateIP})
	waitNode(t, in2.PrivateIP, 60*time.Second, "initialized", initialized)
	probe.finish(t, name+": traffic across the credential refreshes")

	codes, keys := subjectCodes(subject)
	for code, n := range codes {
		if strings.HasPrefix(code, "AuthFailure") {
			t.Errorf("%s: %d calls as %s refused with %s; all codes %v", name, n, subject, code, codes)
		}
	}
	if codes["OK"] == 0 {
		t.Errorf("%s: no successful call as %s: %v", name, subject, codes)
	}
	_, failed, body := refreshes()
	if failed != 0 {
		t.Errorf("%s: ccmkit_credentials_refreshes_total{result=error} = %v, want 0", name, failed)
	}
	if auth := sumMetric(body, "ccmkit_cloud_api_requests_total", map[string]string{"provider": "tencentcloud", "result": "auth"}); auth != 0 {
		t.Errorf("%s: ccmkit_cloud_api_requests_total{result=auth} = %v, want 0", name, auth)
	}
	t.Logf("%s: calls as %s: %v, with %d sets of credentials", name, subject, codes, keys)
	addSecrets(suite.sim.Tencent().CAM().TempSecrets()...)
	mustNotContainSecret(t, "/metrics", body)
	return credentialRun{metrics: body}
}

// checkExpiryMetrics: a temporary source reports when its credentials
// expire, within one lifetime from now.
func checkExpiryMetrics(t *testing.T, body, source string) {
	t.Helper()
	labels := map[string]string{"provider": "tencentcloud", "source": source}
	until := sumMetric(body, "ccmkit_credentials_seconds_until_expiry", labels)
	if until <= 0 || until > credentialLifetime {
		t.Errorf("ccmkit_credentials_seconds_until_expiry{source=%s} = %v, want in (0, %d]", source, until, credentialLifetime)
	}
	if exp := sumMetric(body, "ccmkit_credentials_expiry_timestamp_seconds", labels); exp < float64(time.Now().Unix()) {
		t.Errorf("ccmkit_credentials_expiry_timestamp_seconds{source=%s} = %v, in the past", source, exp)
	}
}

// The CCM without a key, on a CVM bound to a CAM role: temporary
// credentials from the metadata service (cloudsim's), the role found
// there, refreshed before they expire, and never refused.
func TestTencentCredentialsCVMRole(t *testing.T) {
	const role = "ccm-e2e-cvm-role"
	cam := suite.sim.Tencent().CAM()
	if _, err := cam.PutRole(tencent.Role{Name: role, SessionDurationSeconds: credentialLifetime}); err != nil {
		t.Fatal(err)
	}
	if err := cam.BindMetadataRole(role); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cam.BindMetadataRole("") })
	underShippedCAMPolicy(t, "role/"+role)

	cfg := writeCredentialConfig(t, "cloud-cvm-role", "credential_source: cvm-role\nmetadata_endpoint: "+suite.simURL+"\n")
	run := runWithCredentials(t, "ccm-cvm-role", cfg, "cvm-role", "role/"+role, 3)
	checkExpiryMetrics(t, run.metrics, "cvm-role")
}

// The CCM without a key, as TKE runs workloads: a ServiceAccount token
// projected by the real kube-apiserver (minted through the TokenRequest
// API with the identity provider's audience, and replaced in the file
// atomically as the kubelet does) exchanged at STS, which verifies it
// against the apiserver's OIDC discovery document and JWKS.
func TestTencentCredentialsWebIdentity(t *testing.T) {
	const (
		role     = "ccm-e2e-web-identity"
		provider = "ccm-e2e-cluster"
		audience = "sts.cloud.tencent.com"
	)
	ctx := context.Background()
	c := suite.cluster.Client
	// The real apiserver serves discovery to anonymous callers only with
	// this binding (Kubernetes' "Service account issuer discovery"), as a
	// cloud's STS fetches it without credentials.
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "ccm-e2e-oidc-discovery"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:service-account-issuer-discovery"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:unauthenticated"}},
	}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.RbacV1().ClusterRoleBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
	})
	raw, err := c.CoreV1().RESTClient().Get().AbsPath("/.well-known/openid-configuration").DoRaw(ctx)
	if err != nil {
		t.Fatalf("the apiserver's discovery document: %v", err)
	}
	var discovery struct{ Issuer string }
	if err := json.Unmarshal(raw, &discovery); err != nil || discovery.Issuer == "" {
		t.Fatalf("discovery document %s: %v", raw, err)
	}

	cam := suite.sim.Tencent().CAM()
	if err := cam.PutOIDCProvider(tencent.OIDCProvider{
		ID: provider, Issuer: discovery.Issuer, ClientIDs: []string{audience}, CAPEM: string(suite.cluster.Admin.CAData),
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := cam.PutRole(tencent.Role{
		Name: role, SessionDurationSeconds: credentialLifetime, OIDCProviders: []string{provider},
		Subjects: []string{"system:serviceaccount:kube-system:cloud-controller-manager"},
	}); err != nil {
		t.Fatal(err)
	}
	underShippedCAMPolicy(t, "role/"+role)

	// The projected token: what the kubelet writes for a serviceAccountToken
	// volume source with this audience, renewed (here every 10 s, well
	// before the 10-minute minimum lifetime ends) through the same atomic
	// directory swap.
	tokenDir := filepath.Join(suite.dir, "web-identity-token")
	mint := func() error {
		exp := int64(600) // the TokenRequest API's minimum
		tr, err := c.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, "cloud-controller-manager",
			&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{Audiences: []string{audience}, ExpirationSeconds: &exp}}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		addSecrets(tr.Status.Token)
		return secretvolume.Write(tokenDir, map[string]string{"token": tr.Status.Token})
	}
	if err := mint(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Second):
			}
			if err := mint(); err != nil {
				t.Errorf("renew the projected token: %v", err)
			}
		}
	}()
	t.Cleanup(func() { close(stop); wg.Wait() })

	cfg := writeCredentialConfig(t, "cloud-web-identity", fmt.Sprintf(
		"web_identity_token_file: %s\nweb_identity_role_arn: %s\nweb_identity_provider_id: %s\nsts_endpoint: %s\n",
		filepath.Join(tokenDir, "token"), tencent.RoleArn(role), provider, suite.simURL))
	run := runWithCredentials(t, "ccm-web-identity", cfg, "web-identity", "role/"+role, 3)
	checkExpiryMetrics(t, run.metrics, "web-identity")
	if n := sumMetric(run.metrics, "ccmkit_cloud_api_requests_total", map[string]string{"action": "AssumeRoleWithWebIdentity", "result": "ok"}); n < 4 {
		t.Errorf("ccmkit_cloud_api_requests_total{action=AssumeRoleWithWebIdentity,result=ok} = %v, want >= 4", n)
	}
}

// Key rotation without a restart: the key Secret's files are swapped the
// way the kubelet swaps a mounted Secret; the next calls use the new key;
// the old key is then revoked in cloudsim; no call fails.
func TestTencentKeyRotation(t *testing.T) {
	const (
		oldID, oldKey = "AKIDccmkitROTATIONOLD00000000000000", "ccmkit-e2e-rotation-OLD-key-0001"
		newID, newKey = "AKIDccmkitROTATIONNEW00000000000000", "ccmkit-e2e-rotation-NEW-key-0002"
	)
	addSecrets(oldKey, newKey)
	cam := suite.sim.Tencent().CAM()
	if err := cam.AddKey(oldID, oldKey); err != nil {
		t.Fatal(err)
	}
	underShippedCAMPolicy(t, oldID)
	underShippedCAMPolicy(t, newID)
	keyDir := filepath.Join(suite.dir, "rotation-key")
	if err := secretvolume.Write(keyDir, map[string]string{"secret-id": oldID, "secret-key": oldKey}); err != nil {
		t.Fatal(err)
	}
	cfg := writeCredentialConfig(t, "cloud-rotation", fmt.Sprintf("secret_id_file: %s\nsecret_key_file: %s\n",
		filepath.Join(keyDir, "secret-id"), filepath.Join(keyDir, "secret-key")))

	pauseMainCCM(t)
	p, err := startCCM("ccm-rotation", cfg, "--controllers=cloud-node,cloud-node-lifecycle,service")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)

	in := newInstance(t, "rotation-node")
	registerNode(t, testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP})
	waitNode(t, in.PrivateIP, 60*time.Second, "initialized with the old key", initialized)
	n := lbNode(t, "rotation")
	spec := lbServiceSpec("rotation", "rotation", 8080)
	serve(t, n.PrivateIP, nodePort(spec, 8080), 200, "rotation")
	svc := createService(t, spec)
	url := fmt.Sprintf("http://%s:8080/", waitIngress(t, svc, 60*time.Second))
	waitAnswers(t, url, 30*time.Second, "rotation")
	probe := startProber(url)

	// The new key is made in the console, then the Secret updated.
	if err := cam.AddKey(newID, newKey); err != nil {
		t.Fatal(err)
	}
	if err := secretvolume.Write(keyDir, map[string]string{"secret-id": newID, "secret-key": newKey}); err != nil {
		t.Fatal(err)
	}
	// The next calls use the new key (the drift check calls every 5 s),
	// and no call with the old one is still on its way.
	swapped := time.Now()
	deadline := swapped.Add(30 * time.Second)
	for callsBy(newID) == 0 || time.Since(lastCallBy(oldID)) < 3*time.Second {
		if time.Now().After(deadline) {
			t.Fatalf("within 30 s of the swap: %d calls with the new key, last call with the old one %s ago",
				callsBy(newID), time.Since(lastCallBy(oldID)).Round(time.Millisecond))
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("new key in use %s after the swap", time.Since(swapped).Round(time.Millisecond))
	if err := cam.RevokeKey(oldID); err != nil {
		t.Fatal(err)
	}
	oldCalls := callsBy(oldID)

	// Everything keeps working with the new key alone.
	in2 := newInstance(t, "rotation-node-2")
	registerNode(t, testcluster.NodeSpec{Name: in2.PrivateIP, InternalIP: in2.PrivateIP})
	waitNode(t, in2.PrivateIP, 60*time.Second, "initialized with the new key", initialized)
	probe.finish(t, "traffic across the key rotation")
	if callsBy(oldID) != oldCalls {
		t.Errorf("%d calls with the revoked key", callsBy(oldID)-oldCalls)
	}
	for _, id := range []string{oldID, newID} {
		codes, _ := subjectCodes(id)
		for code, n := range codes {
			if code != "OK" && !strings.HasPrefix(code, "RequestLimitExceeded") {
				t.Errorf("%d calls with key %s failed with %s (all: %v)", n, id, code, codes)
			}
		}
	}
	code, body := scrape(t, p.SecurePort, "/metrics", metricsReaderToken(t))
	if code != 200 {
		t.Fatalf("/metrics: HTTP %d", code)
	}
	labels := map[string]string{"provider": "tencentcloud", "source": "key-files"}
	if ok := sumMetric(body, "ccmkit_credentials_refreshes_total", withLabel(labels, "result", "ok")); ok != 1 {
		t.Errorf("ccmkit_credentials_refreshes_total{source=key-files,result=ok} = %v, want 1 (one rotation)", ok)
	}
	if auth := sumMetric(body, "ccmkit_cloud_api_requests_total", map[string]string{"provider": "tencentcloud", "result": "auth"}); auth != 0 {
		t.Errorf("ccmkit_cloud_api_requests_total{result=auth} = %v, want 0", auth)
	}
	mustNotContainSecret(t, "/metrics", body)
}
