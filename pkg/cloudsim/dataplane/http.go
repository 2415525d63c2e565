package dataplane

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// HTTP makes a TCP listener (with TLS: an HTTPS one) a layer-7 reverse
// proxy, as Tencent CLB's HTTP and HTTPS listeners are: each request is
// matched by its Host and path against Rules, and forwarded as HTTP to a
// target of the matching rule. The listener's Targets are every rule's
// targets (health is checked once per target); a rule lists which of them
// serve it.
type HTTP struct {
	Rules []HTTPRule
	// RequestHeaders edit each request before it is forwarded,
	// ResponseHeaders each answer before it is returned (headers.go).
	RequestHeaders, ResponseHeaders []HeaderEdit
}

// HTTPRule is one forwarding rule: requests for Domain whose path starts
// with URL go to Targets.
type HTTPRule struct {
	ID string // e.g. the LocationId; shown in errors
	// Domain is a host name, or a wildcard: "*.example.com" matches one or
	// more leading labels, "www.example.*" trailing ones.
	Domain string
	URL    string // a path prefix; "/" matches every path
	// Default makes the rule's domain the listener's default: a request
	// whose Host matches no rule's domain is matched against the default
	// domain's rules (Tencent's DefaultServer).
	Default bool
	Targets []Target // a subset of the listener's Targets (same ID and Addr)
}

// route picks the rule for a request: the rules of the domain the host
// matches (exact before wildcard), else of the default domain; among them
// the longest URL prefix of path. nil: no rule.
func (h *HTTP) route(host, path string) *HTTPRule {
	if h == nil {
		return nil
	}
	if hp, _, err := net.SplitHostPort(host); err == nil {
		host = hp
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	domain, found := "", false
	for _, exact := range []bool{true, false} {
		for _, r := range h.Rules {
			if domainMatches(r.Domain, host, exact) {
				domain, found = r.Domain, true
				break
			}
		}
		if found {
			break
		}
	}
	if !found {
		for _, r := range h.Rules {
			if r.Default {
				domain, found = r.Domain, true
				break
			}
		}
	}
	if !found {
		return nil
	}
	var best *HTTPRule
	for i := range h.Rules {
		r := &h.Rules[i]
		if r.Domain == domain && strings.HasPrefix(path, r.URL) && (best == nil || len(r.URL) > len(best.URL)) {
			best = r
		}
	}
	return best
}

// domainMatches: exact compares names; otherwise a leading or trailing
// "*" label stands for one or more labels.
func domainMatches(domain, host string, exact bool) bool {
	domain = strings.ToLower(domain)
	if exact {
		return domain == host
	}
	switch {
	case strings.HasPrefix(domain, "*."):
		return strings.HasSuffix(host, domain[1:]) && len(host) > len(domain)-1
	case strings.HasSuffix(domain, ".*"):
		return strings.HasPrefix(host, domain[:len(domain)-1]) && len(host) > len(domain)-1
	}
	return false
}

func (l *listener) httpSpec() *HTTP {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.spec.HTTP
}

// acquireRule picks a target among the rule's targets in service and
// counts the request on it.
func (l *listener) acquireRule(client netip.Addr, r *HTTPRule) *target {
	keys := map[string]bool{}
	for _, t := range r.Targets {
		keys[t.key()] = true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.pickAmongLocked(client, time.Now(), func(t *target) bool { return keys[t.key()] })
	if t == nil {
		l.refused++
		return nil
	}
	l.accepted++
	t.active++
	t.forwarded++
	return t
}

// serveHTTP reads requests from a client connection (already past TLS)
// and forwards each to a target of its rule, one upstream connection per
// request. The client's connection is kept alive between requests as
// HTTP/1.1 allows. Without a rule the client gets 404, without a target
// in service 503, and when the target cannot be reached 502: what a load
// balancer answers itself (cloudsim's choice of codes).
func (l *listener) serveHTTP(conn net.Conn, from netip.AddrPort) {
	br := bufio.NewReader(conn)
	idle := l.idleTimeout()
	for {
		_ = conn.SetReadDeadline(time.Now().Add(idle))
		req, err := http.ReadRequest(br)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				var ne net.Error
				if !errors.As(err, &ne) || !ne.Timeout() {
					writeStatus(conn, http.StatusBadRequest, "malformed request")
				}
			}
			return
		}
		_ = conn.SetReadDeadline(time.Time{})
		if !l.forwardHTTP(conn, req, from) || req.Close {
			return
		}
	}
}

// forwardHTTP forwards one request and writes the answer; false ends the
// client connection.
func (l *listener) forwardHTTP(conn net.Conn, req *http.Request, from netip.AddrPort) bool {
	defer req.Body.Close()
	spec := l.httpSpec()
	rule := spec.route(req.Host, req.URL.Path)
	if rule == nil {
		return writeStatus(conn, http.StatusNotFound, fmt.Sprintf("no rule for host %q path %q", req.Host, req.URL.Path))
	}
	t := l.acquireRule(from.Addr(), rule)
	if t == nil {
		return writeStatus(conn, http.StatusServiceUnavailable, "no target in service for rule "+rule.ID)
	}
	defer l.release(t)
	if l.admitForward(from, t) != nil {
		return writeStatus(conn, http.StatusBadGateway, "the target is not reachable")
	}
	ctx, cancel := context.WithTimeout(l.ctx, l.plane.cfg.DialTimeout)
	up, err := (&net.Dialer{}).DialContext(ctx, "tcp", t.Addr.String())
	cancel()
	if err != nil {
		l.noteDialError(t, err)
		return writeStatus(conn, http.StatusBadGateway, "the target is not reachable")
	}
	if !l.track(up) {
		_ = up.Close()
		return false
	}
	defer l.untrack(up)
	defer up.Close()
	if !l.bind(t, conn, up) { // removed while we dialed
		return writeStatus(conn, http.StatusBadGateway, "the target was removed")
	}
	defer l.unbind(t, conn, up)
	// The client's address, as layer-7 load balancers pass it.
	if prior := req.Header.Get("X-Forwarded-For"); prior != "" {
		req.Header.Set("X-Forwarded-For", prior+", "+from.Addr().String())
	} else {
		req.Header.Set("X-Forwarded-For", from.Addr().String())
	}
	applyHeaderEdits(req.Header, spec.RequestHeaders)
	keep := !req.Close
	req.Close = true // one upstream connection per request
	idle := l.idleTimeout()
	_ = up.SetDeadline(time.Now().Add(idle))
	if err := req.Write(up); err != nil {
		return writeStatus(conn, http.StatusBadGateway, "forwarding the request failed")
	}
	resp, err := http.ReadResponse(bufio.NewReader(up), req)
	if err != nil {
		return writeStatus(conn, http.StatusBadGateway, "the target sent no valid answer")
	}
	defer resp.Body.Close()
	applyHeaderEdits(resp.Header, spec.ResponseHeaders)
	resp.Close = !keep
	_ = conn.SetWriteDeadline(time.Now().Add(idle))
	if err := resp.Write(conn); err != nil {
		return false
	}
	_ = conn.SetWriteDeadline(time.Time{})
	return keep
}

// writeStatus answers a request from the load balancer itself and closes
// the exchange; it reports whether the connection may go on.
func writeStatus(conn net.Conn, code int, msg string) bool {
	body := msg + "\n"
	resp := &http.Response{
		StatusCode: code, ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"text/plain; charset=utf-8"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Close:         true,
	}
	_ = resp.Write(conn)
	return false
}
