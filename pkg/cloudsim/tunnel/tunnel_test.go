package tunnel

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/testca"
)

// echo answers what a tunneled request looks like to cloudsim's handler.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintf(w, "%s %s %s", r.Method, r.Host, r.URL.Path)
})

func newTunnels(t *testing.T) (*Tunnels, *httptest.Server) {
	t.Helper()
	ca, err := testca.New("test")
	if err != nil {
		t.Fatal(err)
	}
	tu := New(echo, ca, "tencentcloudapi.com", "oraclecloud.com")
	srv := httptest.NewServer(tu)
	t.Cleanup(func() { tu.Close(); srv.Close() })
	return tu, srv
}

// client is an HTTP client that uses srv as its proxy and trusts the
// tunnels' CA, as an SDK configured for cloudsim does.
func client(t *testing.T, tu *Tunnels, srv *httptest.Server) *http.Client {
	t.Helper()
	proxy, _ := url.Parse(srv.URL)
	roots := tu.ca.Pool()
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(proxy), TLSClientConfig: &tls.Config{RootCAs: roots}}}
}

// get fetches url and drops the answer.
func get(c *http.Client, url string) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// TestTunnels: an HTTPS request to a real API hostname, sent through
// cloudsim as the proxy (CONNECT), arrives in cloudsim's handler with the
// real Host, over TLS with a certificate for that hostname; a plain-HTTP
// request through the proxy (absolute-form) goes to the handler directly;
// a hostname of no emulated API is refused, and nothing is forwarded.
func TestTunnels(t *testing.T) {
	tu, srv := newTunnels(t)
	c := client(t, tu, srv)
	tests := []struct {
		url, want string
	}{
		{"https://clb.tencentcloudapi.com/", "GET clb.tencentcloudapi.com /"},
		{"https://iaas.us-ashburn-1.oraclecloud.com/20160918/vcns", "GET iaas.us-ashburn-1.oraclecloud.com /20160918/vcns"},
		{"https://network-load-balancer-api.us-ashburn-1.oci.oraclecloud.com/20200501/networkLoadBalancers", "GET network-load-balancer-api.us-ashburn-1.oci.oraclecloud.com /20200501/networkLoadBalancers"},
		{"http://cvm.tencentcloudapi.com/", "GET cvm.tencentcloudapi.com /"},
	}
	for _, tt := range tests {
		resp, err := c.Get(tt.url)
		if err != nil {
			t.Fatalf("%s: %v", tt.url, err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(string(b), tt.want) {
			t.Errorf("%s: %d %q, want %q", tt.url, resp.StatusCode, b, tt.want)
		}
	}
	if err := get(c, "https://example.com/"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("a tunnel to example.com: %v, want it refused (403)", err)
	}
	if !tu.Accepts("CLB.tencentcloudapi.com.") || tu.Accepts("tencentcloudapi.com.evil.example") || tu.Accepts("xoraclecloud.com") {
		t.Error("Accepts matches the wrong hostnames")
	}
}

// TestTunnelPlainPort: a CONNECT to port 80 carries plain HTTP (the
// Tencent Node SDK's proxy agent tunnels http:// endpoints too).
func TestTunnelPlainPort(t *testing.T) {
	_, srv := newTunnels(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprint(conn, "CONNECT tke.tencentcloudapi.com:80 HTTP/1.1\r\nHost: tke.tencentcloudapi.com:80\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close() // a 200 to CONNECT has no body
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %s", resp.Status)
	}
	fmt.Fprint(conn, "POST / HTTP/1.1\r\nHost: tke.tencentcloudapi.com\r\nContent-Length: 0\r\n\r\n")
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if string(b) != "POST tke.tencentcloudapi.com /" {
		t.Errorf("inside the tunnel: %q", b)
	}
}

// TestTunnelsClose: Close ends an open tunnel (cloudsim's Close, Suspend)
// and refuses new ones until Reopen.
func TestTunnelsClose(t *testing.T) {
	tu, srv := newTunnels(t)
	c := client(t, tu, srv)
	if err := get(c, "https://clb.tencentcloudapi.com/"); err != nil {
		t.Fatal(err)
	}
	tu.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		tu.mu.Lock()
		n := len(tu.open)
		tu.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d tunnels still open after Close", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.CloseIdleConnections()
	if err := get(c, "https://clb.tencentcloudapi.com/"); err == nil {
		t.Error("a tunnel was served after Close")
	}
	tu.Reopen()
	if err := get(c, "https://clb.tencentcloudapi.com/"); err != nil {
		t.Errorf("after Reopen: %v", err)
	}
}
