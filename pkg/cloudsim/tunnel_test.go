package cloudsim_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	ocicommon "github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/profile"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"

	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// TestRealHostnamesThroughTheProxy: SDKs left at the real endpoints
// (cvm.tencentcloudapi.com over HTTPS, iaas.<region>.oraclecloud.com)
// reach cloudsim when it is their HTTP proxy and they trust its tunnels'
// CA, which GET /admin/tunnel-ca.pem serves: the way for the SDKs that sign
// the hostname without a port and take the Tencent service from its first
// label (docs/cloudsim.md, "Using cloudsim from other languages").
func TestRealHostnamesThroughTheProxy(t *testing.T) {
	sim, simURL := start(t, cloudsim.Options{})
	if _, err := sim.AddInstances(cloudsim.Instance{Name: "node-1", Zone: "ap-guangzhou-3"}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(simURL + "/admin/tunnel-ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) || string(caPEM) != string(sim.TunnelCA()) {
		t.Fatalf("GET /admin/tunnel-ca.pem: %q", caPEM)
	}
	proxy, _ := url.Parse(simURL)
	transport := &http.Transport{Proxy: http.ProxyURL(proxy), TLSClientConfig: &tls.Config{RootCAs: roots}}
	t.Cleanup(transport.CloseIdleConnections)

	// Tencent: the SDK's default endpoint, https://cvm.tencentcloudapi.com.
	cpf := profile.NewClientProfile()
	tc, err := cvm.NewClient(common.NewCredential(secretID, secretKey), "ap-guangzhou", cpf)
	if err != nil {
		t.Fatal(err)
	}
	tc.WithHttpTransport(transport)
	got, err := tc.DescribeInstances(cvm.NewDescribeInstancesRequest())
	if err != nil || got.Response.TotalCount == nil || *got.Response.TotalCount != 1 {
		t.Fatalf("cvm DescribeInstances at cvm.tencentcloudapi.com through cloudsim: %v %v", got, err)
	}

	// OCI: the SDK's endpoint for the region, https://iaas.us-ashburn-1.oraclecloud.com.
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	tenancy, user, fp := "ocid1.tenancy.oc1..aaaaaaaasim", "ocid1.user.oc1..aaaaaaaasim", oci.Fingerprint(&key.PublicKey)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := &cloudsim.AdminClient{BaseURL: simURL}
	if _, err := admin.AddOCIKey(ctx, tenancy+"/"+user+"/"+fp, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))); err != nil {
		t.Fatal(err)
	}
	provider := ocicommon.NewRawConfigurationProvider(tenancy, user, oci.DefaultRegion, fp,
		string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})), nil)
	vn, err := ocicore.NewVirtualNetworkClientWithConfigurationProvider(provider)
	if err != nil {
		t.Fatal(err)
	}
	vn.Host = "https://iaas.us-ashburn-1.oraclecloud.com" // the SDK's endpoint for the region, its dual-stack template resolved
	vn.HTTPClient = &http.Client{Transport: transport, Timeout: 20 * time.Second}
	vn.Configuration.CircuitBreaker = nil
	vcns, err := vn.ListVcns(ctx, ocicore.ListVcnsRequest{CompartmentId: ocicommon.String(oci.DefaultCompartmentID)})
	if err != nil || len(vcns.Items) == 0 {
		t.Fatalf("ListVcns at iaas.us-ashburn-1.oraclecloud.com through cloudsim: %v %v", vcns.Items, err)
	}

	// A tunnel to anything else is refused: cloudsim forwards nothing.
	c := &http.Client{Transport: transport, Timeout: 10 * time.Second}
	if resp, err := c.Get("https://example.com/"); err == nil {
		_ = resp.Body.Close()
		t.Fatal("a tunnel to example.com was served")
	}
}
