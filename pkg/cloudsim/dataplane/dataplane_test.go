package dataplane

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseVIPRange(t *testing.T) {
	tests := []struct {
		in          string
		first, last string
		size        uint64
		wantErr     string
	}{
		{"", "127.240.0.1", "127.240.255.254", 65534, ""},
		{"127.1.0.1-127.1.0.3", "127.1.0.1", "127.1.0.3", 3, ""},
		{" 127.1.0.1 - 127.1.0.1 ", "127.1.0.1", "127.1.0.1", 1, ""},
		{"127.2.0.0/30", "127.2.0.1", "127.2.0.2", 2, ""},
		{"127.2.0.7/31", "127.2.0.6", "127.2.0.7", 2, ""},
		{"127.1.0.3-127.1.0.1", "", "", 0, "before the first"},
		{"fd00::1-fd00::2", "", "", 0, "IPv4"},
		{"fd00::/64", "", "", 0, "IPv4"},
		{"10.0.0.0/4", "", "", 0, "shorter than /8"},
		{"nonsense", "", "", 0, "want A-B"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p, err := parseVIPRange(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := u32Addr(p.first).String(); got != tt.first {
				t.Errorf("first %s, want %s", got, tt.first)
			}
			if got := u32Addr(p.last).String(); got != tt.last {
				t.Errorf("last %s, want %s", got, tt.last)
			}
			if p.size() != tt.size {
				t.Errorf("size %d, want %d", p.size(), tt.size)
			}
		})
	}
}

func TestVIPAllocation(t *testing.T) {
	p, err := New(Config{VIPRange: "127.1.0.1-127.1.0.3", Disabled: true})
	if err != nil {
		t.Fatal(err)
	}
	p.pool.next = p.pool.first // deterministic for the test
	var got []string
	for i := range 3 {
		a, err := p.AllocVIP(fmt.Sprint("lb", i))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, a.String())
	}
	if strings.Join(got, ",") != "127.1.0.1,127.1.0.2,127.1.0.3" {
		t.Fatalf("allocated %v", got)
	}
	if _, err := p.AllocVIP("lb3"); err == nil || !strings.Contains(err.Error(), "no free VIP") {
		t.Fatalf("exhausted pool: %v", err)
	}
	p.ReleaseVIP(netip.MustParseAddr("127.1.0.2"))
	if err := p.ReserveVIP("x", netip.MustParseAddr("127.1.0.1")); err == nil {
		t.Fatal("reserving a used VIP must fail")
	}
	if err := p.ReserveVIP("x", netip.MustParseAddr("127.9.0.1")); err == nil {
		t.Fatal("reserving a VIP outside the pool must fail")
	}
	a, err := p.AllocVIP("lb4")
	if err != nil || a.String() != "127.1.0.2" {
		t.Fatalf("after release: %v %v", a, err)
	}
}

func TestSmoothWRR(t *testing.T) {
	tests := []struct {
		weights []int
		picks   int
		want    string
	}{
		{[]int{1, 1, 1}, 6, "abcabc"},
		{[]int{10, 10}, 4, "abab"},
		{[]int{5, 1, 1}, 7, "aabacaa"},
		{[]int{2, 1}, 6, "abaaba"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.weights), func(t *testing.T) {
			var ts []*target
			for i, w := range tt.weights {
				ts = append(ts, &target{Target: Target{ID: string(rune('a' + i)), Weight: w}})
			}
			var sb strings.Builder
			for range tt.picks {
				sb.WriteString(smoothWRR(ts).ID)
			}
			if sb.String() != tt.want {
				t.Fatalf("picks %q, want %q", sb.String(), tt.want)
			}
		})
	}
}

