package oci

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/testca"
)

const certHost = "oci-tls.example.test"

func TestNewLBCertificateValidation(t *testing.T) {
	ca, err := testca.New("validation CA")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Server(certHost)
	if err != nil {
		t.Fatal(err)
	}
	other, err := ca.Server(certHost)
	if err != nil {
		t.Fatal(err)
	}
	s := common.String
	for _, tc := range []struct {
		name string
		in   loadbalancer.CertificateDetails
		want string // "" = valid; else a part of the message
	}{
		{"pair and CA", loadbalancer.CertificateDetails{CertificateName: s("a-b_1"), PublicCertificate: s(string(leaf.CertPEM)), PrivateKey: s(string(leaf.KeyPEM)), CaCertificate: s(string(ca.PEM))}, ""},
		{"CA only", loadbalancer.CertificateDetails{CertificateName: s("ca"), CaCertificate: s(string(ca.PEM))}, ""},
		{"no name", loadbalancer.CertificateDetails{CaCertificate: s(string(ca.PEM))}, "certificateName"},
		{"dot in the name", loadbalancer.CertificateDetails{CertificateName: s("a.b"), CaCertificate: s(string(ca.PEM))}, "alphanumeric"},
		{"nothing", loadbalancer.CertificateDetails{CertificateName: s("x")}, "give a publicCertificate"},
		{"no key", loadbalancer.CertificateDetails{CertificateName: s("x"), PublicCertificate: s(string(leaf.CertPEM))}, "go together"},
		{"key of another", loadbalancer.CertificateDetails{CertificateName: s("x"), PublicCertificate: s(string(leaf.CertPEM)), PrivateKey: s(string(other.KeyPEM))}, "does not match"},
		{"not PEM", loadbalancer.CertificateDetails{CertificateName: s("x"), CaCertificate: s("hello")}, "not PEM"},
		{"passphrase", loadbalancer.CertificateDetails{CertificateName: s("x"), CaCertificate: s(string(ca.PEM)), Passphrase: s("p")}, "passphrase"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newLBCertificate(tc.in)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// tlsBackend is a node answering HTTPS with a certificate of ca.
func tlsBackend(t *testing.T, ip, name string, ca *testca.CA) netip.AddrPort {
	t.Helper()
	leaf, err := ca.Server(ip)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := leaf.TLS()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("cannot listen on %s (loopback aliases unavailable): %v", ip, err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, name) }))
	srv.Listener = ln
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return netip.MustParseAddrPort(ln.Addr().String())
}

func certDetails(name string, leaf testca.Leaf, ca *testca.CA) loadbalancer.CertificateDetails {
	return loadbalancer.CertificateDetails{CertificateName: common.String(name), PublicCertificate: common.String(string(leaf.CertPEM)),
		PrivateKey: common.String(string(leaf.KeyPEM)), CaCertificate: common.String(string(ca.PEM))}
}

