package dataplane

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/testca"
)

// httpsGet GETs url trusting roots, presenting client (if any).
func httpsGet(url string, roots *x509.CertPool, client *tls.Certificate) (string, error) {
	return testca.Get(url, roots, "", client)
}

// mustLeaf returns a function that turns a testca answer into a
// tls.Certificate, failing the test on an error.
func mustLeaf(t *testing.T) func(testca.Leaf, error) tls.Certificate {
	return func(l testca.Leaf, err error) tls.Certificate {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		c, err := l.TLS()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
}

// TestTLSTermination: a TLS listener completes the handshake with the
// certificate it was given and forwards plain bytes (here plain HTTP, which
// the stand-in node answers only if nothing else arrives) to its target; a
// client that does not trust the chain, or that lacks a client certificate
// on a mutual-TLS listener, never reaches the target.
func TestTLSTermination(t *testing.T) {
	p := newPlane(t, Config{})
	var hits atomic.Int64
	n := startNode(t, "127.0.19.1", "n1")
	n.srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "n1 "+r.Proto)
	})
	vip, err := p.AllocVIP("lb-tls")
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t, vip)
	ca, err := testca.New("test CA")
	if err != nil {
		t.Fatal(err)
	}
	other, err := testca.New("other CA")
	if err != nil {
		t.Fatal(err)
	}
	leaf := mustLeaf(t)
	server := leaf(ca.Server(vip.String()))
	client := leaf(ca.Client("client-1"))
	strangerClient := leaf(other.Client("stranger"))

	sync := func(tl *TLS) {
		p.Sync(LoadBalancer{ID: "lb-tls", VIP: vip, Listeners: []Listener{{
			ID: "l1", Protocol: TCP, Port: port, TLS: tl,
			Targets: []Target{{ID: "n1", Addr: n.addr, Weight: 10}},
		}}})
	}
	url := fmt.Sprintf("https://%s/", netip.AddrPortFrom(vip, uint16(port)))
	tests := []struct {
		name    string
		tls     *TLS
		roots   *x509.CertPool
		client  *tls.Certificate
		wantErr string // "" : the GET reaches n1
	}{
		{"one-way, trusted chain", &TLS{Certificate: server}, ca.Pool(), nil, ""},
		{"one-way, untrusted chain", &TLS{Certificate: server}, other.Pool(), nil, "certificate signed by unknown authority"},
		{"mutual, client certificate", &TLS{Certificate: server, ClientCAs: ca.Pool()}, ca.Pool(), &client, ""},
		{"mutual, no client certificate", &TLS{Certificate: server, ClientCAs: ca.Pool()}, ca.Pool(), nil, "certificate"},
		{"mutual, client certificate of another CA", &TLS{Certificate: server, ClientCAs: ca.Pool()}, ca.Pool(), &strangerClient, "certificate"},
		{"optional mutual, no client certificate", &TLS{Certificate: server, ClientCAs: ca.Pool(), ClientOptional: true}, ca.Pool(), nil, ""},
		{"optional mutual, client certificate", &TLS{Certificate: server, ClientCAs: ca.Pool(), ClientOptional: true}, ca.Pool(), &client, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sync(tt.tls)
			before := hits.Load()
			st0, _ := p.Status("lb-tls")
			body, err := httpsGet(url, tt.roots, tt.client)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("GET %s: %v", url, err)
				}
				if body != "n1 HTTP/1.1" {
					t.Fatalf("body %q, want the node's plain HTTP/1.1 answer", body)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("GET %s: err %v, want one containing %q", url, err, tt.wantErr)
			}
			if hits.Load() != before {
				t.Fatal("a client that failed the handshake reached the target")
			}
			// The server side may see the failure a moment after the client.
			waitFor(t, "the handshake failure counted", time.Second, func() bool {
				st, _ := p.Status("lb-tls")
				return st.Listeners[0].TLSHandshakeFailures > st0.Listeners[0].TLSHandshakeFailures
			})
		})
	}

	// A new certificate applies to new connections without a restart of
	// the listener; dropping TLS makes it plain TCP again.
	renewed := leaf(other.Server(vip.String()))
	sync(&TLS{Certificate: renewed})
	if _, err := httpsGet(url, other.Pool(), nil); err != nil {
		t.Fatalf("after the certificate change: %v", err)
	}
	if _, err := httpsGet(url, ca.Pool(), nil); err == nil {
		t.Fatal("the old chain still verifies after the certificate change")
	}
	sync(nil)
	if body, err := get(fmt.Sprintf("http://%s/", netip.AddrPortFrom(vip, uint16(port)))); err != nil || body != "n1 HTTP/1.1" {
		t.Fatalf("plain TCP after TLS was removed: %q, %v", body, err)
	}
	if st, _ := p.Status("lb-tls"); st.Listeners[0].TLS {
		t.Fatal("status still says TLS")
	}
}
