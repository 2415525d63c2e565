package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
)

// demoNet is one demo run's loopback addresses and NodePort, picked at run
// time so that two demos side by side, or a demo beside the test suite,
// never collide on a fixed address (Linux routes all of 127/8 to lo).
//
// The run owns 127.a.b.0/23: nodes at 127.a.b.1.., their public addresses
// at 127.a.b.101.. (never bound), a bastion (an instance, no node; the foreign
// route's gateway) at 127.a.b.200,
// and the load balancer VIPs in 127.a.(b+1).0/24.
type demoNet struct {
	base     netip.Addr // 127.a.b.0, b even
	nodePort int32      // in the apiserver's default NodePort range
}

// pickDemoNet picks a block and a NodePort that are free: the nodes' NodePort
// and the first VIP's service port can be bound now. Other processes may
// take them later, but a random /23 out of 127/8's 32,000 and a random
// NodePort out of 2,768 make that very unlikely.
func pickDemoNet(nodes, servicePort int) (demoNet, error) {
	var lastErr error
	for range 50 {
		a, b := 1+rand.IntN(238), 2*rand.IntN(128) // 127.0/16 and 127.239/16 up are left to fixed users (tests, cloudsim's default VIPs)
		n := demoNet{base: netip.AddrFrom4([4]byte{127, byte(a), byte(b), 0}), nodePort: 30000 + rand.Int32N(2768)}
		if lastErr = n.probe(nodes, servicePort); lastErr == nil {
			return n, nil
		}
	}
	return demoNet{}, fmt.Errorf("no free loopback block for the demo after 50 tries: %w", lastErr)
}

// probe binds every address:port the run will listen on, then lets go.
func (n demoNet) probe(nodes, servicePort int) error {
	addrs := []string{net.JoinHostPort(n.vip(1), fmt.Sprint(servicePort))}
	for i := range nodes {
		// The NodePort, and kube-proxy's health port (startNodes).
		addrs = append(addrs, net.JoinHostPort(n.node(i), fmt.Sprint(n.nodePort)), net.JoinHostPort(n.node(i), "10256"))
	}
	var errs []error
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		_ = ln.Close()
	}
	return errors.Join(errs...)
}

func (n demoNet) octets() (a, b byte) { o := n.base.As4(); return o[1], o[2] }

// node is the private address of the i-th instance (from 0).
func (n demoNet) node(i int) string {
	a, b := n.octets()
	return fmt.Sprintf("127.%d.%d.%d", a, b, i+1)
}

// public is the public address of the i-th instance; nothing binds it.
func (n demoNet) public(i int) string {
	a, b := n.octets()
	return fmt.Sprintf("127.%d.%d.%d", a, b, 101+i)
}

// gateway is the bastion's address: an instance, but no node.
func (n demoNet) gateway() string {
	a, b := n.octets()
	return fmt.Sprintf("127.%d.%d.200", a, b)
}

// vip is the i-th load balancer VIP (from 1).
func (n demoNet) vip(i int) string {
	a, b := n.octets()
	return fmt.Sprintf("127.%d.%d.%d", a, b+1, i)
}

// vipRange is cloudsim's VIP pool for this run.
func (n demoNet) vipRange() string { return n.vip(1) + "-" + n.vip(254) }

// vcnCIDR is a network holding the nodes and the VIPs (OCI's VCN).
func (n demoNet) vcnCIDR() string {
	a, _ := n.octets()
	return fmt.Sprintf("127.%d.0.0/16", a)
}