// TestLBCertificatesAndTLSTraffic: a listener with an sslConfiguration
// terminates TLS with its certificate (the chain verifies against the CA);
// a certificate in use cannot be deleted, an unknown one cannot be named;
// a rotation (new certificate, listener moved, old one deleted) serves the
// new one; a backend set with an sslConfiguration re-encrypts and verifies
// the backend against the CA.
func TestLBCertificatesAndTLSTraffic(t *testing.T) {
	e := trafficEnv(t)
	ca, err := testca.New("cloudsim test CA")
	if err != nil {
		t.Fatal(err)
	}
	plain := backend(t, "127.0.3.11", "node-plain")
	leafA, _ := ca.Server(certHost)
	leafB, _ := ca.Server(certHost)
	d := lbDetails("tls")
	tcpCheck := &loadbalancer.HealthCheckerDetails{Protocol: common.String("TCP")}
	d.BackendSets["TCP-443"] = loadbalancer.BackendSetDetails{Policy: common.String("ROUND_ROBIN"), HealthChecker: tcpCheck,
		Backends: []loadbalancer.BackendDetails{{IpAddress: common.String(plain.Addr().String()), Port: common.Int(int(plain.Port()))}}}
	d.Listeners = map[string]loadbalancer.ListenerDetails{"TCP-443": {DefaultBackendSetName: common.String("TCP-443"), Port: common.Int(443),
		Protocol: common.String("TCP"), SslConfiguration: &loadbalancer.SslConfigurationDetails{CertificateName: common.String("cert-a")}}}
	d.Certificates = map[string]loadbalancer.CertificateDetails{"cert-a": certDetails("cert-a", leafA, ca)}
	c := e.lb()
	created, err := c.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: d})
	if err != nil {
		t.Fatal(err)
	}
	wr := waitLBWorkRequest(t, c, *created.OpcWorkRequestId)
	id := wr.LoadBalancerId
	got, err := c.GetLoadBalancer(ctx(t), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: id})
	if err != nil {
		t.Fatal(err)
	}
	ssl := got.Listeners["TCP-443"].SslConfiguration
	if ssl == nil || *ssl.CipherSuiteName != defaultCipherSuite || len(ssl.Protocols) != 1 || ssl.Protocols[0] != "TLSv1.2" {
		t.Fatalf("listener sslConfiguration with the API's defaults: %+v", ssl)
	}
	if _, ok := got.Certificates["cert-a"]; !ok || len(got.Certificates) != 1 {
		t.Fatalf("certificates: %+v", got.Certificates)
	}
	url := fmt.Sprintf("https://%s:443/", *got.IpAddresses[0].IpAddress)
	serial := func() (string, error) {
		conn, err := tls.Dial("tcp", url[len("https://"):len(url)-1], &tls.Config{RootCAs: ca.Pool(), ServerName: certHost, MinVersion: tls.VersionTLS12})
		if err != nil {
			return "", err
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.String(), nil
	}
	eventually(t, 5*time.Second, func() error {
		body, err := testca.Get(url, ca.Pool(), certHost, nil)
		if err == nil && body != "node-plain" {
			return errorf("answer %q", body)
		}
		return err
	})
	if _, err := get(fmt.Sprintf("http://%s:443/", *got.IpAddresses[0].IpAddress)); err == nil {
		t.Error("plain HTTP got an answer from a TLS listener")
	}

	// The certificate in use cannot go; an unknown one cannot be named.
	_, err = c.DeleteCertificate(ctx(t), loadbalancer.DeleteCertificateRequest{LoadBalancerId: id, CertificateName: common.String("cert-a")})
	wantErr(t, err, http.StatusBadRequest, CodeInvalidParameter)
	listener := func(cert string) loadbalancer.UpdateListenerRequest {
		return loadbalancer.UpdateListenerRequest{LoadBalancerId: id, ListenerName: common.String("TCP-443"), UpdateListenerDetails: loadbalancer.UpdateListenerDetails{
			DefaultBackendSetName: common.String("TCP-443"), Port: common.Int(443), Protocol: common.String("TCP"),
			SslConfiguration: &loadbalancer.SslConfigurationDetails{CertificateName: common.String(cert)}}}
	}
	_, err = c.UpdateListener(ctx(t), listener("cert-none"))
	wantErr(t, err, http.StatusNotFound, CodeNotAuthorizedOrNotFound)
	_, err = c.CreateCertificate(ctx(t), loadbalancer.CreateCertificateRequest{LoadBalancerId: id,
		CreateCertificateDetails: loadbalancer.CreateCertificateDetails(certDetails("cert-a", leafB, ca))})
	wantErr(t, err, http.StatusConflict, CodeAlreadyExists)

	// Rotation: create B, move the listener, delete A.
	for _, step := range []func() (*string, error){
		func() (*string, error) {
			r, err := c.CreateCertificate(ctx(t), loadbalancer.CreateCertificateRequest{LoadBalancerId: id,
				CreateCertificateDetails: loadbalancer.CreateCertificateDetails(certDetails("cert-b", leafB, ca))})
			return r.OpcWorkRequestId, err
		},
		func() (*string, error) {
			r, err := c.UpdateListener(ctx(t), listener("cert-b"))
			return r.OpcWorkRequestId, err
		},
		func() (*string, error) {
			r, err := c.DeleteCertificate(ctx(t), loadbalancer.DeleteCertificateRequest{LoadBalancerId: id, CertificateName: common.String("cert-a")})
			return r.OpcWorkRequestId, err
		},
	} {
		wrID, err := step()
		if err != nil {
			t.Fatal(err)
		}
		if wr := waitLBWorkRequest(t, c, *wrID); wr.LifecycleState != loadbalancer.WorkRequestLifecycleStateSucceeded {
			t.Fatalf("work request %s: %s %v", *wrID, wr.LifecycleState, wr.ErrorDetails)
		}
	}
	pairB, _ := leafB.TLS()
	wantSerial := pairB.Leaf.SerialNumber.String()
	eventually(t, 5*time.Second, func() error {
		s, err := serial()
		if err == nil && s != wantSerial {
			return errorf("serving serial %s, want certificate B's %s", s, wantSerial)
		}
		return err
	})
	list, err := c.ListCertificates(ctx(t), loadbalancer.ListCertificatesRequest{LoadBalancerId: id})
	if err != nil || len(list.Items) != 1 || *list.Items[0].CertificateName != "cert-b" {
		t.Fatalf("certificates after the rotation: %+v %v", list.Items, err)
	}

	t.Run("backend set re-encrypts and verifies", func(t *testing.T) {
		other, err := testca.New("a CA the load balancer does not trust")
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name, ip string
			signer   *testca.CA
			ok       bool
		}{
			{"trusted backend", "127.0.3.12", ca, true},
			{"untrusted backend", "127.0.3.13", other, false},
		} {
			be := tlsBackend(t, tc.ip, "node-"+tc.name, tc.signer)
			r, err := c.UpdateBackendSet(ctx(t), loadbalancer.UpdateBackendSetRequest{LoadBalancerId: id, BackendSetName: common.String("TCP-443"),
				UpdateBackendSetDetails: loadbalancer.UpdateBackendSetDetails{Policy: common.String("ROUND_ROBIN"), HealthChecker: tcpCheck,
					Backends:         []loadbalancer.BackendDetails{{IpAddress: common.String(be.Addr().String()), Port: common.Int(int(be.Port()))}},
					SslConfiguration: &loadbalancer.SslConfigurationDetails{CertificateName: common.String("cert-b"), VerifyPeerCertificate: common.Bool(true)}}})
			if err != nil {
				t.Fatal(err)
			}
			waitLBWorkRequest(t, c, *r.OpcWorkRequestId)
			if tc.ok {
				eventually(t, 5*time.Second, func() error {
					body, err := testca.Get(url, ca.Pool(), certHost, nil)
					if err == nil && body != "node-"+tc.name {
						return errorf("answer %q", body)
					}
					return err
				})
				continue
			}
			time.Sleep(300 * time.Millisecond) // the data plane has the new backend set
			if body, err := testca.Get(url, ca.Pool(), certHost, nil); err == nil {
				t.Errorf("%s: answered %q through a backend whose certificate the CA did not sign", tc.name, body)
			}
		}
		// A certificate without CA certificates cannot verify backends.
		r, err := c.CreateCertificate(ctx(t), loadbalancer.CreateCertificateRequest{LoadBalancerId: id, CreateCertificateDetails: loadbalancer.CreateCertificateDetails{
			CertificateName: common.String("no-ca"), PublicCertificate: common.String(string(leafA.CertPEM)), PrivateKey: common.String(string(leafA.KeyPEM))}})
		if err != nil {
			t.Fatal(err)
		}
		waitLBWorkRequest(t, c, *r.OpcWorkRequestId)
		_, err = c.UpdateBackendSet(ctx(t), loadbalancer.UpdateBackendSetRequest{LoadBalancerId: id, BackendSetName: common.String("TCP-443"),
			UpdateBackendSetDetails: loadbalancer.UpdateBackendSetDetails{Policy: common.String("ROUND_ROBIN"), HealthChecker: tcpCheck,
				Backends:         []loadbalancer.BackendDetails{{IpAddress: common.String("127.0.3.12"), Port: common.Int(443)}},
				SslConfiguration: &loadbalancer.SslConfigurationDetails{CertificateName: common.String("no-ca"), VerifyPeerCertificate: common.Bool(true)}}})
		wantErr(t, err, http.StatusBadRequest, CodeInvalidParameter)
	})
}

func TestLBSSLConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   loadbalancer.SslConfigurationDetails
		want string
	}{
		{"defaults", loadbalancer.SslConfigurationDetails{CertificateName: common.String("c")}, ""},
		{"TLS 1.3 and a predefined suite", loadbalancer.SslConfigurationDetails{CertificateName: common.String("c"), Protocols: []string{"TLSv1.3"},
			CipherSuiteName: common.String("oci-tls-13-recommended-ssl-cipher-suite-v1")}, ""},
		{"no certificate", loadbalancer.SslConfigurationDetails{}, "certificateName"},
		{"unknown protocol", loadbalancer.SslConfigurationDetails{CertificateName: common.String("c"), Protocols: []string{"SSLv3"}}, "SSLv3"},
		{"reserved suite", loadbalancer.SslConfigurationDetails{CertificateName: common.String("c"), CipherSuiteName: common.String("oci-customized-ssl-cipher-suite")}, "no cipher suite"},
		{"certificates service", loadbalancer.SslConfigurationDetails{CertificateIds: []string{"ocid1.certificate.oc1..x"}}, "Certificates service"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := lbSSLConfig("listeners[x]", &tc.in)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}
