package tcpreflight

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ccmkit/ccm/deploy"
	"github.com/ccmkit/ccm/internal/cloudpolicy/cam"
	"github.com/ccmkit/ccm/internal/preflight"
	"github.com/ccmkit/ccm/internal/tencent/tcapi"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// Every read of the shipped CAM policy has a probe.
func TestEveryShippedReadIsProbed(t *testing.T) {
	policy, err := cam.Parse(deploy.TencentCAMPolicy)
	if err != nil {
		t.Fatal(err)
	}
	probes := tencentProbes(ReadAPI{}, Target{})
	for _, a := range policy.Actions() {
		_, probed := probes[a]
		if read := strings.Contains(a, ":Describe"); read != probed {
			t.Errorf("%s: a read (Describe*) = %v, but probed = %v", a, read, probed)
		}
	}
}

// TestTencentPermissions: against cloudsim, a key whose policy lacks two
// reads gets one failed row for each, and the writes are listed as not
// checked.
func TestPermissions(t *testing.T) {
	const id, key = "AKIDpreflightpermissions", "preflight-permissions-key"
	policy, err := cam.Parse(deploy.TencentCAMPolicy)
	if err != nil {
		t.Fatal(err)
	}
	lacking := policy.Without("clb:DescribeListeners").Without("tke:DescribeClusterRoutes")
	sim := cloudsim.New(cloudsim.Options{Latency: cloudsim.ZeroLatency, DisableDataPlane: true, Tencent: cloudsim.TencentOptions{
		Credentials: map[string]string{id: key},
		Policies:    map[string][]json.RawMessage{id: {lacking.JSON()}},
	}})
	url, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	c := tcapi.NewClients(tcapi.ClientOptions{Region: "ap-guangzhou", SecretID: id, SecretKey: key,
		Endpoint: strings.TrimPrefix(url, "http://"), Scheme: "HTTP"})
	cvmc, _ := c.CVM()
	vpcc, _ := c.VPC()
	tkec, _ := c.TKE()
	clbc, _ := c.CLB()
	var rep preflight.Report
	Permissions(context.Background(), ReadAPI{CVM: cvmc, VPC: vpcc, TKE: tkec, CLB: clbc}, Target{VpcID: "vpc-1"}, &rep)
	var failed []string
	for _, r := range rep.Results {
		if r.Status == preflight.Fail {
			failed = append(failed, r.Check)
			if !strings.Contains(r.Detail, "AuthFailure.UnauthorizedOperation") {
				t.Errorf("%s: %s does not name the refusal", r.Check, r.Detail)
			}
		}
	}
	if strings.Join(failed, ",") != "permission tke:DescribeClusterRoutes,permission clb:DescribeListeners" {
		t.Errorf("failed rows %v, want the two missing reads", failed)
	}
	pass, _ := rep.Find("permissions")
	writes, _ := rep.Find("write permissions")
	if pass.Status != preflight.Pass || !strings.Contains(pass.Detail, "10 reads") || writes.Status != preflight.Skip || !strings.Contains(writes.Detail, "clb:CreateListener") {
		t.Errorf("rows: %+v\n%+v", pass, writes)
	}
}
