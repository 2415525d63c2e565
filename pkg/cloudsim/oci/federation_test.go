package oci

import (
	"crypto/rsa"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/common/auth"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// ipEnv is a test env with an instance the metadata service answers for,
// and the SDK's own instance principal provider pointed at it through the
// overrides the SDK documents.
type ipEnv struct {
	*testEnv
	instance core.Instance
	mu       sync.Mutex
	calls    []core.CallInfo
}

func newIPEnv(t *testing.T, opts Options) *ipEnv {
	t.Helper()
	ie := &ipEnv{}
	ie.testEnv = newTestEnv(t, opts, core.Config{OnCall: func(ci core.CallInfo) {
		ie.mu.Lock()
		defer ie.mu.Unlock()
		ie.calls = append(ie.calls, ci)
	}})
	ie.instance = ie.addInstances(core.Instance{Name: "node-1", CompartmentID: DefaultCompartmentID})[0]
	if _, err := ie.d.SetMetadataInstance(ie.instance.OCID, testTenancy); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OCI_METADATA_BASE_URL", ie.url+PrefixMetadata)
	t.Setenv("OCI_SDK_AUTH_CLIENT_REGION_URL", ie.url)
	t.Setenv("OCI_SDK_AUTH_CLIENT_CIRCUIT_BREAKER_ENABLED", "false")
	return ie
}

func (ie *ipEnv) callsOf(action string) []core.CallInfo {
	ie.mu.Lock()
	defer ie.mu.Unlock()
	var out []core.CallInfo
	for _, c := range ie.calls {
		if c.Action == action {
			out = append(out, c)
		}
	}
	return out
}

// The SDK's instance principal provider, an independent client, works
// against cloudsim: metadata, federation, then API calls signed with the
// security token, logged under the instance.
func TestInstancePrincipalThroughSDK(t *testing.T) {
	ie := newIPEnv(t, Options{})
	provider, err := auth.InstancePrincipalConfigurationProvider()
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := provider.Region(); r != DefaultRegion {
		t.Errorf("region from the metadata service: %q, want %q", r, DefaultRegion)
	}
	if tn, _ := provider.TenancyOCID(); tn != testTenancy {
		t.Errorf("tenancy from the certificate: %q, want %q", tn, testTenancy)
	}
	cc := ie.computeWith(provider)
	got, err := cc.GetInstance(ctx(t), ocicore.GetInstanceRequest{InstanceId: common.String(ie.instance.OCID)})
	if err != nil {
		t.Fatal(err)
	}
	if *got.Id != ie.instance.OCID {
		t.Fatalf("GetInstance answered %s", *got.Id)
	}
	gets := ie.callsOf(ActionPrefix + "GetInstance")
	if len(gets) != 1 || gets[0].Principal != ie.instance.OCID || gets[0].Code != core.CodeOK {
		t.Fatalf("GetInstance calls: %+v (want one, OK, by the instance)", gets)
	}
	if fed := ie.callsOf(ActionFederation); len(fed) != 1 || fed[0].Code != core.CodeOK || fed[0].Principal != ie.instance.OCID {
		t.Fatalf("federation calls: %+v", fed)
	}
	for _, c := range ie.calls {
		if strings.Contains(c.Principal, "ST$") || strings.Contains(c.Message, "ST$") {
			t.Fatalf("a call log entry names a token: %+v", c)
		}
	}
}

// rawGet sends a GET with the given headers to the test server.
func rawGet(t *testing.T, url string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx(t), http.MethodGet, url, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestMetadataService(t *testing.T) {
	ie := newIPEnv(t, Options{})
	bearer := map[string]string{"Authorization": "Bearer Oracle"}
	tests := []struct {
		name   string
		path   string
		header map[string]string
		status int
		want   string
	}{
		{"region", "/instance/region", bearer, 200, "iad"}, // Instance.region of us-ashburn-1
		{"canonical region", "/instance/canonicalRegionName", bearer, 200, DefaultRegion},
		{"instance id", "/instance/id", bearer, 200, ie.instance.OCID},
		{"certificate", "/identity/cert.pem", bearer, 200, "BEGIN CERTIFICATE"},
		{"key", "/identity/key.pem", bearer, 200, "PRIVATE KEY"},
		{"intermediate", "/identity/intermediate.pem", bearer, 200, "BEGIN CERTIFICATE"},
		{"no Authorization header", "/instance/region", nil, 401, "Bearer Oracle"},
		{"wrong Authorization header", "/instance/region", map[string]string{"Authorization": "Bearer x"}, 401, "Bearer Oracle"},
		{"forwarded", "/instance/region", map[string]string{"Authorization": "Bearer Oracle", "X-Forwarded-For": "10.0.0.1"}, 403, "forwarded"},
		{"unknown path", "/instance/nothing", bearer, 404, "no metadata"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := rawGet(t, ie.url+PrefixMetadata+tt.path, tt.header)
			if status != tt.status || !strings.Contains(body, tt.want) {
				t.Fatalf("GET %s: %d %q, want %d containing %q", tt.path, status, body, tt.status, tt.want)
			}
		})
	}
	// A terminated instance has no identity any more.
	if _, err := ie.core.SetInstanceState(ie.instance.OCID, core.StateTerminating); err != nil {
		t.Fatal(err)
	}
	if status, _ := rawGet(t, ie.url+PrefixMetadata+"/identity/cert.pem", bearer); status != 404 {
		t.Fatalf("certificate of a terminated instance: %d, want 404", status)
	}
}

// tokenProvider signs with a given security token and session key, as the
// SDK does with keyId "ST$<token>".
type tokenProvider struct {
	common.ConfigurationProvider
	token string
}

func (p tokenProvider) KeyID() (string, error) { return securityTokenPrefix + p.token, nil }

func TestSecurityTokenRefusals(t *testing.T) {
	ie := newIPEnv(t, Options{})
	session, other := testKeys(t)
	l := ie.d.ids.leaves[ie.instance.OCID]
	issue := func(life time.Duration) string {
		ie.d.ids.securityTokenLife = life
		defer func() { ie.d.ids.securityTokenLife = DefaultSecurityTokenLifetime }()
		tok, _, err := ie.d.issueSecurityToken(l, &session.PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	valid, expired := issue(time.Minute), issue(-time.Second)
	// A token cloudsim did not issue: the valid one's claims, re-signed.
	forged := valid[:strings.LastIndex(valid, ".")] + ".c2lnbmF0dXJl"
	tests := []struct {
		name    string
		token   string
		key     *rsa.PrivateKey
		wantMsg string // "" = success
	}{
		{"valid", valid, session, ""},
		{"expired", expired, session, "expired at"},
		{"unknown", forged, session, "not issued by this cloud"},
		{"signed with another key", valid, other, "does not verify"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tokenProvider{ConfigurationProvider: providerFor(tt.key), token: tt.token}
			_, err := ie.computeWith(p).GetInstance(ctx(t), ocicore.GetInstanceRequest{InstanceId: common.String(ie.instance.OCID)})
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantErr(t, err, http.StatusUnauthorized, CodeNotAuthenticated)
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("error %q does not say %q", err, tt.wantMsg)
			}
		})
	}
	// The instance terminated: its tokens are refused, and no new one is
	// issued for its certificate.
	if _, err := ie.core.SetInstanceState(ie.instance.OCID, core.StateTerminating); err != nil {
		t.Fatal(err)
	}
	_, err := ie.computeWith(tokenProvider{ConfigurationProvider: providerFor(session), token: valid}).
		ListInstances(ctx(t), ocicore.ListInstancesRequest{CompartmentId: common.String(DefaultCompartmentID)})
	wantErr(t, err, http.StatusUnauthorized, CodeNotAuthenticated)
}
