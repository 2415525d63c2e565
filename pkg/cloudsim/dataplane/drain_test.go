package dataplane

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/ccmkit/ccm/internal/testcluster/traffic"
)

// dialKeepAlive opens a keep-alive connection through the VIP, closed when
// the test ends.
func dialKeepAlive(t *testing.T, addr netip.AddrPort) *traffic.Conn {
	t.Helper()
	c, err := traffic.Dial(addr.String(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// who sends one request on c and returns the answering node's name.
func who(c *traffic.Conn) (string, error) {
	a, err := c.Get(2 * time.Second)
	if err != nil {
		return "", err
	}
	return a.Body, a.Err()
}

// TestDrainKeepsOpenFlowsAndDeregistrationEndsThem: weight 0 (Tencent's
// drain, and what the OCI dialect maps drain: true to) takes no new
// connections but keeps the open ones; removing the target closes them.
func TestDrainKeepsOpenFlowsAndDeregistrationEndsThem(t *testing.T) {
	p := newPlane(t, Config{HealthCheckInterval: 30 * time.Millisecond})
	n1, n2 := startNode(t, "127.0.9.41", "n1"), startNode(t, "127.0.9.42", "n2")
	vip, _ := p.AllocVIP("lb-d")
	port := freePort(t, vip)
	addr := netip.AddrPortFrom(vip, uint16(port))
	l := Listener{ID: "l", Protocol: TCP, Port: port, Targets: []Target{{ID: "n1", Addr: n1.addr, Weight: 10}, {ID: "n2", Addr: n2.addr, Weight: 10}}}
	p.Sync(LoadBalancer{ID: "lb-d", VIP: vip, Listeners: []Listener{l}})

	// Open connections until one lands on n1.
	var open *traffic.Conn
	for range 4 {
		k := dialKeepAlive(t, addr)
		name, err := who(k)
		if err != nil {
			t.Fatal(err)
		}
		if name == "n1" {
			open = k
			break
		}
		k.Close()
	}
	if open == nil {
		t.Fatal("no connection reached n1 in 4 tries of round robin over 2 targets")
	}

	l.Targets[0].Weight = 0
	p.Sync(LoadBalancer{ID: "lb-d", VIP: vip, Listeners: []Listener{l}})
	for i := range 4 {
		if name, err := who(open); err != nil || name != "n1" {
			t.Fatalf("request %d on the connection open to the drained n1: %q, %v; want it served by n1", i, name, err)
		}
		if name, err := get(fmt.Sprintf("http://%s/", addr)); err != nil || name != "n2" {
			t.Fatalf("new connection %d while n1 drains: %q, %v; want n2", i, name, err)
		}
	}

	l.Targets = l.Targets[1:]
	p.Sync(LoadBalancer{ID: "lb-d", VIP: vip, Listeners: []Listener{l}})
	if name, err := who(open); err == nil {
		t.Fatalf("a request on the connection to the deregistered n1 was answered by %q; want the connection closed", name)
	}
	if name, err := get(fmt.Sprintf("http://%s/", addr)); err != nil || name != "n2" {
		t.Fatalf("new connection after n1 left: %q, %v; want n2", name, err)
	}
	// The closed connections are released as their proxies notice.
	waitFor(t, "n2 alone, with no open connection", 3*time.Second, func() bool {
		st, _ := p.Status("lb-d")
		got := st.Listeners[0].Targets
		return len(got) == 1 && got[0].ID == "n2" && got[0].Active == 0
	})
}
