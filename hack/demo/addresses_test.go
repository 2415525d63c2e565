package main

import (
	"fmt"
	"net"
	"net/netip"
	"testing"
)

func TestPickDemoNet(t *testing.T) {
	n, err := pickDemoNet(3, demoServicePort)
	if err != nil {
		t.Fatal(err)
	}
	vcn := netip.MustParsePrefix(n.vcnCIDR())
	block := netip.PrefixFrom(n.base, 23)
	for _, a := range []string{n.node(0), n.node(2), n.public(0), n.gateway(), n.vip(1), n.vip(254)} {
		ip := netip.MustParseAddr(a)
		if !block.Contains(ip) || !vcn.Contains(ip) {
			t.Errorf("%s is outside the run's block %s or VCN %s", a, block, vcn)
		}
	}
	if n.nodePort < 30000 || n.nodePort > 32767 {
		t.Errorf("NodePort %d outside the apiserver's default range", n.nodePort)
	}
	if n.vipRange() != n.vip(1)+"-"+n.vip(254) {
		t.Errorf("vipRange %q", n.vipRange())
	}

	// Two runs pick different blocks (a collision is possible, but 1 in ~30,000).
	m, err := pickDemoNet(3, demoServicePort)
	if err != nil {
		t.Fatal(err)
	}
	if m.base == n.base && m.nodePort == n.nodePort {
		t.Errorf("two picks gave the same block and NodePort %s:%d", n.base, n.nodePort)
	}
}

// A block whose NodePort or VIP port is taken is refused.
func TestDemoNetProbeRefusesTaken(t *testing.T) {
	n, err := pickDemoNet(2, demoServicePort)
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{net.JoinHostPort(n.node(1), fmt.Sprint(n.nodePort)), net.JoinHostPort(n.vip(1), fmt.Sprint(demoServicePort))} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if err := n.probe(2, demoServicePort); err == nil {
			t.Errorf("probe passed with %s held", addr)
		}
		_ = ln.Close()
	}
	if err := n.probe(2, demoServicePort); err != nil {
		t.Errorf("probe after release: %v", err)
	}
}
