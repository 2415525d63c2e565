package dataplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"time"
)

// TLS makes a TCP listener terminate TLS: the load balancer completes the
// handshake with the client using Certificate and forwards the decrypted
// bytes to the targets as plain TCP, as Tencent CLB's TCP_SSL listeners and
// OCI's TLS listeners do. It holds a certificate, not a cloud's type, so
// every dialect can use it.
type TLS struct {
	// Certificate is the server certificate (with its chain) and key.
	Certificate tls.Certificate
	// ClientCAs, if not nil, makes the listener require and verify a client
	// certificate signed by one of them (mutual TLS); a client without one
	// fails the handshake and reaches no target.
	ClientCAs *x509.CertPool
	// ClientOptional, with ClientCAs, verifies a client certificate only
	// if the client presents one (Tencent's SSLVerifyClient OPTIONAL).
	ClientOptional bool
	// MinVersion and MaxVersion bound the TLS versions the listener
	// accepts (OCI's sslConfiguration.protocols); 0 is TLS 1.2 and Go's
	// highest.
	MinVersion, MaxVersion uint16
}

// DefaultTLSHandshakeTimeout bounds a client's TLS handshake, so that a
// client that connects and says nothing holds no goroutine for long
// (cloudsim's choice).
const DefaultTLSHandshakeTimeout = 10 * time.Second

// config is the server side of the handshake.
func (t *TLS) config() *tls.Config {
	c := &tls.Config{
		Certificates: []tls.Certificate{t.Certificate},
		MinVersion:   tls.VersionTLS12,
		MaxVersion:   t.MaxVersion,
	}
	if t.MinVersion != 0 {
		c.MinVersion = t.MinVersion
	}
	if t.ClientCAs != nil {
		c.ClientAuth = tls.RequireAndVerifyClientCert
		if t.ClientOptional {
			c.ClientAuth = tls.VerifyClientCertIfGiven
		}
		c.ClientCAs = t.ClientCAs
	}
	return c
}

// tlsConfig is the listener's current TLS server config, nil for plain
// TCP. Each connection reads it when it arrives, so a certificate change
// applies to new connections and leaves open ones alone.
func (l *listener) tlsConfig() *tls.Config {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tlsConf
}

// terminateTLS runs the server handshake on a client connection when the
// listener terminates TLS, and returns the connection to splice: the TLS
// connection, or raw itself for plain TCP. ok is false when the handshake
// failed (the client gets what crypto/tls sends it: an alert).
func (l *listener) terminateTLS(raw net.Conn) (conn net.Conn, ok bool) {
	conf := l.tlsConfig()
	if conf == nil {
		return raw, true
	}
	tc := tls.Server(raw, conf)
	ctx, cancel := context.WithTimeout(l.ctx, DefaultTLSHandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		l.noteTLSError(raw, err)
		return nil, false
	}
	return tc, true
}

func (l *listener) noteTLSError(c net.Conn, err error) {
	l.mu.Lock()
	l.tlsFailed++
	l.mu.Unlock()
	l.plane.logf("dataplane: %s listener %s: TLS handshake with %s failed: %v", l.lbID, l.id, c.RemoteAddr(), err)
}
