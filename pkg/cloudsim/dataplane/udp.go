package dataplane

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

// udpSession is one client address's flow: a connected socket to the
// target chosen for the client's first datagram. Replies from the target go
// back to the client from the listener's socket, so the client sees them
// come from VIP:port.
type udpSession struct {
	client netip.AddrPort
	t      *target
	up     *net.UDPConn
	last   atomic.Int64 // unix nanoseconds of the last datagram either way
}

// serveUDP reads datagrams until the listener stops.
func (l *listener) serveUDP(pc *net.UDPConn) {
	defer l.wg.Done()
	buf := make([]byte, 64<<10)
	for {
		n, from, err := pc.ReadFromUDPAddrPort(buf)
		if err != nil {
			if l.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			continue // e.g. ICMP port unreachable reported on the socket
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		s := l.udpSession(pc, from)
		if s == nil {
			continue // no target in service: the datagram is dropped
		}
		s.last.Store(time.Now().UnixNano())
		_ = s.up.SetWriteDeadline(time.Now().Add(l.plane.cfg.DialTimeout))
		_, _ = s.up.Write(buf[:n])
	}
}

// udpSession returns the client's session, starting one if needed.
func (l *listener) udpSession(pc *net.UDPConn, from netip.AddrPort) *udpSession {
	l.mu.Lock()
	s := l.sessions[from]
	l.mu.Unlock()
	if s != nil {
		return s
	}
	// A firewall drops the datagrams of a denied flow; the next datagram
	// asks again.
	if l.admitInbound(from) != nil {
		return nil
	}
	t := l.acquire(from.Addr())
	if t == nil {
		return nil
	}
	if l.admitForward(from, t) != nil {
		l.release(t)
		return nil
	}
	up, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(t.Addr))
	if err != nil {
		l.noteDialError(t, err)
		l.release(t)
		return nil
	}
	s = &udpSession{client: from, t: t, up: up}
	s.last.Store(time.Now().UnixNano())
	if !l.track(up) {
		_ = up.Close()
		l.release(t)
		return nil
	}
	if !l.bind(t, up) { // removed meanwhile
		l.untrack(up)
		_ = up.Close()
		l.release(t)
		return nil
	}
	l.mu.Lock()
	l.sessions[from] = s
	l.mu.Unlock()
	l.wg.Add(1)
	go l.udpReplies(pc, s)
	return s
}

// udpReplies relays the target's datagrams back to the client until the
// session has been idle for the listener's idle timeout or the listener
// stops.
func (l *listener) udpReplies(pc *net.UDPConn, s *udpSession) {
	defer l.wg.Done()
	defer func() {
		l.mu.Lock()
		if l.sessions[s.client] == s {
			delete(l.sessions, s.client)
		}
		delete(l.conns, s.up)
		delete(s.t.flows, s.up)
		s.t.active--
		l.mu.Unlock()
		_ = s.up.Close()
	}()
	idle := l.idleTimeout()
	buf := make([]byte, 64<<10)
	for {
		_ = s.up.SetReadDeadline(time.Unix(0, s.last.Load()).Add(idle))
		n, err := s.up.Read(buf)
		if n > 0 {
			s.last.Store(time.Now().UnixNano())
			_, _ = pc.WriteToUDPAddrPort(buf[:n], s.client)
		}
		if err != nil {
			if l.ctx.Err() != nil {
				return
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				if time.Since(time.Unix(0, s.last.Load())) >= idle {
					return
				}
				continue
			}
			// A datagram the target refused (nothing listens there) comes
			// back as ECONNREFUSED on the connected socket; the flow may
			// recover, so only the idle timeout ends it.
			if errors.Is(err, syscall.ECONNREFUSED) {
				continue
			}
			return
		}
	}
}