func TestPick(t *testing.T) {
	mk := func(spec Listener) *listener {
		l := &listener{sticky: map[netip.Addr]stickyEntry{}}
		l.setSpecLocked(spec)
		return l
	}
	targets := []Target{
		{ID: "a", Addr: netip.MustParseAddrPort("127.0.0.1:1"), Weight: 10},
		{ID: "b", Addr: netip.MustParseAddrPort("127.0.0.1:2"), Weight: 10},
		{ID: "z", Addr: netip.MustParseAddrPort("127.0.0.1:3"), Weight: 0},
	}
	c1, c2 := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")
	tests := []struct {
		name    string
		spec    Listener
		clients []netip.Addr
		want    string
	}{
		{"round robin skips weight 0", Listener{Targets: targets}, []netip.Addr{c1, c1, c1, c1}, "abab"},
		{"sticky client", Listener{Targets: targets, Stickiness: time.Minute}, []netip.Addr{c1, c2, c1, c2}, "abab"},
		{"sticky same client", Listener{Targets: targets, Stickiness: time.Minute}, []netip.Addr{c1, c1, c1}, "aaa"},
		{"ip hash is stable", Listener{Targets: targets, Scheduler: IPHash}, []netip.Addr{c2, c2, c2}, "xxx"},
		{"unknown health takes no traffic", Listener{Targets: targets, HealthCheck: &HealthCheck{Type: CheckTCP}}, []netip.Addr{c1}, "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mk(tt.spec)
			var sb strings.Builder
			for _, c := range tt.clients {
				if p := l.pickLocked(c, time.Now()); p == nil {
					sb.WriteString("-")
				} else {
					sb.WriteString(p.ID)
				}
			}
			got := sb.String()
			if tt.want == "xxx" {
				if got != "aaa" && got != "bbb" {
					t.Fatalf("picks %q, want the same target every time", got)
				}
				return
			}
			if got != tt.want {
				t.Fatalf("picks %q, want %q", got, tt.want)
			}
		})
	}
}

// node is a stand-in for a Kubernetes node: an HTTP server on a loopback
// address that answers its own name.
type node struct {
	name string
	addr netip.AddrPort
	srv  *http.Server
	ln   net.Listener
}

func startNode(t *testing.T, ip, name string) *node {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	n := &node{name: name, addr: netip.MustParseAddrPort(ln.Addr().String()), ln: ln}
	n.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/fail" {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
			fmt.Fprint(w, name)
		}),
		ReadHeaderTimeout: time.Second,
	}
	go func() { _ = n.srv.Serve(ln) }()
	t.Cleanup(n.stop)
	return n
}

func (n *node) stop() { _ = n.srv.Close() }

