package dataplane

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// ruleFirewall is a Firewall whose verdicts the test changes: it denies
// the clients, targets and probes it is told to, and records every flow.
type ruleFirewall struct {
	mu           sync.Mutex
	denyClients  map[netip.Addr]bool
	denyTargets  map[string]bool // by target ID
	denyProbes   bool
	inbound, fwd []Flow
	probes       []Flow
}

func (f *ruleFirewall) Inbound(fl Flow) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inbound = append(f.inbound, fl)
	if f.denyClients[fl.Client.Addr()] {
		return errors.New("client denied")
	}
	return nil
}

func (f *ruleFirewall) Forward(fl Flow) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fwd = append(f.fwd, fl)
	if f.denyTargets[fl.TargetID] {
		return errors.New("target denied")
	}
	return nil
}

func (f *ruleFirewall) Probe(fl Flow) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.probes = append(f.probes, fl)
	if f.denyProbes {
		return errors.New("probe denied")
	}
	return nil
}

func (f *ruleFirewall) set(fn func(*ruleFirewall)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// getFrom is get with the client bound to a source address.
func getFrom(src netip.Addr, url string) (string, error) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: src.AsSlice()}, Timeout: 2 * time.Second}
	c, err := d.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"))
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := fmt.Fprintf(c, "GET / HTTP/1.0\r\nHost: x\r\n\r\n"); err != nil {
		return "", err
	}
	buf := make([]byte, 4096)
	var out []byte
	for {
		n, err := c.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			if len(out) == 0 {
				return "", err
			}
			break
		}
	}
	s := string(out)
	if i := strings.Index(s, "\r\n\r\n"); i >= 0 {
		return s[i+4:], nil
	}
	return "", fmt.Errorf("no HTTP answer: %q", s)
}

