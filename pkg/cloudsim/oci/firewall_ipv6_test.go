package oci

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// TestFirewallIPv6Endpoints: an IPv6 address is the instance whose VNIC
// has it, else the subnet whose prefix holds it, else outside the VCN; a
// dual-stack NLB sends to IPv6 backends from its IPv6 address.
func TestFirewallIPv6Endpoints(t *testing.T) {
	e := ipv6Env(t)
	added := e.addInstances(core.Instance{Name: "a", PrivateIP: "10.0.1.5"})
	f := &ociFirewall{d: e.d, vcn: DefaultVCNID, addr: netip.MustParseAddr("10.0.1.200"), addr6: netip.MustParseAddr("fd00:a:0:1::80")}
	for _, tc := range []struct{ addr, want string }{
		{"fd00:a:0:1::a00:105", "instance " + added[0].OCID},
		{"fd00:a:0:1::99", "subnet " + DefaultSubnetID},
		{"fd00:b:0:1::1", ""},
	} {
		got := f.hostEndpoint(netip.MustParseAddr(tc.addr))
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s: %s, want outside the VCN", tc.addr, got.name)
		case tc.want != "" && (got == nil || !strings.HasPrefix(got.name, tc.want)):
			t.Errorf("%s: %+v, want %s", tc.addr, got, tc.want)
		}
	}
	for target, want := range map[string]string{"fd00:a:0:1::a00:105": "fd00:a:0:1::80", "10.0.1.5": "10.0.1.200", "::ffff:10.0.1.5": "10.0.1.200"} {
		if got := f.sourceFor(netip.MustParseAddr(target)); got.String() != want {
			t.Errorf("source to %s: %s, want %s", target, got, want)
		}
	}
}
