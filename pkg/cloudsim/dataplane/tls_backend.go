package dataplane

import (
	"crypto/tls"
	"net"
)

// toTarget is the connection to splice to a target: up itself, or, when
// the listener re-encrypts (Listener.BackendTLS, OCI's backend set
// sslConfiguration), a TLS client on it. The handshake runs on the first
// byte either way; a failed one ends the flow, and the client sees its
// connection closed, as through a load balancer whose backend refused the
// handshake.
func (l *listener) toTarget(up net.Conn) net.Conn {
	l.mu.Lock()
	conf := l.spec.BackendTLS
	l.mu.Unlock()
	if conf == nil {
		return up
	}
	return tls.Client(up, conf)
}
