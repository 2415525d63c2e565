package dataplane

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"testing"
	"time"
)

// keepAlive is one client connection through the VIP that stays open
// between requests (HTTP/1.1 keep-alive).
type keepAlive struct {
	c net.Conn
	r *bufio.Reader
}

func dialKeepAlive(t *testing.T, addr netip.AddrPort) *keepAlive {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr.String(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &keepAlive{c: c, r: bufio.NewReader(c)}
}

// get sends one request on the connection and returns the body (the
// target's name).
func (k *keepAlive) get() (string, error) {
	_ = k.c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := fmt.Fprint(k.c, "GET / HTTP/1.1\r\nHost: lb\r\n\r\n"); err != nil {
		return "", err
	}
	resp, err := http.ReadResponse(k.r, nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
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
	var open *keepAlive
	for range 4 {
		k := dialKeepAlive(t, addr)
		who, err := k.get()
		if err != nil {
			t.Fatal(err)
		}
		if who == "n1" {
			open = k
			break
		}
		k.c.Close()
	}
	if open == nil {
		t.Fatal("no connection reached n1 in 4 tries of round robin over 2 targets")
	}

	l.Targets[0].Weight = 0
	p.Sync(LoadBalancer{ID: "lb-d", VIP: vip, Listeners: []Listener{l}})
	for i := range 4 {
		if who, err := open.get(); err != nil || who != "n1" {
			t.Fatalf("request %d on the connection open to the drained n1: %q, %v; want it served by n1", i, who, err)
		}
		if who, err := get(fmt.Sprintf("http://%s/", addr)); err != nil || who != "n2" {
			t.Fatalf("new connection %d while n1 drains: %q, %v; want n2", i, who, err)
		}
	}

	l.Targets = l.Targets[1:]
	p.Sync(LoadBalancer{ID: "lb-d", VIP: vip, Listeners: []Listener{l}})
	if who, err := open.get(); err == nil {
		t.Fatalf("a request on the connection to the deregistered n1 was answered by %q; want the connection closed", who)
	}
	if who, err := get(fmt.Sprintf("http://%s/", addr)); err != nil || who != "n2" {
		t.Fatalf("new connection after n1 left: %q, %v; want n2", who, err)
	}
	// The closed connections are released as their proxies notice.
	waitFor(t, "n2 alone, with no open connection", 3*time.Second, func() bool {
		st, _ := p.Status("lb-d")
		got := st.Listeners[0].Targets
		return len(got) == 1 && got[0].ID == "n2" && got[0].Active == 0
	})
}
