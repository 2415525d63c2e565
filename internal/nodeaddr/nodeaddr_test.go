package nodeaddr

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestNodeAddresses(t *testing.T) {
	node := func(addrs ...v1.NodeAddress) *v1.Node {
		return &v1.Node{Status: v1.NodeStatus{Addresses: addrs}}
	}
	tests := []struct {
		name         string
		node         *v1.Node
		wantHostname string
		wantIPs      []string
	}{
		{"none", node(), "", nil},
		{
			"first hostname, distinct IPv4 internal IPs in order",
			node(
				v1.NodeAddress{Type: v1.NodeHostName, Address: ""},
				v1.NodeAddress{Type: v1.NodeInternalIP, Address: "10.0.0.5"},
				v1.NodeAddress{Type: v1.NodeHostName, Address: "node-1"},
				v1.NodeAddress{Type: v1.NodeInternalIP, Address: "fd00::5"},
				v1.NodeAddress{Type: v1.NodeExternalIP, Address: "1.2.3.4"},
				v1.NodeAddress{Type: v1.NodeInternalIP, Address: "10.0.0.4"},
				v1.NodeAddress{Type: v1.NodeInternalIP, Address: "10.0.0.5"},
				v1.NodeAddress{Type: v1.NodeHostName, Address: "node-2"},
			),
			"node-1", []string{"10.0.0.5", "10.0.0.4"},
		},
		{"not an address", node(v1.NodeAddress{Type: v1.NodeInternalIP, Address: "node-1"}), "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Hostname(tc.node); got != tc.wantHostname {
				t.Errorf("Hostname = %q, want %q", got, tc.wantHostname)
			}
			if got := InternalIPv4s(tc.node); !slices.Equal(got, tc.wantIPs) {
				t.Errorf("InternalIPv4s = %v, want %v", got, tc.wantIPs)
			}
		})
	}
}

func TestIsIPv4(t *testing.T) {
	for s, want := range map[string]bool{"10.0.0.1": true, "::1": false, "::ffff:10.0.0.1": false, "node-1": false, "": false, "10.0.0.1/32": false} {
		if got := IsIPv4(s); got != want {
			t.Errorf("IsIPv4(%q) = %v, want %v", s, got, want)
		}
	}
}