func newPlane(t *testing.T, cfg Config) *Plane {
	t.Helper()
	if cfg.VIPRange == "" {
		cfg.VIPRange = "127.241.0.1-127.241.0.254"
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func freePort(t *testing.T, vip netip.Addr) int {
	t.Helper()
	ln, err := net.Listen("tcp", netip.AddrPortFrom(vip, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func get(url string) (string, error) {
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func healthy(p *Plane, lb string) int {
	st, _ := p.Status(lb)
	n := 0
	for _, l := range st.Listeners {
		n += l.HealthyTargets
	}
	return n
}

func TestTCPRoundRobinAndHealth(t *testing.T) {
	p := newPlane(t, Config{HealthCheckInterval: 30 * time.Millisecond})
	nodes := []*node{startNode(t, "127.0.9.1", "n1"), startNode(t, "127.0.9.2", "n2"), startNode(t, "127.0.9.3", "n3")}
	vip, err := p.AllocVIP("lb-1")
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t, vip)
	var targets []Target
	for _, n := range nodes {
		targets = append(targets, Target{ID: n.name, Addr: n.addr, Weight: 10})
	}
	hc := &HealthCheck{Type: CheckTCP, HealthyThreshold: 2, UnhealthyThreshold: 2}
	p.Sync(LoadBalancer{ID: "lb-1", VIP: vip, Listeners: []Listener{{ID: "l1", Protocol: TCP, Port: port, Targets: targets, HealthCheck: hc}}})
	waitFor(t, "3 healthy targets", 3*time.Second, func() bool { return healthy(p, "lb-1") == 3 })

	url := fmt.Sprintf("http://%s/", netip.AddrPortFrom(vip, uint16(port)))
	seen := map[string]int{}
	for range 6 {
		body, err := get(url)
		if err != nil {
			t.Fatal(err)
		}
		seen[body]++
	}
	if seen["n1"] != 2 || seen["n2"] != 2 || seen["n3"] != 2 {
		t.Fatalf("round robin over 3 nodes, 6 requests: %v", seen)
	}

	nodes[1].stop()
	waitFor(t, "n2 marked unhealthy", 3*time.Second, func() bool { return healthy(p, "lb-1") == 2 })
	for range 6 {
		body, err := get(url)
		if err != nil {
			t.Fatalf("request after n2 stopped: %v", err)
		}
		if body == "n2" {
			t.Fatal("traffic reached the stopped node")
		}
	}
	st, _ := p.Status("lb-1")
	forwarded := map[string]uint64{}
	for _, ts := range st.Listeners[0].Targets {
		if ts.ID == "n2" && (ts.Health != HealthUnhealthy || ts.LastError == "") {
			t.Fatalf("n2 status %+v", ts)
		}
		forwarded[ts.ID] = ts.Forwarded
	}
	// Each target counts the connections it was given: 2 each, then the 6
	// after n2 stopped split between n1 and n3.
	if forwarded["n1"]+forwarded["n3"] != 10 || forwarded["n2"] != 2 {
		t.Fatalf("forwarded per target: %v, want n2 2 and n1+n3 10", forwarded)
	}

	// No target in service: the connection is refused (reset), not hung.
	nodes[0].stop()
	nodes[2].stop()
	waitFor(t, "no healthy target", 3*time.Second, func() bool { return healthy(p, "lb-1") == 0 })
	if _, err := get(url); err == nil {
		t.Fatal("a request with no healthy target must fail")
	}
	st, _ = p.Status("lb-1")
	if st.Listeners[0].Refused == 0 {
		t.Fatalf("refused count: %+v", st.Listeners[0])
	}

	// Removing the load balancer closes the port.
	p.Remove("lb-1")
	if c, err := net.DialTimeout("tcp", netip.AddrPortFrom(vip, uint16(port)).String(), time.Second); err == nil {
		c.Close()
		t.Fatal("the listener still accepts after Remove")
	}
}

func TestHTTPHealthCheckCodes(t *testing.T) {
	tests := []struct {
		name  string
		path  string
		codes int
		want  string
	}{
		{"2xx only, 200", "/ok", 2, HealthHealthy},
		{"2xx only, 503", "/fail", 2, HealthUnhealthy},
		{"any code, 503", "/fail", 31, HealthHealthy},
		{"5xx only, 200", "/ok", 16, HealthUnhealthy},
	}
	n := startNode(t, "127.0.9.10", "n")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hc := &HealthCheck{Type: CheckHTTP, HTTPPath: tt.path, HTTPCodes: tt.codes, HTTPMethod: "GET", Timeout: time.Second}
			err := check(t.Context(), hc, TCP, n.addr)
			got := HealthHealthy
			if err != nil {
				got = HealthUnhealthy
			}
			if got != tt.want {
				t.Fatalf("health %s (%v), want %s", got, err, tt.want)
			}
		})
	}
}

func TestUpdateKeepsHealthAndPort(t *testing.T) {
	p := newPlane(t, Config{HealthCheckInterval: 30 * time.Millisecond})
	n1, n2 := startNode(t, "127.0.9.21", "n1"), startNode(t, "127.0.9.22", "n2")
	vip, _ := p.AllocVIP("lb-u")
	port := freePort(t, vip)
	hc := &HealthCheck{Type: CheckTCP}
	l := Listener{ID: "l", Protocol: TCP, Port: port, HealthCheck: hc, Targets: []Target{{ID: "n1", Addr: n1.addr, Weight: 10}}}
	p.Sync(LoadBalancer{ID: "lb-u", VIP: vip, Listeners: []Listener{l}})
	waitFor(t, "n1 healthy", 3*time.Second, func() bool { return healthy(p, "lb-u") == 1 })

	l.Targets = append(l.Targets, Target{ID: "n2", Addr: n2.addr, Weight: 10})
	p.Sync(LoadBalancer{ID: "lb-u", VIP: vip, Listeners: []Listener{l}})
	st, _ := p.Status("lb-u")
	if got := st.Listeners[0].Targets[0]; got.Health != HealthHealthy {
		t.Fatalf("n1 lost its health on update: %+v", got)
	}
	waitFor(t, "n2 healthy", 3*time.Second, func() bool { return healthy(p, "lb-u") == 2 })

	// Turning the health check off puts every target in service at once.
	l.HealthCheck = nil
	l.Targets = append(l.Targets, Target{ID: "gone", Addr: netip.MustParseAddrPort("127.0.9.23:1"), Weight: 10})
	p.Sync(LoadBalancer{ID: "lb-u", VIP: vip, Listeners: []Listener{l}})
	if h := healthy(p, "lb-u"); h != 3 {
		t.Fatalf("without a health check every target is in service; got %d", h)
	}
}

func TestUDPEcho(t *testing.T) {
	p := newPlane(t, Config{})
	echo := func(ip string) netip.AddrPort {
		pc, err := net.ListenPacket("udp", ip+":0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pc.Close() })
		go func() {
			buf := make([]byte, 2048)
			for {
				n, from, err := pc.ReadFrom(buf)
				if err != nil {
					return
				}
				_, _ = pc.WriteTo(append([]byte(ip+":"), buf[:n]...), from)
			}
		}()
		return netip.MustParseAddrPort(pc.LocalAddr().String())
	}
	e1, e2 := echo("127.0.9.31"), echo("127.0.9.32")
	vip, _ := p.AllocVIP("lb-udp")
	pc, err := net.ListenPacket("udp", netip.AddrPortFrom(vip, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	port := pc.LocalAddr().(*net.UDPAddr).Port
	pc.Close()
	p.Sync(LoadBalancer{ID: "lb-udp", VIP: vip, Listeners: []Listener{{
		ID: "u", Protocol: UDP, Port: port, IdleTimeout: time.Second,
		Targets:     []Target{{ID: "e1", Addr: e1, Weight: 10}, {ID: "e2", Addr: e2, Weight: 10}},
		HealthCheck: &HealthCheck{Type: CheckCustom, Send: []byte("ping"), Expect: []byte("ping")},
	}}})
	waitFor(t, "2 healthy UDP targets", 3*time.Second, func() bool { return healthy(p, "lb-udp") == 2 })

	seen := map[string]bool{}
	for i := range 2 {
		c, err := net.Dial("udp", netip.AddrPortFrom(vip, uint16(port)).String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for j := range 2 { // one session per client: both datagrams reach the same target
			msg := fmt.Sprintf("hello-%d-%d", i, j)
			_ = c.SetDeadline(time.Now().Add(2 * time.Second))
			if _, err := c.Write([]byte(msg)); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 2048)
			n, err := c.Read(buf)
			if err != nil {
				t.Fatalf("reading the echo: %v", err)
			}
			who, got, _ := strings.Cut(string(buf[:n]), ":")
			if got != msg {
				t.Fatalf("echo %q, want %q", got, msg)
			}
			if j == 1 && !seen[who] {
				t.Fatalf("second datagram of client %d went to %s, another target", i, who)
			}
			seen[who] = true
		}
	}
	if len(seen) != 2 {
		t.Fatalf("two clients should be spread over both targets, got %v", seen)
	}
}

func TestCloseStopsEverything(t *testing.T) {
	p, err := New(Config{VIPRange: "127.241.1.1-127.241.1.10", HealthCheckInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	n := startNode(t, "127.0.9.41", "n")
	before := runtime.NumGoroutine()
	vip, _ := p.AllocVIP("lb-c")
	port := freePort(t, vip)
	p.Sync(LoadBalancer{ID: "lb-c", VIP: vip, Listeners: []Listener{{ID: "l", Protocol: TCP, Port: port,
		Targets: []Target{{ID: "n", Addr: n.addr, Weight: 10}}, HealthCheck: &HealthCheck{Type: CheckTCP}}}})
	waitFor(t, "healthy", 3*time.Second, func() bool { return healthy(p, "lb-c") == 1 })

	// An open, idle connection through the listener must not block Close.
	c, err := net.Dial("tcp", netip.AddrPortFrom(vip, uint16(port)).String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _, _ = io.Copy(io.Discard, c) }()
	time.Sleep(50 * time.Millisecond)

	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs")
	}
	wg.Wait()                                  // the proxied connection was closed
	p.Sync(LoadBalancer{ID: "lb-c", VIP: vip}) // a no-op after Close
	if len(p.LoadBalancers()) != 0 {
		t.Fatal("Sync after Close must do nothing")
	}
	// No goroutine of the plane outlives Close (the node's own connection
	// handler may take a moment to see the closed connection).
	waitFor(t, "goroutines to end", 3*time.Second, func() bool { return runtime.NumGoroutine() <= before })
}
