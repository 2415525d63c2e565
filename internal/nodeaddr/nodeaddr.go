// Package nodeaddr reads what a Node says about itself (its name and the
// addresses the kubelet reported) for the providers' instance lookups, so
// that both clouds read a Node the same way.
package nodeaddr

import (
	"net/netip"
	"slices"

	v1 "k8s.io/api/core/v1"
)

// Hostname returns the node's first Hostname address, or "".
func Hostname(node *v1.Node) string {
	for _, a := range node.Status.Addresses {
		if a.Type == v1.NodeHostName && a.Address != "" {
			return a.Address
		}
	}
	return ""
}

// InternalIPv4s returns the node's distinct InternalIP IPv4 addresses, in
// the order reported. Both clouds look instances up by IPv4 private address.
func InternalIPv4s(node *v1.Node) []string {
	var out []string
	for _, a := range node.Status.Addresses {
		if a.Type == v1.NodeInternalIP && IsIPv4(a.Address) && !slices.Contains(out, a.Address) {
			out = append(out, a.Address)
		}
	}
	return out
}

// IsIPv4 reports whether s is an IPv4 address (a node named by its
// private IP, as some installers name them).
func IsIPv4(s string) bool {
	addr, err := netip.ParseAddr(s)
	return err == nil && addr.Is4()
}
