package dataplane

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// The PROXY protocol (haproxy.org/download/2.9/doc/proxy-protocol.txt): a
// TCP listener with Listener.ProxyProtocol set sends, on each connection to
// a target and before any byte of the client's, a header that carries the
// client's address and the address it connected to (VIP:port), as OCI's
// Load Balancer (connectionConfiguration.backendTcpProxyProtocolVersion 1
// or 2) and Network Load Balancer (listener isPpv2Enabled) do. The target
// then knows the real client although the connection comes from the load
// balancer.

// PROXY protocol versions for Listener.ProxyProtocol.
const (
	ProxyOff = 0
	ProxyV1  = 1 // text: "PROXY TCP4 <src> <dst> <sport> <dport>\r\n"
	ProxyV2  = 2 // binary: signature, version/command, family, length, addresses
)

// proxyV2Sig is the 12 bytes that open every v2 header (section 2.2).
var proxyV2Sig = []byte("\r\n\r\n\x00\r\nQUIT\n")

// maxProxyV1Len is the longest v1 header, CRLF included (section 2.1).
const maxProxyV1Len = 107

// appendProxyHeader appends the header of version v for a TCP connection
// from src to dst. Both addresses are of one family on the wire: IPv4 when
// both are IPv4, else IPv6 (an IPv4 address as IPv4-mapped).
func appendProxyHeader(b []byte, v int, src, dst netip.AddrPort) ([]byte, error) {
	v4 := src.Addr().Unmap().Is4() && dst.Addr().Unmap().Is4()
	sa, da := src.Addr().Unmap(), dst.Addr().Unmap()
	if !v4 {
		sa, da = netip.AddrFrom16(sa.As16()), netip.AddrFrom16(da.As16())
	}
	switch v {
	case ProxyV1:
		fam := "TCP6"
		if v4 {
			fam = "TCP4"
		}
		return fmt.Appendf(b, "PROXY %s %s %s %d %d\r\n", fam, sa, da, src.Port(), dst.Port()), nil
	case ProxyV2:
		b = append(b, proxyV2Sig...)
		b = append(b, 0x21) // version 2, command PROXY
		if v4 {
			b = append(b, 0x11) // AF_INET, STREAM
			b = binary.BigEndian.AppendUint16(b, 12)
			s, d := sa.As4(), da.As4()
			b = append(append(b, s[:]...), d[:]...)
		} else {
			b = append(b, 0x21) // AF_INET6, STREAM
			b = binary.BigEndian.AppendUint16(b, 36)
			s, d := sa.As16(), da.As16()
			b = append(append(b, s[:]...), d[:]...)
		}
		b = binary.BigEndian.AppendUint16(b, src.Port())
		return binary.BigEndian.AppendUint16(b, dst.Port()), nil
	}
	return b, fmt.Errorf("PROXY protocol version %d: want %d or %d", v, ProxyV1, ProxyV2)
}

// ReadProxyHeader reads a PROXY protocol header (v1 or v2) from r and
// returns its version and the client (src) and destination addresses; what
// follows the header stays in r. It is what a target behind a listener
// with ProxyProtocol runs first; tests use it as such a target.
func ReadProxyHeader(r *bufio.Reader) (version int, src, dst netip.AddrPort, err error) {
	first, err := r.Peek(1)
	if err != nil {
		return 0, src, dst, fmt.Errorf("PROXY header: %w", err)
	}
	if first[0] == 'P' {
		src, dst, err = readProxyV1(r)
		return ProxyV1, src, dst, err
	}
	src, dst, err = readProxyV2(r)
	return ProxyV2, src, dst, err
}

func readProxyV1(r *bufio.Reader) (src, dst netip.AddrPort, err error) {
	var line []byte
	for len(line) < maxProxyV1Len {
		c, err := r.ReadByte()
		if err != nil {
			return src, dst, fmt.Errorf("PROXY v1 header: %w", err)
		}
		line = append(line, c)
		if c == '\n' {
			break
		}
	}
	if !bytes.HasSuffix(line, []byte("\r\n")) {
		return src, dst, fmt.Errorf("PROXY v1 header %q: no CRLF within %d bytes", line, maxProxyV1Len)
	}
	f := strings.Fields(string(line))
	if len(f) != 6 || f[0] != "PROXY" || (f[1] != "TCP4" && f[1] != "TCP6") {
		return src, dst, fmt.Errorf("PROXY v1 header %q: want PROXY TCP4|TCP6 <src> <dst> <sport> <dport>", line)
	}
	parse := func(ip, port string) (netip.AddrPort, error) {
		a, err := netip.ParseAddr(ip)
		if err != nil {
			return netip.AddrPort{}, err
		}
		p, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return netip.AddrPort{}, err
		}
		return netip.AddrPortFrom(a.Unmap(), uint16(p)), nil
	}
	if src, err = parse(f[2], f[4]); err == nil {
		dst, err = parse(f[3], f[5])
	}
	if err != nil {
		return src, dst, fmt.Errorf("PROXY v1 header %q: %w", line, err)
	}
	return src, dst, nil
}

func readProxyV2(r *bufio.Reader) (src, dst netip.AddrPort, err error) {
	var fixed [16]byte
	if _, err := io.ReadFull(r, fixed[:]); err != nil {
		return src, dst, fmt.Errorf("PROXY v2 header: %w", err)
	}
	if !bytes.Equal(fixed[:12], proxyV2Sig) {
		return src, dst, errors.New("PROXY header: neither v1 (\"PROXY \") nor the v2 signature")
	}
	if fixed[12] != 0x21 {
		return src, dst, fmt.Errorf("PROXY v2 header: version/command 0x%02x, want 0x21 (v2, PROXY)", fixed[12])
	}
	body := make([]byte, binary.BigEndian.Uint16(fixed[14:]))
	if _, err := io.ReadFull(r, body); err != nil {
		return src, dst, fmt.Errorf("PROXY v2 header: addresses: %w", err)
	}
	n := map[byte]int{0x11: 4, 0x21: 16}[fixed[13]]
	if n == 0 || len(body) < 2*n+4 {
		return src, dst, fmt.Errorf("PROXY v2 header: family 0x%02x with %d address bytes, want TCP over IPv4 (0x11) or IPv6 (0x21)", fixed[13], len(body))
	}
	sa, _ := netip.AddrFromSlice(body[:n])
	da, _ := netip.AddrFromSlice(body[n : 2*n])
	src = netip.AddrPortFrom(sa.Unmap(), binary.BigEndian.Uint16(body[2*n:]))
	dst = netip.AddrPortFrom(da.Unmap(), binary.BigEndian.Uint16(body[2*n+2:]))
	return src, dst, nil // TLVs after the addresses, if any, are skipped
}

// sendProxyHeader writes the listener's PROXY header for a client from
// `from` to the target connection up, before the splice; nothing is sent
// when the listener has no ProxyProtocol.
func (l *listener) sendProxyHeader(up net.Conn, from netip.AddrPort) error {
	l.mu.Lock()
	v := l.spec.ProxyProtocol
	l.mu.Unlock()
	if v == ProxyOff {
		return nil
	}
	h, err := appendProxyHeader(nil, v, from, l.addr)
	if err != nil {
		return err
	}
	_ = up.SetWriteDeadline(time.Now().Add(l.plane.cfg.DialTimeout))
	_, err = up.Write(h)
	_ = up.SetWriteDeadline(time.Time{})
	return err
}
