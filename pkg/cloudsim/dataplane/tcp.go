package dataplane

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"time"
)

// serveTCP accepts connections until the listener stops.
func (l *listener) serveTCP(ln net.Listener) {
	defer l.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			if l.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			// A transient accept error (e.g. too many open files): back off
			// briefly rather than spin.
			select {
			case <-l.ctx.Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
			continue
		}
		if !l.track(c) {
			_ = c.Close()
			return
		}
		l.wg.Add(1)
		go l.proxyTCP(c)
	}
}

// proxyTCP forwards one client connection to a target. Without a target in
// service the client gets a reset, like a load balancer with no healthy
// backend.
func (l *listener) proxyTCP(client net.Conn) {
	defer l.wg.Done()
	defer l.untrack(client)
	defer client.Close()

	var from netip.AddrPort
	if ap, err := netip.ParseAddrPort(client.RemoteAddr().String()); err == nil {
		from = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	// A firewall that drops the flow: the client would see its SYN go
	// unanswered and time out; a reset tells it the same without the wait,
	// and no byte reaches a target either way.
	if l.admitInbound(from) != nil {
		reset(client)
		return
	}
	// A TLS listener completes the handshake before it picks a target, as
	// a load balancer that holds the certificate does; from here on conn
	// carries the client's plain bytes.
	conn, ok := l.terminateTLS(client)
	if !ok {
		return
	}
	if l.httpSpec() != nil { // layer 7: per request (http.go)
		l.serveHTTP(conn, from)
		return
	}
	t := l.acquire(from.Addr())
	if t == nil {
		reset(client) // RST rather than FIN: the connection is refused
		return
	}
	defer l.release(t)
	if l.admitForward(from, t) != nil {
		reset(client)
		return
	}

	ctx, cancel := context.WithTimeout(l.ctx, l.plane.cfg.DialTimeout)
	up, err := (&net.Dialer{}).DialContext(ctx, "tcp", t.Addr.String())
	cancel()
	if err != nil {
		l.noteDialError(t, err)
		reset(client)
		return
	}
	if !l.track(up) {
		_ = up.Close()
		return
	}
	defer l.untrack(up)
	defer up.Close()
	if !l.bind(t, client, up) { // removed while we dialed
		reset(client)
		return
	}
	defer l.unbind(t, client, up)
	if err := l.sendProxyHeader(up, from); err != nil {
		l.noteDialError(t, err)
		reset(client)
		return
	}
	splice(conn, l.toTarget(up), l.idleTimeout())
}

// reset makes closing the connection send an RST instead of a FIN.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
}

func (l *listener) noteDialError(t *target, err error) {
	l.mu.Lock()
	t.lastErr = "forwarding: " + err.Error()
	l.mu.Unlock()
}

// splice copies both directions until both are done. Each direction that
// reaches EOF half-closes the other side, so request/response protocols
// that rely on a half-close work. The connection ends when nothing moved in
// either direction for idle.
func splice(a, b net.Conn, idle time.Duration) {
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	done := make(chan struct{})
	go func() {
		defer close(done)
		copyIdle(b, a, idle, &last)
		closeWrite(b)
	}()
	copyIdle(a, b, idle, &last)
	closeWrite(a)
	<-done
}

// copyIdle copies src to dst. A read that times out ends the copy only if
// the whole connection (both directions, via last) has been idle for idle.
func copyIdle(dst, src net.Conn, idle time.Duration, last *atomic.Int64) {
	buf := make([]byte, 32<<10)
	for {
		_ = src.SetReadDeadline(time.Now().Add(idle))
		n, err := src.Read(buf)
		if n > 0 {
			last.Store(time.Now().UnixNano())
			_ = dst.SetWriteDeadline(time.Now().Add(idle))
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) && time.Since(time.Unix(0, last.Load())) < idle {
				continue
			}
			return
		}
	}
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}
