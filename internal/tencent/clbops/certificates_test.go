package clbops

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
	"github.com/ccmkit/ccm/pkg/cloudsim/testca"
)

// uploadCerts stores a server certificate and a CA in cloudsim and
// returns their ids.
func (e *clbEnv) uploadCerts(names ...string) (ids []string) {
	e.t.Helper()
	ca, err := testca.New("clbops test CA")
	if err != nil {
		e.t.Fatal(err)
	}
	for _, n := range names {
		leaf, err := ca.Server(n)
		if err != nil {
			e.t.Fatal(err)
		}
		c, err := e.sim.Tencent().CLB().UploadCertificate(tencent.CertificateSpec{Name: n, Certificate: string(leaf.CertPEM), Key: string(leaf.KeyPEM)})
		if err != nil {
			e.t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	c, err := e.sim.Tencent().CLB().UploadCertificate(tencent.CertificateSpec{Type: tencent.CertTypeCA, Certificate: string(ca.PEM)})
	if err != nil {
		e.t.Fatal(err)
	}
	return append(ids, c.ID)
}

func withProtocol(listener string, p PortProtocol) specOpt {
	return func(s *Desired) {
		if s.Protocols == nil {
			s.Protocols = map[string]PortProtocol{}
		}
		s.Protocols[listener] = p
	}
}

// TestEnsureTLS: a port can be a TCP_SSL listener with a certificate; an
// unchanged resync writes nothing; a certificate change is one
// ModifyListener; a protocol change replaces the listener (deleted first:
// the port is taken); an unknown certificate fails the reconcile and
// leaves the working listener alone.
func TestEnsureTLS(t *testing.T) {
	env := newCLBEnv(t)
	o := newTestOps(env)
	ids := env.uploadCerts("a.example.test", "b.example.test")
	certA, certB, ca := ids[0], ids[1], ids[2]
	tls := func(cert, caID string) specOpt {
		return withProtocol("TCP-443", PortProtocol{Protocol: ProtocolTCPSSL, CertID: cert, CACertID: caID})
	}

	// Created as TCP_SSL from the start, with the other ports' listeners.
	mustEnsure(t, o, testSpec(tls(certA, "")))
	id := env.lbIDs()[0]
	if got, want := env.listenerNames(id), []string{"TCP-80:TCP/80", "TCP_SSL-443:TCP_SSL/443", "UDP-53:UDP/53"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("listeners = %v, want %v", got, want)
	}
	c := env.listener(id, "TCP_SSL-443").Certificate
	if c == nil || deref(c.CertId) != certA || deref(c.SSLMode) != "UNIDIRECTIONAL" {
		t.Fatalf("TCP_SSL-443 certificate = %+v", c)
	}
	if got := env.targetsOf(id, "TCP_SSL-443"); !reflect.DeepEqual(got, []string{"ins-00000001:30443", "ins-00000002:30443"}) {
		t.Errorf("TCP_SSL-443 targets = %v", got)
	}

	steps := []struct {
		name       string
		spec       *Desired
		wantWrites []string
		wantErr    string
		check      func(t *testing.T)
	}{
		{"unchanged resync", testSpec(tls(certA, "")), nil, "", nil},
		{"certificate changed", testSpec(tls(certB, "")), []string{"ModifyListener"}, "", func(t *testing.T) {
			if c := env.listener(id, "TCP_SSL-443").Certificate; deref(c.CertId) != certB {
				t.Errorf("certificate = %s, want %s", deref(c.CertId), certB)
			}
		}},
		{"mutual TLS", testSpec(tls(certB, ca)), []string{"ModifyListener"}, "", func(t *testing.T) {
			if c := env.listener(id, "TCP_SSL-443").Certificate; deref(c.SSLMode) != "MUTUAL" || deref(c.CertCaId) != ca {
				t.Errorf("certificate = %+v, want mutual with CA %s", c, ca)
			}
		}},
		{"mutual TLS, resync", testSpec(tls(certB, ca)), nil, "", nil},
		{"unknown certificate: error, listener kept", testSpec(tls("nothere1", "")), []string{"ModifyListener"}, "nothere1", func(t *testing.T) {
			if c := env.listener(id, "TCP_SSL-443").Certificate; deref(c.CertId) != certB {
				t.Errorf("a refused change altered the listener: %+v", c)
			}
		}},
		{"back to TCP: delete, then create on the port", testSpec(), []string{"DeleteListener", "CreateListener", "BatchRegisterTargets"}, "", func(t *testing.T) {
			if got, want := env.listenerNames(id), []string{"TCP-443:TCP/443", "TCP-80:TCP/80", "UDP-53:UDP/53"}; !reflect.DeepEqual(got, want) {
				t.Errorf("listeners = %v, want %v", got, want)
			}
		}},
		{"TCP to TCP_SSL", testSpec(tls(certA, "")), []string{"DeleteListener", "CreateListener", "BatchRegisterTargets"}, "", nil},
		{"TCP_SSL, resync", testSpec(tls(certA, "")), nil, "", nil},
	}
	for _, st := range steps {
		env.resetCalls()
		_, err := o.Ensure(context.Background(), st.spec)
		switch {
		case st.wantErr == "" && err != nil:
			t.Fatalf("%s: Ensure: %v", st.name, err)
		case st.wantErr != "" && (err == nil || !strings.Contains(err.Error(), st.wantErr)):
			t.Fatalf("%s: err = %v, want one naming %q", st.name, err, st.wantErr)
		}
		if got := env.writes(); !reflect.DeepEqual(got, st.wantWrites) {
			t.Errorf("%s: writes = %v, want %v", st.name, got, st.wantWrites)
		}
		if st.check != nil {
			st.check(t)
		}
	}
}
