package lbops

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/loadbalancer"

	"github.com/ccmkit/ccm/internal/lb/lbspec"
	"github.com/ccmkit/ccm/pkg/cloudsim/testca"
)

// testCertificate is a server certificate of ca, as a Secret holds it.
func testCertificate(t *testing.T, ca *testca.CA, secret string) *Certificate {
	t.Helper()
	leaf, err := ca.Server("web.example.test")
	if err != nil {
		t.Fatal(err)
	}
	return &Certificate{Secret: secret, PublicCertificate: string(leaf.CertPEM), PrivateKey: string(leaf.KeyPEM), CACertificate: string(ca.PEM)}
}

func getLB(t *testing.T, env *lbEnv) loadbalancer.LoadBalancer {
	t.Helper()
	id := env.only(KindLB).ID
	resp, err := env.api.LB.GetLoadBalancer(context.Background(), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: &id})
	if err != nil {
		t.Fatal(err)
	}
	return resp.LoadBalancer
}

// ops is the writes with the certificate writes by operation only (the
// name is in the body as certificateName, which writeName does not read).
func ops(writes []string) []string {
	out := slices.Clone(writes)
	for i, w := range out {
		if op, _, _ := strings.Cut(w, " "); strings.HasSuffix(op, "Certificate") {
			out[i] = op
		}
	}
	return out
}

// TestTLSListenerLifecycle: a TLS listener is created inline with its
// certificate; an unchanged resync writes nothing; a new Secret content is
// a new certificate, the listener moved to it, then the old one deleted;
// backend set TLS is added in place; dropping TLS deletes our certificate.
// Each change is one plan, and each is followed by a zero-write resync.
func TestTLSListenerLifecycle(t *testing.T) {
	env := newLBEnv(t)
	o := newTestOps(env)
	ca, err := testca.New("lbops test CA")
	if err != nil {
		t.Fatal(err)
	}
	d := desired(KindLB, "10.0.0.1")
	d.Listeners = append(d.Listeners, lbspec.Listener{Protocol: lbspec.TCP, Port: 443, NodePort: 30443})
	certA := testCertificate(t, ca, "default/web-tls")
	d.TLS = TLS{Ports: []int32{443}, Listener: certA, ListenerSSL: SSLConfig{Protocols: []string{"TLSv1.3", "TLSv1.2"}}}

	ensure := func(step string, want []string) {
		t.Helper()
		env.resetWrites()
		if _, err := o.Ensure(context.Background(), d); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if got := ops(env.writesOf()); !slices.Equal(got, want) {
			t.Errorf("%s: writes %v, want %v", step, got, want)
		}
		env.resetWrites()
		if _, err := o.Ensure(context.Background(), d); err != nil {
			t.Fatalf("%s, resync: %v", step, err)
		}
		if got := env.writesOf(); len(got) != 0 {
			t.Errorf("%s: an unchanged resync wrote %v", step, got)
		}
		if diffs, err := o.Drift(context.Background(), d); err != nil || len(diffs) != 0 {
			t.Errorf("%s: drift %v %v", step, diffs, err)
		}
	}

	ensure("create", []string{"CreateLoadBalancer"})
	lb := getLB(t, env)
	ssl := lb.Listeners["TCP-443"].SslConfiguration
	if ssl == nil || *ssl.CertificateName != certA.Name() || *ssl.CipherSuiteName != DefaultListenerCipherSuite ||
		!slices.Equal(slices.Sorted(slices.Values(ssl.Protocols)), []string{"TLSv1.2", "TLSv1.3"}) {
		t.Fatalf("listener TCP-443 sslConfiguration: %+v", ssl)
	}
	if lb.Listeners["TCP-80"].SslConfiguration != nil {
		t.Error("listener TCP-80, not an ssl port, ends TLS")
	}
	if _, ok := lb.Certificates[certA.Name()]; !ok || len(lb.Certificates) != 1 {
		t.Fatalf("certificates %v, want only %s", lb.Certificates, certA.Name())
	}

	certB := testCertificate(t, ca, "default/web-tls")
	d.TLS.Listener = certB
	ensure("rotation", []string{"CreateCertificate", "UpdateListener TCP-443", "DeleteCertificate"})
	lb = getLB(t, env)
	if _, old := lb.Certificates[certA.Name()]; old || *lb.Listeners["TCP-443"].SslConfiguration.CertificateName != certB.Name() {
		t.Fatalf("after the rotation: listener on %s, certificates %v", *lb.Listeners["TCP-443"].SslConfiguration.CertificateName, lb.Certificates)
	}

	d.TLS.Backend = certB // the same Secret: the same certificate, no new one
	d.TLS.BackendSSL = SSLConfig{CipherSuite: "oci-tls-12-13-wider-ssl-cipher-suite-v1"}
	ensure("backend TLS", []string{"UpdateBackendSet TCP-443"})
	bs := getLB(t, env).BackendSets["TCP-443"].SslConfiguration
	if bs == nil || *bs.CertificateName != certB.Name() || !*bs.VerifyPeerCertificate || *bs.CipherSuiteName != "oci-tls-12-13-wider-ssl-cipher-suite-v1" {
		t.Fatalf("backend set TCP-443 sslConfiguration: %+v", bs)
	}

	d.TLS = TLS{}
	ensure("TLS removed", []string{"UpdateBackendSet TCP-443", "UpdateListener TCP-443", "DeleteCertificate"})
	if lb := getLB(t, env); len(lb.Certificates) != 0 {
		t.Errorf("certificates left: %v", lb.Certificates)
	}
}

// TestCertificateNameFollowsContent: the name changes with any part of the
// bundle and fits OCI's name rules.
func TestCertificateNameFollowsContent(t *testing.T) {
	base := Certificate{Secret: "a/b", PublicCertificate: "pub", PrivateKey: "key", CACertificate: "ca"}
	seen := map[string]string{}
	for _, tc := range []struct {
		name string
		edit func(*Certificate)
	}{
		{"base", func(*Certificate) {}},
		{"public", func(c *Certificate) { c.PublicCertificate = "pub2" }},
		{"key", func(c *Certificate) { c.PrivateKey = "key2" }},
		{"ca", func(c *Certificate) { c.CACertificate = "" }},
		{"boundary", func(c *Certificate) { c.PublicCertificate, c.PrivateKey = "pubk", "ey" }},
	} {
		c := base
		tc.edit(&c)
		n := c.Name()
		if other, dup := seen[n]; dup {
			t.Errorf("%s and %s share the name %s", tc.name, other, n)
		}
		seen[n] = tc.name
		if !strings.HasPrefix(n, certificatePrefix) || strings.Trim(n, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			t.Errorf("%s: name %q", tc.name, n)
		}
	}
	c := base
	c.Secret = "other/secret"
	if c.Name() != base.Name() {
		t.Error("the name depends on the Secret's name, not only its content")
	}
}
