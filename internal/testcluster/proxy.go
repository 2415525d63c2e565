package testcluster

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"

	"k8s.io/client-go/tools/clientcmd"
)

// Proxy forwards TCP connections to a target (the apiserver) until it is
// cut: Cut closes every open connection and refuses new ones, as a
// network partition between one process and the apiserver would look to
// that process; Heal accepts again on the same address.
type Proxy struct {
	target string

	mu    sync.Mutex
	addr  string
	ln    net.Listener
	conns map[net.Conn]bool
}

// NewProxy listens on a free loopback port and forwards to target
// (host:port).
func NewProxy(target string) (*Proxy, error) {
	p := &Proxy{target: target, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy to %s: %w", target, err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.addr }

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

func (p *Proxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil { // cut meanwhile
		p.mu.Unlock()
		_ = c.Close()
		_ = up.Close()
		return
	}
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) { _, _ = io.Copy(dst, src); done <- struct{}{} }
	go pipe(up, c)
	go pipe(c, up)
	<-done
	_ = c.Close()
	_ = up.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// Cut refuses new connections and closes the open ones.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

// Heal accepts connections again on the same address.
func (p *Proxy) Heal() error {
	p.mu.Lock()
	cut := p.ln == nil
	p.mu.Unlock()
	if !cut {
		return nil
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return fmt.Errorf("proxy to %s: listen again on %s: %w", p.target, p.addr, err)
	}
	p.serve(ln)
	return nil
}

// Close cuts the proxy for good.
func (p *Proxy) Close() { p.Cut() }

// KubeconfigVia writes a copy of the kubeconfig at path whose server is
// reached through addr (host:port), keeping the TLS server name of the
// original, and returns the copy's path.
func KubeconfigVia(path, addr string) (string, error) {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return "", err
	}
	if len(cfg.Clusters) == 0 {
		return "", errors.New("kubeconfig " + path + " has no cluster")
	}
	for _, cl := range cfg.Clusters {
		u, err := url.Parse(cl.Server)
		if err != nil {
			return "", fmt.Errorf("kubeconfig %s: server %q: %w", path, cl.Server, err)
		}
		cl.TLSServerName = u.Hostname()
		u.Host = addr
		cl.Server = u.String()
	}
	out := strings.TrimSuffix(path, ".kubeconfig") + "-via-" + strings.ReplaceAll(addr, ":", "-") + ".kubeconfig"
	if err := clientcmd.WriteToFile(*cfg, out); err != nil {
		return "", err
	}
	return out, os.Chmod(out, 0o600)
}