func TestFirewallDecidesEveryFlow(t *testing.T) {
	p := newPlane(t, Config{HealthCheckInterval: 30 * time.Millisecond})
	n1, n2 := startNode(t, "127.0.9.11", "n1"), startNode(t, "127.0.9.12", "n2")
	vip, err := p.AllocVIP("lb-fw")
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t, vip)
	fw := &ruleFirewall{denyClients: map[netip.Addr]bool{}, denyTargets: map[string]bool{}}
	hc := &HealthCheck{Type: CheckTCP, HealthyThreshold: 1, UnhealthyThreshold: 1}
	syncLB := func(fw Firewall) {
		p.Sync(LoadBalancer{ID: "lb-fw", VIP: vip, Firewall: fw, Listeners: []Listener{{ID: "l1", Protocol: TCP, Port: port, HealthCheck: hc,
			Targets: []Target{{ID: "n1", Addr: n1.addr, Weight: 10}, {ID: "n2", Addr: n2.addr, Weight: 10}}}}})
	}
	syncLB(fw)
	waitFor(t, "2 healthy targets", 3*time.Second, func() bool { return healthy(p, "lb-fw") == 2 })
	url := fmt.Sprintf("http://%s/", netip.AddrPortFrom(vip, uint16(port)))
	allowed, denied := netip.MustParseAddr("127.0.9.21"), netip.MustParseAddr("127.0.9.22")

	if body, err := getFrom(allowed, url); err != nil || (body != "n1" && body != "n2") {
		t.Fatalf("allowed client: %q, %v", body, err)
	}
	fw.set(func(f *ruleFirewall) { f.denyClients[denied] = true })
	if body, err := getFrom(denied, url); err == nil {
		t.Fatalf("a denied client got an answer: %q", body)
	}
	// The inbound flow names the client (with its port) and the VIP.
	fw.mu.Lock()
	last := fw.inbound[len(fw.inbound)-1]
	fw.mu.Unlock()
	if last.Client.Addr() != denied || last.Client.Port() == 0 || last.VIP != netip.AddrPortFrom(vip, uint16(port)) || last.Protocol != TCP {
		t.Errorf("inbound flow = %+v", last)
	}

	// A denied target: connections it is picked for are reset, the others
	// go through. Not "2 of 4 in turn": a probe that times out on a loaded
	// machine takes a target out of the rotation for a moment; so send
	// until both outcomes were seen, and check each failure was a denial.
	fw.set(func(f *ruleFirewall) { f.denyTargets["n2"] = true })
	st, _ := p.Status("lb-fw")
	deniedBefore := st.Listeners[0].Denied
	var ok, failed int
	for range 40 {
		if ok >= 2 && failed >= 2 {
			break
		}
		if body, err := getFrom(allowed, url); err == nil {
			if body != "n1" {
				t.Fatalf("answer from %q, which the firewall denies", body)
			}
			ok++
		} else {
			failed++
		}
	}
	if ok < 2 || failed < 2 {
		t.Errorf("balancing over an allowed and a denied target: %d answers, %d failures; want at least 2 of each", ok, failed)
	}
	st, _ = p.Status("lb-fw")
	if denied := st.Listeners[0].Denied - deniedBefore; denied != uint64(failed) {
		t.Errorf("denied = %d, want one per failed connection (%d)", denied, failed)
	}

	// Denied probes make every target unhealthy: nothing is in service.
	fw.set(func(f *ruleFirewall) { f.denyTargets = map[string]bool{}; f.denyProbes = true })
	waitFor(t, "no healthy target", 3*time.Second, func() bool { return healthy(p, "lb-fw") == 0 })
	st, _ = p.Status("lb-fw")
	for _, ts := range st.Listeners[0].Targets {
		if !strings.Contains(ts.LastError, "dropped by the firewall") {
			t.Errorf("target %s: last error %q, want a firewall drop", ts.ID, ts.LastError)
		}
	}
	fw.mu.Lock()
	probe := fw.probes[len(fw.probes)-1]
	fw.mu.Unlock()
	if probe.Protocol != TCP || probe.Client.IsValid() || (probe.Target != n1.addr && probe.Target != n2.addr) {
		t.Errorf("probe flow = %+v", probe)
	}

	// Sync without a firewall carries everything again.
	syncLB(nil)
	waitFor(t, "2 healthy targets", 3*time.Second, func() bool { return healthy(p, "lb-fw") == 2 })
	if _, err := getFrom(denied, url); err != nil {
		t.Fatalf("without a firewall: %v", err)
	}
}

func TestFirewallDropsUDP(t *testing.T) {
	p := newPlane(t, Config{})
	echo, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.0.9.31")})
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := echo.ReadFromUDP(buf)
			if err != nil {
				return
			}
			_, _ = echo.WriteToUDP(buf[:n], from)
		}
	}()
	vip, err := p.AllocVIP("lb-udp")
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t, vip)
	fw := &ruleFirewall{denyClients: map[netip.Addr]bool{netip.MustParseAddr("127.0.9.32"): true}}
	p.Sync(LoadBalancer{ID: "lb-udp", VIP: vip, Firewall: fw, Listeners: []Listener{{ID: "u1", Protocol: UDP, Port: port,
		Targets: []Target{{ID: "e", Addr: netip.MustParseAddrPort(echo.LocalAddr().String()), Weight: 10}}}}})
	ask := func(src string) error {
		c, err := net.DialUDP("udp", &net.UDPAddr{IP: net.ParseIP(src)}, net.UDPAddrFromAddrPort(netip.AddrPortFrom(vip, uint16(port))))
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(300 * time.Millisecond))
		if _, err := c.Write([]byte("ping")); err != nil {
			return err
		}
		buf := make([]byte, 16)
		_, err = c.Read(buf)
		return err
	}
	if err := ask("127.0.9.33"); err != nil {
		t.Fatalf("allowed client: %v", err)
	}
	if err := ask("127.0.9.32"); err == nil {
		t.Fatal("a denied UDP client got an answer")
	}
}
