package preflight

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ccmkit/ccm/deploy"
	"github.com/ccmkit/ccm/internal/cloudpolicy/cam"
	"github.com/ccmkit/ccm/internal/cloudpolicy/ociiam"
	"github.com/ccmkit/ccm/internal/tcapi"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// Every read of the shipped CAM policy has a probe; every OCI probe is in
// the permission table.
func TestEveryShippedReadIsProbed(t *testing.T) {
	policy, err := cam.Parse(deploy.TencentCAMPolicy)
	if err != nil {
		t.Fatal(err)
	}
	probes := tencentProbes(TencentReadAPI{}, TencentTarget{})
	for _, a := range policy.Actions() {
		_, probed := probes[a]
		if read := strings.Contains(a, ":Describe"); read != probed {
			t.Errorf("%s: a read (Describe*) = %v, but probed = %v", a, read, probed)
		}
	}
	for _, p := range ociProbes(OCIReadAPI{}, OCITarget{Subnets: []string{"s"}}) {
		if _, ok := ociiam.LookupOperation(p.op); !ok {
			t.Errorf("OCI probe %s is not in the permission table", p.op)
		}
	}
}

// TestTencentPermissions: against cloudsim, a key whose policy lacks two
// reads gets one failed row for each, and the writes are listed as not
// checked.
func TestTencentPermissions(t *testing.T) {
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
	var rep Report
	TencentPermissions(context.Background(), TencentReadAPI{CVM: cvmc, VPC: vpcc, TKE: tkec, CLB: clbc}, TencentTarget{VpcID: "vpc-1"}, &rep)
	var failed []string
	for _, r := range rep.Results {
		if r.Status == Fail {
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
	if pass.Status != Pass || !strings.Contains(pass.Detail, "10 reads") || writes.Status != Skip || !strings.Contains(writes.Detail, "clb:CreateListener") {
		t.Errorf("rows: %+v\n%+v", pass, writes)
	}
}

// TestOCIPermissions: a missing read instances is blamed once, not also
// on inspect vnic-attachments, whose read needs INSTANCE_INSPECT too.
func TestOCIPermissions(t *testing.T) {
	ok := func(context.Context) error { return nil }
	fail := func(context.Context) error { return notAuthorized{} }
	for _, tc := range []struct {
		name    string
		failing map[string]bool
		want    []string
	}{
		{"read instances missing", map[string]bool{"ListInstances": true, "ListVnicAttachments": true}, []string{"permission read instances"}},
		{"vnic-attachments missing", map[string]bool{"ListVnicAttachments": true}, []string{"permission inspect vnic-attachments"}},
		{"nothing missing", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rep Report
			ociPermissionsWith(context.Background(), func() []ociProbe {
				var ps []ociProbe
				for _, p := range ociProbes(OCIReadAPI{}, OCITarget{Subnets: []string{"s"}}) {
					p.call = ok
					if tc.failing[p.op] {
						p.call = fail
					}
					ps = append(ps, p)
				}
				return ps
			}(), &rep)
			var got []string
			for _, r := range rep.Results {
				if r.Status == Fail {
					got = append(got, r.Check)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("failed rows %v, want %v", got, tc.want)
			}
			if w, _ := rep.Find("write permissions"); !strings.Contains(w.Detail, "manage load-balancers (") {
				t.Errorf("write permissions row: %+v", w)
			}
		})
	}
}

// notAuthorized is OCI's 404 as the SDK reports it.
type notAuthorized struct{}

func (notAuthorized) Error() string          { return "404 NotAuthorizedOrNotFound" }
func (notAuthorized) GetHTTPStatusCode() int { return 404 }
func (notAuthorized) GetMessage() string {
	return "Authorization failed or requested resource not found."
}
func (notAuthorized) GetCode() string         { return "NotAuthorizedOrNotFound" }
func (notAuthorized) GetOpcRequestID() string { return "" }
