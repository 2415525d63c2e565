// Package tunnel lets a client reach cloudsim under the clouds' real API
// hostnames through its HTTP proxy setting, with no DNS or /etc/hosts
// change.
//
// Why: the official SDKs other than Go derive what they sign from the
// endpoint's hostname. tencentcloud-sdk-nodejs takes the service of the
// credential scope from the endpoint's first label
// (`service: this.endpoint.split(".")[0]`, common/abstract_client.js) and
// signs `host:<hostname>` without the port (common/sign.js), so an
// endpoint such as 127.0.0.1:8080 cannot verify. Pointed at the real
// hostname and at cloudsim as its proxy, such a client opens
// `CONNECT clb.tencentcloudapi.com:443` (or :80 for http) to cloudsim, which
// answers the tunnel itself: it serves its own API inside it (TLS on any
// port but 80, with a certificate for the hostname signed by a throwaway CA
// the client is told to trust). Requests in the tunnel carry the real Host,
// so the Tencent dialect takes the service from it and both clouds'
// signatures verify as on the real endpoints.
//
// Nothing is ever forwarded: a tunnel ends in cloudsim, and only the
// emulated APIs' hostnames are accepted (403 for others), so cloudsim is
// no open proxy. Plain-HTTP proxying (absolute-form `POST
// http://clb.tencentcloudapi.com/`) needs nothing from this package: Go's
// server takes the Host from the URI.
package tunnel

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/testca"
)

// Tunnels answers CONNECT requests for the emulated APIs' hostnames and
// hands every other request to the next handler. It is safe for
// concurrent use; Close ends the open tunnels.
type Tunnels struct {
	next    http.Handler
	domains []string
	ca      *testca.CA

	mu     sync.Mutex
	certs  map[string]*tls.Certificate // by hostname
	open   map[*http.Server]struct{}
	closed bool
}

// New serves next through tunnels to hostnames under domains (for example
// "tencentcloudapi.com": the domain itself and every name below it), TLS
// ones with certificates that ca signs.
func New(next http.Handler, ca *testca.CA, domains ...string) *Tunnels {
	return &Tunnels{next: next, domains: domains, ca: ca, certs: map[string]*tls.Certificate{}, open: map[*http.Server]struct{}{}}
}

// CAPEM is the certificate (PEM) clients must trust for TLS tunnels.
func (t *Tunnels) CAPEM() []byte { return t.ca.PEM }

// Accepts reports whether host is one of the emulated APIs' hostnames.
func (t *Tunnels) Accepts(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, d := range t.domains {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

// ServeHTTP implements http.Handler.
func (t *Tunnels) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		t.next.ServeHTTP(w, r)
		return
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil || !t.Accepts(host) {
		http.Error(w, fmt.Sprintf("cloudsim: CONNECT %s refused: cloudsim tunnels only to the APIs it emulates (hostnames under %s) and forwards nothing",
			r.Host, strings.Join(t.domains, ", ")), http.StatusForbidden)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "cloudsim: this connection cannot be tunneled", http.StatusInternalServerError)
		return
	}
	conn, rw, err := hj.Hijack()
	if err != nil {
		return
	}
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		_ = conn.Close()
		return
	}
	var c net.Conn = &bufferedConn{Conn: conn, r: rw.Reader}
	if port != "80" {
		cert, err := t.cert(host)
		if err != nil {
			_ = conn.Close()
			return
		}
		c = tls.Server(c, &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{*cert}})
	}
	t.serve(c)
}

// serve answers the requests of one tunneled connection until it closes.
func (t *Tunnels) serve(c net.Conn) {
	srv := &http.Server{Handler: t.next, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		_ = c.Close()
		return
	}
	t.open[srv] = struct{}{}
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.open, srv)
		t.mu.Unlock()
	}()
	_ = srv.Serve(newOneConn(c))
}

// Close ends every open tunnel and refuses new ones.
func (t *Tunnels) Close() {
	t.mu.Lock()
	t.closed = true
	open := make([]*http.Server, 0, len(t.open))
	for s := range t.open {
		open = append(open, s)
	}
	t.mu.Unlock()
	for _, s := range open {
		_ = s.Close()
	}
}

// Reopen accepts tunnels again after Close (cloudsim's Resume).
func (t *Tunnels) Reopen() {
	t.mu.Lock()
	t.closed = false
	t.mu.Unlock()
}

func (t *Tunnels) cert(host string) (*tls.Certificate, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.certs[host]; c != nil {
		return c, nil
	}
	leaf, err := t.ca.Server(host)
	if err != nil {
		return nil, err
	}
	c, err := leaf.TLS()
	if err != nil {
		return nil, err
	}
	t.certs[host] = &c
	return &c, nil
}

// bufferedConn reads first what the CONNECT request's reader buffered.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// oneConn is a listener that accepts one connection, then waits until
// that connection or the listener is closed and reports the listener
// closed, which ends http.Server.Serve (and lets Server.Close return).
type oneConn struct {
	c            chan net.Conn
	done, closed chan struct{}
	once         sync.Once
	addr         net.Addr
}

func newOneConn(c net.Conn) *oneConn {
	l := &oneConn{c: make(chan net.Conn, 1), done: make(chan struct{}), closed: make(chan struct{}), addr: c.LocalAddr()}
	l.c <- &closeConn{Conn: c, done: l.done}
	return l
}

func (l *oneConn) Accept() (net.Conn, error) {
	select {
	case c := <-l.c:
		return c, nil
	case <-l.done:
	case <-l.closed:
	}
	return nil, net.ErrClosed
}

func (l *oneConn) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *oneConn) Addr() net.Addr { return l.addr }

// closeConn signals done when closed.
type closeConn struct {
	net.Conn
	done chan struct{}
	once sync.Once
}

func (c *closeConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return c.Conn.Close()
}
