//go:build e2e

package e2e

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccmkit/ccm/deploy"
	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/internal/testcluster/secretvolume"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// The OCI credential sources other than an inline key: instance
// principals (no key at all) with short-lived tokens, and an API key in a
// mounted Secret rotated without a restart. Each runs node initialization
// and a LoadBalancer Service carrying traffic, while the credentials
// change under it, and proves from cloudsim's call log and the CCM's
// metrics that no call was refused.

// ociTokenLifetime is how long the suite's cloudsim keeps an instance
// principal's token valid (20 minutes on the real cloud).
const ociTokenLifetime = 20 * time.Second

// TestOCIInstancePrincipals runs the OCI CCM as an instance principal: the
// config holds no key; the CCM reads the instance's identity from the
// metadata service and gets 20-second security tokens from the federation
// endpoint, renewing them ahead of expiry, at least three times here.
func TestOCIInstancePrincipals(t *testing.T) {
	e := theOCIEnv
	e.prepare(t)
	start := time.Now()
	host := e.newInstance(t, "ccm-host")
	if _, err := suite.sim.OCI().SetMetadataInstance(host.OCID, ociTenancy); err != nil {
		t.Fatal(err)
	}
	e.addSecret(instanceKeyPEM(t))
	// The instance is in a dynamic group under the shipped policy's
	// dynamic-group block, and nothing else.
	underShippedOCIPolicy(t, "dynamic-group", "ccm-e2e-instance-principal", simoci.IAMSeed{
		DynamicGroups: map[string]string{"ccm-e2e-instance-principal": "instance.id = '" + host.OCID + "'"}})
	tokensBefore := federations(host.OCID)

	cfg := filepath.Join(suite.dir, "cloud-oci-instance-principal.yaml")
	writeFile(t, cfg, []byte(fmt.Sprintf(`useInstancePrincipals: true
auth:
  metadataEndpoint: %s/opc/v2
  federationEndpoint: %s
compartment: %s
vcn: %s
loadBalancer:
  subnet1: %s
endpoint: %s
instanceCacheTTL: 2s
lbDriftCheckPeriod: 2s
lbDrainPeriod: %s
`, suite.simURL, suite.simURL, ociCompartment, ociVCN, ociLBSubnet, suite.simURL, e2eDrainPeriod)), 0o600)
	p := e.runExclusiveWith(t, "ccm-oci-instance-principal", cfg, lbControllers...)

	url := ociNodeAndTraffic(t, "oci-ip")
	prober := startProber(url)
	// The first token and three renewals, each while the CCM works: the
	// drift check reads every 2 s, the status sync and lifecycle checks
	// read the nodes.
	waitFor(t, "four security tokens (three renewals)", 3*ociTokenLifetime+60*time.Second, func() bool {
		return federations(host.OCID)-tokensBefore >= 4
	})
	prober.finish(t, "across the token renewals")
	// One more node after the renewals: initialization calls with the
	// latest token.
	ociInitializeNode(t, "oci-ip-late")

	if n := callsBy(host.OCID); n < 20 {
		t.Errorf("the instance principal made %d calls, want the CCM's calls", n)
	}
	if failed := failedBy(host.OCID); len(failed) > 0 {
		t.Errorf("calls by the instance principal failed: %v, want none (no call refused for an expired token)", failed)
	}
	body := ociMetrics(t, p)
	ip := map[string]string{"provider": "oci", "source": "instance-principal"}
	tokens := federations(host.OCID) - tokensBefore
	if ok := sumMetric(body, "ccmkit_credentials_refreshes_total", withLabel(ip, "result", "ok")); ok < 4 || int(ok) != tokens {
		t.Errorf("ccmkit_credentials_refreshes_total{result=ok} = %v, cloudsim issued %d tokens; want them equal, at least 4", ok, tokens)
	}
	if bad := sumMetric(body, "ccmkit_credentials_refreshes_total", withLabel(ip, "result", "error")); bad != 0 {
		t.Errorf("ccmkit_credentials_refreshes_total{result=error} = %v, want 0", bad)
	}
	if left := sumMetric(body, "ccmkit_credentials_seconds_until_expiry", ip); left <= 0 || left > ociTokenLifetime.Seconds() {
		t.Errorf("ccmkit_credentials_seconds_until_expiry = %v, want within (0, %v]", left, ociTokenLifetime.Seconds())
	}
	if auth := sumMetric(body, "ccmkit_cloud_api_requests_total", map[string]string{"provider": "oci", "result": "auth"}); auth != 0 {
		t.Errorf("ccmkit_cloud_api_requests_total{result=auth} = %v, want 0", auth)
	}
	t.Logf("instance principal: %d tokens (%d renewals) in %s, %d calls by the instance, none refused",
		tokens, tokens-1, time.Since(start).Round(time.Second), callsBy(host.OCID))
}

