package testcluster

import (
	"io"
	"net"
	"testing"
)

// The proxy forwards until cut, refuses while cut, and forwards again
// once healed, on the same address.
func TestProxyCutAndHeal(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); _ = c.Close() }() // echo
		}
	}()
	p, err := NewProxy(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	echo := func() error {
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			return err
		}
		defer c.Close()
		if _, err := c.Write([]byte("ping")); err != nil {
			return err
		}
		buf := make([]byte, 4)
		_, err = io.ReadFull(c, buf)
		return err
	}
	if err := echo(); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	open, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	if _, err := open.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(open, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	p.Cut()
	if err := echo(); err == nil {
		t.Fatal("a new connection got through a cut proxy")
	}
	if _, err := io.ReadFull(open, make([]byte, 1)); err == nil {
		t.Fatal("an open connection survived the cut")
	}
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	if err := echo(); err != nil {
		t.Fatalf("after healing: %v", err)
	}
}
