package oci

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"
)

func TestNodeAddressesIPv6(t *testing.T) {
	node := &v1.Node{}
	node.Name = "n1"
	for _, tc := range []struct {
		name string
		ipv6 []string
		want string
	}{
		{"none", nil, "[{InternalIP 10.0.0.5} {Hostname n1}]"},
		{"ULA is internal", []string{"fd00:c1::a00:5"}, "[{InternalIP 10.0.0.5} {InternalIP fd00:c1::a00:5} {Hostname n1}]"},
		{"GUA is external", []string{"2001:DB8::5"}, "[{InternalIP 10.0.0.5} {ExternalIP 2001:db8::5} {Hostname n1}]"},
		{"both, in the VNIC's order", []string{"2001:db8::5", "fd00::5"}, "[{InternalIP 10.0.0.5} {ExternalIP 2001:db8::5} {InternalIP fd00::5} {Hostname n1}]"},
		{"garbage and IPv4 skipped", []string{"x", "10.0.0.9", "::ffff:10.0.0.9"}, "[{InternalIP 10.0.0.5} {Hostname n1}]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fmt.Sprint(nodeAddresses(node, core.Vnic{PrivateIp: common.String("10.0.0.5"), Ipv6Addresses: tc.ipv6}))
			if got != tc.want {
				t.Errorf("nodeAddresses = %s, want %s", got, tc.want)
			}
		})
	}
}