// TestOCIKeyRotation rotates the CCM's API key the way an operator does
// with a mounted Secret: the new public key is added to the user, the
// Secret's files change (swapped by the kubelet through "..data"), the CCM
// signs with the new key without a restart, and only then is the old key
// revoked. No call fails.
func TestOCIKeyRotation(t *testing.T) {
	e := theOCIEnv
	e.prepare(t)
	const user = "ocid1.user.oc1..aaaaaaaae2erotation"
	oldKey, newKey := newRSAKey(t), newRSAKey(t)
	oldID, newID := ociTenancy+"/"+user+"/"+ociFingerprint(oldKey), ociTenancy+"/"+user+"/"+ociFingerprint(newKey)
	e.addSecret(privatePEM(oldKey))
	e.addSecret(privatePEM(newKey))
	if _, err := suite.sim.OCI().AddKey(oldID, publicPEM(oldKey)); err != nil {
		t.Fatal(err)
	}
	underShippedOCIPolicy(t, "group", "ccm-e2e-rotation", simoci.IAMSeed{Groups: map[string][]string{"ccm-e2e-rotation": {user}}})
	vol, err := secretvolume.New(filepath.Join(suite.dir, "oci-key-secret"), keyFiles(oldKey))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(suite.dir, "cloud-oci-key-rotation.yaml")
	writeFile(t, cfg, []byte(fmt.Sprintf(`auth:
  region: %s
  tenancy: %s
  user: %s
  key_file: %s
  fingerprint_file: %s
compartment: %s
vcn: %s
loadBalancer:
  subnet1: %s
endpoint: %s
instanceCacheTTL: 2s
lbDriftCheckPeriod: 2s
lbDrainPeriod: %s
`, ociRegion, ociTenancy, user, vol.Path("key.pem"), vol.Path("fingerprint"), ociCompartment, ociVCN, ociLBSubnet, suite.simURL, e2eDrainPeriod)), 0o600)
	p := e.runExclusiveWith(t, "ccm-oci-key-rotation", cfg, lbControllers...)

	url := ociNodeAndTraffic(t, "oci-rot")
	prober := startProber(url)
	if callsBy(oldID) == 0 {
		t.Fatal("no call signed with the first key")
	}

	// Rotate: the user gets the new key, then the Secret changes.
	if _, err := suite.sim.OCI().AddKey(newID, publicPEM(newKey)); err != nil {
		t.Fatal(err)
	}
	rotated := time.Now()
	if err := vol.Update(keyFiles(newKey)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a call signed with the new key", 30*time.Second, func() bool { return callsBy(newID) >= 1 })
	t.Logf("the CCM's first call with the new key came %s after the Secret changed", time.Since(rotated).Round(time.Millisecond))
	waitFor(t, "calls signed with the new key", 30*time.Second, func() bool { return callsBy(newID) >= 5 })
	// Only now is the old key revoked.
	oldCalls := callsBy(oldID)
	if err := suite.sim.OCI().RemoveKey(oldID); err != nil {
		t.Fatal(err)
	}
	ociInitializeNode(t, "oci-rot-late")
	newCalls := callsBy(newID)
	waitFor(t, "more calls with the new key", 30*time.Second, func() bool { return callsBy(newID) >= newCalls+5 })
	prober.finish(t, "across the key rotation")

	if n := callsBy(oldID); n != oldCalls {
		t.Errorf("%d calls signed with the old key after it was revoked", n-oldCalls)
	}
	for _, id := range []string{oldID, newID} {
		if failed := failedBy(id); len(failed) > 0 {
			t.Errorf("calls signed with %s failed: %v, want none", id, failed)
		}
	}
	body := ociMetrics(t, p)
	files := map[string]string{"provider": "oci", "source": "key-files"}
	if ok := sumMetric(body, "ccmkit_credentials_refreshes_total", withLabel(files, "result", "ok")); ok != 2 {
		t.Errorf("ccmkit_credentials_refreshes_total{source=key-files,result=ok} = %v, want 2 (the first read and the rotation)", ok)
	}
	if bad := sumMetric(body, "ccmkit_credentials_refreshes_total", withLabel(files, "result", "error")); bad != 0 {
		t.Errorf("ccmkit_credentials_refreshes_total{result=error} = %v, want 0", bad)
	}
	if auth := sumMetric(body, "ccmkit_cloud_api_requests_total", map[string]string{"provider": "oci", "result": "auth"}); auth != 0 {
		t.Errorf("ccmkit_cloud_api_requests_total{result=auth} = %v, want 0", auth)
	}
	if !strings.Contains(p.Output(), "Reloaded the OCI API key") {
		t.Error("the CCM did not log the reload")
	}
}

// underShippedOCIPolicy seeds iam (a group or dynamic group named name) with
// the shipped OCI policy's block for it (kind "group" or "dynamic-group"),
// removed at the end of the test.
func underShippedOCIPolicy(t *testing.T, kind, name string, iam simoci.IAMSeed) {
	t.Helper()
	iam.Policies = map[string][]string{name: policyLines(deploy.OCIPolicyFor(kind, name, ociCompartmentName))}
	if err := suite.sim.OCI().SeedIAM(iam); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = suite.sim.OCI().RemoveIAM("policies", name)
		what := "groups"
		if kind == "dynamic-group" {
			what = "dynamicGroups"
		}
		_ = suite.sim.OCI().RemoveIAM(what, name)
	})
}

