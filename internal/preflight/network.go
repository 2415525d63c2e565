package preflight

import (
	"fmt"
	"net/netip"
	"strings"
)

// Network is a named address range the pod network must stay out of: the
// VPC (VCN) itself, or another route table's cluster CIDR.
type Network struct {
	Name string // e.g. "VPC vpc-123", "route table cls-abc"
	CIDR netip.Prefix
}

// CheckClusterCIDR reports whether the pod network overlaps any of nets.
// Overlapping pod routes would shadow instance addresses, or fight another
// cluster's routes.
func CheckClusterCIDR(rep *Report, cidr netip.Prefix, nets []Network) {
	const check = "cluster CIDR"
	if !cidr.IsValid() {
		rep.Skip(check, "--cluster-cidr not given")
		return
	}
	var hits []string
	for _, n := range nets {
		if n.CIDR.IsValid() && n.CIDR.Overlaps(cidr) {
			hits = append(hits, fmt.Sprintf("%s (%s)", n.Name, n.CIDR))
		}
	}
	if len(hits) > 0 {
		rep.Fail(check, fmt.Sprintf("%s overlaps %s", cidr, strings.Join(hits, ", ")),
			"choose a pod network outside the VPC's ranges and every other cluster's, and set it in --cluster-cidr and the cloud config alike")
		return
	}
	names := make([]string, 0, len(nets))
	for _, n := range nets {
		names = append(names, n.Name)
	}
	rep.Pass(check, fmt.Sprintf("%s overlaps none of %d networks (%s)", cidr, len(nets), list(names)))
}

// Within reports whether inner lies entirely inside outer.
func Within(inner, outer netip.Prefix) bool {
	return outer.Bits() <= inner.Bits() && outer.Contains(inner.Addr())
}

// ParsePrefix reads one CIDR, masking host bits the way the CCM's flag does.
func ParsePrefix(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil {
		return netip.Prefix{}, err
	}
	return p.Masked(), nil
}
