package dataplane

import (
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/testca"
)

// TestHTTPRoute: the rule of a request is its host's domain (exact before
// wildcard, else the default domain), then the longest path prefix.
func TestHTTPRoute(t *testing.T) {
	h := &HTTP{Rules: []HTTPRule{
		{ID: "vip", Domain: "127.0.0.9", URL: "/", Default: true},
		{ID: "a", Domain: "a.example.test", URL: "/"},
		{ID: "a-api", Domain: "a.example.test", URL: "/api"},
		{ID: "wild", Domain: "*.example.test", URL: "/"},
		{ID: "tail", Domain: "www.example.*", URL: "/"},
	}}
	tests := []struct{ host, path, want string }{
		{"127.0.0.9:8080", "/x", "vip"},
		{"a.example.test", "/", "a"},
		{"A.Example.Test.", "/api/v1", "a-api"},
		{"b.example.test", "/api", "wild"},
		{"x.y.example.test", "/", "wild"},
		{"www.example.org", "/", "tail"},
		{"other.test", "/", "vip"},
		{"example.test", "/", "vip"}, // "*." needs a label in front
	}
	for _, tt := range tests {
		got := ""
		if r := h.route(tt.host, tt.path); r != nil {
			got = r.ID
		}
		if got != tt.want {
			t.Errorf("route(%q, %q) = %q, want %q", tt.host, tt.path, got, tt.want)
		}
	}
	noDefault := &HTTP{Rules: []HTTPRule{{ID: "a", Domain: "a.example.test", URL: "/api"}}}
	for _, c := range [][2]string{{"other.test", "/api"}, {"a.example.test", "/"}} {
		if r := noDefault.route(c[0], c[1]); r != nil {
			t.Errorf("route(%q, %q) = %s, want none", c[0], c[1], r.ID)
		}
	}
}

// TestHTTPProxy: an HTTP listener forwards each request to a target of its
// rule, round robin by weight, with X-Forwarded-For; a request no rule
// takes is 404, a rule without a target in service 503; with TLS it is
// HTTPS, the chain verified against the CA.
func TestHTTPProxy(t *testing.T) {
	p := newPlane(t, Config{})
	n1 := startNode(t, "127.0.19.11", "n1")
	n2 := startNode(t, "127.0.19.12", "n2")
	n3 := startNode(t, "127.0.19.13", "n3")
	n3.srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "n3 %s %s xff=%s", r.Host, r.URL.Path, r.Header.Get("X-Forwarded-For"))
	})
	vip, err := p.AllocVIP("lb-http")
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t, vip)
	t1, t2, t3 := Target{ID: "n1", Addr: n1.addr, Weight: 30}, Target{ID: "n2", Addr: n2.addr, Weight: 10}, Target{ID: "n3", Addr: n3.addr, Weight: 10}
	sync := func(tl *TLS) {
		p.Sync(LoadBalancer{ID: "lb-http", VIP: vip, Listeners: []Listener{{
			ID: "l1", Protocol: TCP, Port: port, TLS: tl,
			Targets: []Target{t1, t2, t3},
			HTTP: &HTTP{Rules: []HTTPRule{
				{ID: "def", Domain: vip.String(), URL: "/", Default: true, Targets: []Target{t1, t2}},
				{ID: "n3", Domain: vip.String(), URL: "/three", Targets: []Target{t3}},
				{ID: "none", Domain: vip.String(), URL: "/none"},
			}},
		}}})
	}
	sync(nil)
	base := fmt.Sprintf("http://%s", netip.AddrPortFrom(vip, uint16(port)))
	counts := map[string]int{}
	for range 8 {
		body, err := get(base + "/")
		if err != nil {
			t.Fatal(err)
		}
		counts[body]++
	}
	if counts["n1"] != 6 || counts["n2"] != 2 {
		t.Errorf("default rule answers %v, want n1:6 n2:2 (weights 30:10)", counts)
	}
	if body, err := get(base + "/three/x"); err != nil || !strings.HasPrefix(body, "n3 "+netip.AddrPortFrom(vip, uint16(port)).String()+" /three/x xff=127.") {
		t.Errorf("/three/x = %q, %v; want n3 with the Host, path and X-Forwarded-For", body, err)
	}
	for path, code := range map[string]int{"/none": http.StatusServiceUnavailable} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != code {
			t.Errorf("%s: status %d, want %d", path, resp.StatusCode, code)
		}
	}

	// Keep-alive: several requests on one client connection.
	c := &http.Client{Timeout: 2 * time.Second}
	for i := range 3 {
		resp, err := c.Get(base + "/three")
		if err != nil {
			t.Fatalf("keep-alive request %d: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	c.CloseIdleConnections()

	// HTTPS: TLS first, then the same routing.
	ca, err := testca.New("http test CA")
	if err != nil {
		t.Fatal(err)
	}
	server := mustLeaf(t)(ca.Server(vip.String()))
	sync(&TLS{Certificate: server})
	body, err := httpsGet(fmt.Sprintf("https://%s/three", netip.AddrPortFrom(vip, uint16(port))), ca.Pool(), nil)
	if err != nil || !strings.HasPrefix(body, "n3 ") {
		t.Fatalf("HTTPS GET: %q, %v", body, err)
	}
}
