//go:build e2e

package e2e

import (
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// localIPv6 makes addrs local to this host, so that cloudsim's data plane
// can listen on a load balancer's IPv6 address and the test's nodes on
// theirs: each missing one is added to the loopback interface as a /128
// (`ip -6 addr add <a>/128 dev lo nodad`) and removed when the test ends.
// Only root can; otherwise, or when `ip` fails, it logs why and reports
// false, and the caller skips its IPv6 traffic checks.
//
// Why addresses and not a route: with `ip -6 route add local <prefix> dev
// lo` the kernel accepts packets for the prefix, but bind() of one of its
// addresses still fails with EADDRNOTAVAIL (IPv6, unlike IPv4, binds only
// assigned addresses unless the socket sets IPV6_FREEBIND), so the data
// plane and the nodes could not listen. The addresses are unique local
// ones of the test's own subnets (fd00:e2e::/32), not used elsewhere.
func localIPv6(t *testing.T, addrs ...string) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Logf("IPv6 traffic is not checked: adding %v to the loopback interface needs root", addrs)
		return false
	}
	have := map[netip.Addr]bool{}
	if ifAddrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range ifAddrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil {
				have[p.Addr()] = true
			}
		}
	}
	for _, s := range addrs {
		a := netip.MustParseAddr(s)
		if have[a] {
			continue // already local: not ours to remove
		}
		cidr := netip.PrefixFrom(a, 128).String()
		if out, err := exec.Command("ip", "-6", "addr", "add", cidr, "dev", "lo", "nodad").CombinedOutput(); err != nil {
			t.Logf("IPv6 traffic is not checked: ip -6 addr add %s dev lo: %v: %s", cidr, err, strings.TrimSpace(string(out)))
			return false
		}
		t.Cleanup(func() {
			if out, err := exec.Command("ip", "-6", "addr", "del", cidr, "dev", "lo").CombinedOutput(); err != nil {
				t.Errorf("removing %s from lo: %v: %s", cidr, err, strings.TrimSpace(string(out)))
			}
		})
	}
	return true
}
