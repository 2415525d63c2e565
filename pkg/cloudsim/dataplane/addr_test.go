package dataplane

import (
	"fmt"
	"net/netip"
	"testing"
	"time"
)

// TestListenerAddr: a listener with its own address (a dual-stack load
// balancer's IPv6 one; ::1 here, the one IPv6 address every host has)
// carries traffic there, next to a listener on the VIP, to an IPv6 target;
// moving it back to the VIP restarts it there.
func TestListenerAddr(t *testing.T) {
	p := newPlane(t, Config{HealthCheckInterval: 30 * time.Millisecond})
	n4, n6 := startNode(t, "127.0.9.41", "over IPv4"), startNode(t, "[::1]", "over IPv6")
	vip, _ := p.AllocVIP("lb-a")
	v6 := netip.MustParseAddr("::1")
	port := freePort(t, v6)
	hc := &HealthCheck{Type: CheckTCP}
	l4 := Listener{ID: "v4", Protocol: TCP, Port: port, HealthCheck: hc, Targets: []Target{{ID: "n4", Addr: n4.addr, Weight: 1}}}
	l6 := Listener{ID: "v6", Protocol: TCP, Port: port, HealthCheck: hc, Targets: []Target{{ID: "n6", Addr: n6.addr, Weight: 1}}, Addr: v6}
	p.Sync(LoadBalancer{ID: "lb-a", VIP: vip, Listeners: []Listener{l4, l6}})
	waitFor(t, "both targets healthy", 3*time.Second, func() bool { return healthy(p, "lb-a") == 2 })
	for url, want := range map[string]string{
		fmt.Sprintf("http://%s/", netip.AddrPortFrom(vip, uint16(port))): "over IPv4",
		fmt.Sprintf("http://%s/", netip.AddrPortFrom(v6, uint16(port))):  "over IPv6",
	} {
		if got, err := get(url); err != nil || got != want {
			t.Errorf("GET %s: %q, %v; want %q", url, got, err, want)
		}
	}
	st, _ := p.Status("lb-a")
	for _, ls := range st.Listeners {
		if ls.ID == "v6" && ls.Address != netip.AddrPortFrom(v6, uint16(port)).String() {
			t.Errorf("listener v6 address %s", ls.Address)
		}
	}

	// Without its own address the listener moves to the VIP (another
	// port there: the IPv4 listener holds this one).
	l6.Addr, l6.Port = netip.Addr{}, freePort(t, vip)
	p.Sync(LoadBalancer{ID: "lb-a", VIP: vip, Listeners: []Listener{l4, l6}})
	if _, err := get(fmt.Sprintf("http://[::1]:%d/", port)); err == nil {
		t.Error("the listener still answers on ::1")
	}
	waitFor(t, "the listener on the VIP", 3*time.Second, func() bool {
		got, err := get(fmt.Sprintf("http://%s/", netip.AddrPortFrom(vip, uint16(l6.Port))))
		return err == nil && got == "over IPv6"
	})
}