// ociNodeAndTraffic initializes a node, and gives a LoadBalancer Service on
// a second node an OCI load balancer that carries traffic; it returns the
// Service's URL.
func ociNodeAndTraffic(t *testing.T, sel string) string {
	t.Helper()
	ociInitializeNode(t, sel+"-init")
	n := ociLBNode(t, sel)
	spec := lbServiceSpec(sel, sel, 8080)
	spec.Annotations[annotations.OCILoadBalancerType.String()] = "lb"
	np := nodePort(spec, 8080)
	serve(t, n.PrivateIP, np, 200, "node-1")
	svc := createService(t, spec)
	vip := waitIngress(t, svc, 90*time.Second)
	url := fmt.Sprintf("http://%s:8080/", vip)
	waitAnswers(t, url, 30*time.Second, "node-1")
	return url
}

// ociInitializeNode registers a Node for a new instance, named as the
// instance, and waits until the CCM has initialized it.
func ociInitializeNode(t *testing.T, name string) {
	t.Helper()
	in := theOCIEnv.newInstance(t, name)
	registerNode(t, testcluster.NodeSpec{Name: in.Name})
	n := waitNode(t, in.Name, 60*time.Second, "initialized", initialized)
	if providerID(n) != "oci://"+in.OCID {
		t.Fatalf("node %s: providerID %q, want oci://%s", in.Name, providerID(n), in.OCID)
	}
}

// federations counts the federation calls of an instance: the tokens
// cloudsim issued it, as the tests check that none of its calls failed.
func federations(instance string) int { return actionCallsBy(instance, simoci.ActionFederation) }

// instanceKeyPEM reads the metadata instance's private key, as software on
// the instance can: the leak scan looks for it.
func instanceKeyPEM(t *testing.T) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, suite.simURL+"/opc/v2/identity/key.pem", nil)
	req.Header.Set("Authorization", "Bearer Oracle")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "PRIVATE KEY") {
		t.Fatalf("GET /opc/v2/identity/key.pem: %d", resp.StatusCode)
	}
	return string(b)
}

// ociMetrics scrapes the CCM's /metrics as a metrics reader.
func ociMetrics(t *testing.T, p *testcluster.Process) string {
	t.Helper()
	code, body := scrape(t, p.SecurePort, "/metrics", metricsReaderToken(t))
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: HTTP %d", code)
	}
	if theOCIEnv.leaksSecret(body) {
		t.Fatal("/metrics holds a credential")
	}
	return body
}

func keyFiles(k *rsa.PrivateKey) map[string][]byte {
	return map[string][]byte{"key.pem": []byte(privatePEM(k)), "fingerprint": []byte(ociFingerprint(k) + "\n")}
}

func newRSAKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func privatePEM(k *rsa.PrivateKey) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
}
