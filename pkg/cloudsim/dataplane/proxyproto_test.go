package dataplane

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestProxyHeaderEncoding checks the headers against the layout of the
// PROXY protocol spec (haproxy.org proxy-protocol.txt, sections 2.1 and
// 2.2) byte for byte, then reads each back.
func TestProxyHeaderEncoding(t *testing.T) {
	v4src, v4dst := netip.MustParseAddrPort("127.3.0.10:40000"), netip.MustParseAddrPort("127.241.0.5:8080")
	v6src, v6dst := netip.MustParseAddrPort("[2001:db8::1]:443"), netip.MustParseAddrPort("[2001:db8::2]:80")
	sig := "0d0a0d0a000d0a515549540a"
	tests := []struct {
		name     string
		version  int
		src, dst netip.AddrPort
		want     string // v1: the text; v2: hex
		// wantSrc, wantDst: what a reader gets back (default src, dst)
		wantSrc, wantDst netip.AddrPort
	}{
		{name: "v1 IPv4", version: ProxyV1, src: v4src, dst: v4dst, want: "PROXY TCP4 127.3.0.10 127.241.0.5 40000 8080\r\n"},
		{name: "v1 IPv6", version: ProxyV1, src: v6src, dst: v6dst, want: "PROXY TCP6 2001:db8::1 2001:db8::2 443 80\r\n"},
		{name: "v1 mixed families", version: ProxyV1, src: v4src, dst: v6dst,
			want: "PROXY TCP6 ::ffff:127.3.0.10 2001:db8::2 40000 80\r\n", wantSrc: v4src},
		{name: "v2 IPv4", version: ProxyV2, src: v4src, dst: v4dst,
			// v2 PROXY, TCP over IPv4, 12 bytes: src, dst, sport 40000 (9c40), dport 8080 (1f90)
			want: sig + "21" + "11" + "000c" + "7f03000a" + "7ff10005" + "9c40" + "1f90"},
		{name: "v2 IPv6", version: ProxyV2, src: v6src, dst: v6dst,
			want: sig + "21" + "21" + "0024" + "20010db8000000000000000000000001" + "20010db8000000000000000000000002" + "01bb" + "0050"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := appendProxyHeader(nil, tt.version, tt.src, tt.dst)
			if err != nil {
				t.Fatal(err)
			}
			want := []byte(tt.want)
			if tt.version == ProxyV2 {
				if want, err = hex.DecodeString(tt.want); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(h, want) {
				t.Fatalf("header\n got %q\nwant %q", h, want)
			}
			// The payload after the header must stay unread.
			r := bufio.NewReader(io.MultiReader(bytes.NewReader(h), strings.NewReader("GET / HTTP/1.0\r\n")))
			v, src, dst, err := ReadProxyHeader(r)
			if err != nil {
				t.Fatal(err)
			}
			wantSrc, wantDst := tt.src, tt.dst
			if tt.wantSrc.IsValid() {
				wantSrc = tt.wantSrc
			}
			if v != tt.version || src != wantSrc || dst != wantDst {
				t.Errorf("read back v%d %s -> %s, want v%d %s -> %s", v, src, dst, tt.version, wantSrc, wantDst)
			}
			if rest, _ := io.ReadAll(r); string(rest) != "GET / HTTP/1.0\r\n" {
				t.Errorf("payload after the header = %q", rest)
			}
		})
	}
	if _, err := appendProxyHeader(nil, 3, v4src, v4dst); err == nil {
		t.Error("version 3 encoded without an error")
	}
}

// TestReadProxyHeaderRejects: a reader must not take garbage for a header.
func TestReadProxyHeaderRejects(t *testing.T) {
	for _, in := range []string{
		"",
		"GET / HTTP/1.1\r\n",
		"PROXY UNKNOWN\r\n",
		"PROXY TCP4 127.0.0.1 127.0.0.2 1\r\n",
		"PROXY TCP4 127.0.0.1 127.0.0.2 1 99999\r\n",
		"PROXY TCP4 " + strings.Repeat("1", 200),
		"\r\n\r\n\x00\r\nQUIT\n\x20\x11\x00\x0c" + strings.Repeat("\x00", 12), // v2 LOCAL command
		"\r\n\r\n\x00\r\nQUIT\n\x21\x31\x00\x00",                              // AF_UNIX
	} {
		if v, src, dst, err := ReadProxyHeader(bufio.NewReader(strings.NewReader(in))); err == nil {
			t.Errorf("%q read as v%d %s -> %s", in, v, src, dst)
		}
	}
}

// TestListenerProxyProtocol: a listener with ProxyProtocol starts each
// target connection with the header that names the real client (bound
// here to its own loopback address) and the VIP:port it connected to, then
// the client's bytes; switching the version applies to new connections,
// and ProxyOff sends the client's bytes alone.
func TestListenerProxyProtocol(t *testing.T) {
	p := newPlane(t, Config{})
	target := startProxyEcho(t, "127.0.23.1")
	vip, err := p.AllocVIP("lb-pp")
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t, vip)
	client := netip.MustParseAddr("127.0.23.9")
	for _, v := range []int{ProxyV1, ProxyV2, ProxyOff} {
		p.Sync(LoadBalancer{ID: "lb-pp", VIP: vip, Listeners: []Listener{{ID: "l", Protocol: TCP, Port: port,
			ProxyProtocol: v, Targets: []Target{{ID: "n1", Addr: target, Weight: 1}}}}})
		got, from, err := dialFrom(client, netip.AddrPortFrom(vip, uint16(port)), "hello")
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		want := fmt.Sprintf("v%d %s -> %s: hello", v, from, netip.AddrPortFrom(vip, uint16(port)))
		if v == ProxyOff {
			want = "no header: hello"
		}
		if got != want {
			t.Errorf("target saw %q, want %q", got, want)
		}
	}
}

// startProxyEcho runs a target that reads a PROXY header, if one comes,
// and answers what it read and the first line of the payload.
func startProxyEcho(t *testing.T, ip string) netip.AddrPort {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				r := bufio.NewReader(c)
				head := "no header"
				if b, err := r.Peek(1); err == nil && (b[0] == 'P' || b[0] == '\r') {
					v, src, dst, err := ReadProxyHeader(r)
					head = fmt.Sprintf("v%d %s -> %s", v, src, dst)
					if err != nil {
						head = "bad header: " + err.Error()
					}
				}
				line, _ := r.ReadString('\n')
				fmt.Fprintf(c, "%s: %s", head, strings.TrimSpace(line))
			}()
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String())
}

// dialFrom connects from the address src to dst, sends msg and a newline,
// and returns the answer and the client's own address.
func dialFrom(src netip.Addr, dst netip.AddrPort, msg string) (string, netip.AddrPort, error) {
	d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(src, 0))}
	c, err := d.Dial("tcp", dst.String())
	if err != nil {
		return "", netip.AddrPort{}, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(c, "%s\n", msg); err != nil {
		return "", netip.AddrPort{}, err
	}
	b, err := io.ReadAll(c)
	return string(b), netip.MustParseAddrPort(c.LocalAddr().String()), err
}
