package ocipreflight

import (
	"context"
	"strings"
	"testing"

	"github.com/ccmkit/ccm/internal/cloudpolicy/ociiam"
	"github.com/ccmkit/ccm/internal/preflight"
)

// Every OCI probe is in the permission table.
func TestEveryProbeIsInThePermissionTable(t *testing.T) {
	for _, p := range ociProbes(ReadAPI{}, Target{Subnets: []string{"s"}}) {
		if _, ok := ociiam.LookupOperation(p.op); !ok {
			t.Errorf("OCI probe %s is not in the permission table", p.op)
		}
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
			var rep preflight.Report
			ociPermissionsWith(context.Background(), func() []ociProbe {
				var ps []ociProbe
				for _, p := range ociProbes(ReadAPI{}, Target{Subnets: []string{"s"}}) {
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
				if r.Status == preflight.Fail {
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
