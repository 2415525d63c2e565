package oci

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	ocicommon "github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"

	"github.com/ccmkit/ccm/internal/oci/config"
	"github.com/ccmkit/ccm/internal/oci/config/configtest"
	"github.com/ccmkit/ccm/internal/oci/ociapi"
	"github.com/ccmkit/ccm/internal/oci/ociauth"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// mustCredentials builds the credentials of cfg, as New does.
func mustCredentials(t testing.TB, cfg *config.Config) ociauth.Source {
	t.Helper()
	src, err := newCredentials(cfg, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// The provider as an instance principal against cloudsim, with 3-second
// tokens: the region and tenancy come from the instance, the token is
// renewed ahead of expiry in the background, and no call is refused.
func TestInstancePrincipalAgainstCloudsim(t *testing.T) {
	var mu sync.Mutex
	var principals []string
	sim, _, keyCfg := startSimWith(t, func(o *cloudsim.Options) {
		o.OCI.SecurityTokenLifetime = 3 * time.Second
		o.OnCall = func(c cloudsim.Call) {
			mu.Lock()
			defer mu.Unlock()
			principals = append(principals, c.Principal)
		}
	})
	added, err := sim.AddInstances(cloudsim.Instance{Name: "ccm-host", VpcID: simVCN, SubnetID: simSubnet, CompartmentID: simCompartment})
	if err != nil {
		t.Fatal(err)
	}
	host := added[0]
	if _, err := sim.OCI().SetMetadataInstance(host.OCID, configtest.Tenancy); err != nil {
		t.Fatal(err)
	}
	url := keyCfg.Endpoint
	cfg, err := config.Load(strings.NewReader("useInstancePrincipals: true\nauth:\n  metadataEndpoint: " + url + "/opc/v2\n  federationEndpoint: " + url +
		"\ncompartment: " + simCompartment + "\nvcn: " + simVCN + "\nendpoint: " + url + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Auth.Region != simoci.DefaultRegion || cfg.Auth.Tenancy != configtest.Tenancy {
		t.Fatalf("region %q, tenancy %q: want them from the instance", cfg.Auth.Region, cfg.Auth.Tenancy)
	}
	if d := c.creds.Describe(); !strings.Contains(d, host.OCID) || strings.Contains(d, "ST$") {
		t.Fatalf("Describe: %q", d)
	}
	stop := make(chan struct{})
	defer close(stop)
	runCredentials(c.creds, stop)

	clients, err := ociapi.New(clientOptions(cfg, c.creds))
	if err != nil {
		t.Fatal(err)
	}
	fed := func() int { return sim.Calls()[simoci.ActionFederation]["OK"] }
	start := time.Now()
	for fed() < 4 { // the first token and three renewals
		if time.Since(start) > 30*time.Second {
			t.Fatalf("%d tokens within 30s, want 4", fed())
		}
		_, err := clients.Compute.GetInstance(context.Background(), ocicore.GetInstanceRequest{InstanceId: ocicommon.String(host.OCID)})
		if err != nil {
			t.Fatalf("GetInstance after %d tokens: %v", fed(), err)
		}
		time.Sleep(50 * time.Millisecond) // a steady trickle of calls, as controllers make
	}
	calls := sim.Calls()
	if n := calls[simoci.ActionPrefix+"GetInstance"]["OK"]; n < 10 {
		t.Fatalf("only %d GetInstance calls", n)
	}
	for action, byCode := range calls {
		for code, n := range byCode {
			if code != "OK" {
				t.Errorf("%s answered %s %d times", action, code, n)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range principals {
		if strings.Contains(p, "ST$") {
			t.Fatal("a token in the call log")
		}
	}
}
