//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/oci/ociapi"
	"github.com/ccmkit/ccm/pkg/cloudsim/testca"
)

// ociLBClient is a Load Balancing client on cloudsim as the suite's administrator,
// to read what the CCM made (certificates, sslConfiguration).
func ociLBClient(t *testing.T) loadbalancer.LoadBalancerClient {
	t.Helper()
	clients, err := ociapi.New(ociapi.Options{Tenancy: ociTenancy, User: ociAdminUser, Region: ociRegion, Fingerprint: theOCIEnv.fingerprint,
		Key: theOCIEnv.keyPEM, Endpoint: suite.simURL, Limits: ociapi.Limits{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	return clients.LB
}

// ociLBReader returns a function that reads the Service's one OCI load
// balancer through lbc.
func ociLBReader(t *testing.T, lbc loadbalancer.LoadBalancerClient, svc *corev1.Service) func() loadbalancer.LoadBalancer {
	t.Helper()
	lbID := ociLBsOf(svc.UID)[0].ID
	return func() loadbalancer.LoadBalancer {
		t.Helper()
		resp, err := lbc.GetLoadBalancer(context.Background(), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: &lbID})
		if err != nil {
			t.Fatalf("GetLoadBalancer %s: %v", lbID, err)
		}
		return resp.LoadBalancer
	}
}

// tlsSecretOf writes (creates or replaces) a kubernetes.io/tls Secret
// with a server certificate of ca for tlsServerName, and ca.crt.
func tlsSecretOf(t *testing.T, name string, ca *testca.CA) *tls.Certificate {
	t.Helper()
	leaf, err := ca.Server(tlsServerName)
	if err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: leaf.CertPEM, corev1.TLSPrivateKeyKey: leaf.KeyPEM, "ca.crt": ca.PEM}}
	c := suite.cluster.Client.CoreV1().Secrets("default")
	if _, err := c.Update(context.Background(), s, metav1.UpdateOptions{}); err != nil {
		if _, err := c.Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	pair, err := leaf.TLS()
	if err != nil {
		t.Fatal(err)
	}
	return &pair
}

// servedSerial is the serial number of the certificate addr serves,
// verified against roots for tlsServerName.
func servedSerial(addr string, roots *testca.CA) (string, error) {
	d := &net.Dialer{Timeout: 2 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{RootCAs: roots.Pool(), ServerName: tlsServerName, MinVersion: tls.VersionTLS12})
	if err != nil {
		return "", err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.String(), nil
}

// serveTLS runs an HTTPS server answering body on ip:port with a
// certificate of ca: a node whose pods speak TLS.
func serveTLS(t *testing.T, ip string, port int32, ca *testca.CA, body string) {
	t.Helper()
	leaf, err := ca.Server(ip)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := leaf.TLS()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", fmt.Sprintf("%s:%d", ip, port), &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, body) }),
		ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
}

// TestOCITLSListener (issue 14 item 1): a Service with ssl-ports and
// tls-secret gets a Load Balancer listener that ends TLS with the Secret's
// certificate: an HTTPS GET through the VIP verifies the chain against the
// test CA and reaches the node's plain HTTP server. A new certificate in
// the Secret is served after the next sync of the Service (the CCM does
// not watch Secrets; the test touches the Service), and the old
// certificate is gone from the load balancer. A missing Secret is an
// Event naming it, and the listener keeps serving. With
// tls-backendset-secret the load balancer speaks TLS to the node too,
// verifying it against the Secret's ca.crt.
func TestOCITLSListener(t *testing.T) {
	startOCIServiceController(t)
	const sel = "oci-tls"
	n1 := ociLBNode(t, sel)
	ca, err := testca.New("e2e OCI test CA")
	if err != nil {
		t.Fatal(err)
	}
	first := tlsSecretOf(t, "oci-tls-web", ca)

	spec := lbServiceSpec("oci-tls", sel, 8443)
	spec.Annotations[string(annotations.OCILBSSLPorts)] = "8443"
	spec.Annotations[string(annotations.OCILBTLSSecret)] = "oci-tls-web"
	spec.Annotations[string(annotations.OCILBListenerSSLConfig)] = `{"CipherSuiteName":"oci-default-http2-tls-12-13-ssl-cipher-suite-v1","Protocols":["TLSv1.2","TLSv1.3"]}`
	np := nodePort(spec, 8443)
	serve(t, n1.PrivateIP, np, 200, "node-1 over plain HTTP")
	svc := createService(t, spec)
	vip := waitIngress(t, svc, 90*time.Second)
	svc = getService(t, svc)
	url := fmt.Sprintf("https://%s:8443/", vip)
	waitHTTPS(t, url, ca.Pool(), "node-1 over plain HTTP", 30*time.Second)
	other, err := testca.New("a CA the client does not trust")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := httpsGet(url, other.Pool()); err == nil {
		t.Error("the chain verified against a CA that did not sign it")
	}
	if _, err := httpGet(fmt.Sprintf("http://%s:8443/", vip)); err == nil {
		t.Error("plain HTTP got an answer from a TLS listener")
	}
	lbc := ociLBClient(t)
	readLB := ociLBReader(t, lbc, svc)
	lb := readLB()
	ssl := lb.Listeners["TCP-8443"].SslConfiguration
	if ssl == nil || *ssl.CipherSuiteName != "oci-default-http2-tls-12-13-ssl-cipher-suite-v1" || len(lb.Certificates) != 1 {
		t.Fatalf("listener TCP-8443 sslConfiguration %+v, certificates %d (want 1)", ssl, len(lb.Certificates))
	}
	oldCert := *ssl.CertificateName
	if s, err := servedSerial(vip+":8443", ca); err != nil || s != first.Leaf.SerialNumber.String() {
		t.Errorf("served certificate %s (%v), want the Secret's %s", s, err, first.Leaf.SerialNumber)
	}

	t.Run("rotation", func(t *testing.T) {
		second := tlsSecretOf(t, "oci-tls-web", ca)
		// The CCM reads the Secret when it syncs the Service: touch it.
		updateService(t, svc, func(s *corev1.Service) { s.Annotations["e2e.ccmkit.io/touch"] = "rotation" })
		want := second.Leaf.SerialNumber.String()
		deadline := time.Now().Add(60 * time.Second)
		for {
			s, err := servedSerial(vip+":8443", ca)
			if err == nil && s == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("served certificate %s (%v), want the rotated %s", s, err, want)
			}
			time.Sleep(200 * time.Millisecond)
		}
		waitHTTPS(t, url, ca.Pool(), "node-1 over plain HTTP", 10*time.Second)
		// The old certificate goes once the listener moved.
		deadline = time.Now().Add(30 * time.Second)
		for {
			lb := readLB()
			_, old := lb.Certificates[oldCert]
			if !old && len(lb.Certificates) == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("certificates after the rotation: %d, the old %s still there: %v", len(lb.Certificates), oldCert, old)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})

	t.Run("missing Secret: an Event, the listener keeps serving", func(t *testing.T) {
		before := readLB().Listeners["TCP-8443"].SslConfiguration.CertificateName
		updateService(t, svc, func(s *corev1.Service) { s.Annotations[string(annotations.OCILBTLSSecret)] = "oci-tls-missing" })
		waitEvent(t, svc, "SyncLoadBalancerFailed", []string{svc.Name, "the Secret default/oci-tls-missing does not exist"}, 30*time.Second)
		if after := readLB().Listeners["TCP-8443"].SslConfiguration.CertificateName; *after != *before {
			t.Errorf("the listener moved to %s after a refused change", *after)
		}
		waitHTTPS(t, url, ca.Pool(), "node-1 over plain HTTP", 5*time.Second)
		updateService(t, svc, func(s *corev1.Service) { s.Annotations[string(annotations.OCILBTLSSecret)] = "oci-tls-web" })
	})

	t.Run("TLS to the node", func(t *testing.T) {
		// The node now speaks TLS with a certificate of the CA in the
		// backend set Secret's ca.crt; the load balancer verifies it.
		const bsPort = 8444
		spec := lbServiceSpec("oci-tls-bs", sel, bsPort)
		spec.Annotations[string(annotations.OCILBSSLPorts)] = fmt.Sprint(bsPort)
		spec.Annotations[string(annotations.OCILBTLSSecret)] = "oci-tls-web"
		spec.Annotations[string(annotations.OCILBTLSBackendSetSecret)] = "oci-tls-web"
		np := nodePort(spec, bsPort)
		serveTLS(t, n1.PrivateIP, np, ca, "node-1 over TLS")
		svc := createService(t, spec)
		vip := waitIngress(t, svc, 90*time.Second)
		waitHTTPS(t, fmt.Sprintf("https://%s:%d/", vip, bsPort), ca.Pool(), "node-1 over TLS", 30*time.Second)
		id := ociLBsOf(getService(t, svc).UID)[0].ID
		resp, err := lbc.GetLoadBalancer(context.Background(), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: &id})
		if err != nil {
			t.Fatal(err)
		}
		bs := resp.BackendSets[fmt.Sprintf("TCP-%d", bsPort)].SslConfiguration
		if bs == nil || !*bs.VerifyPeerCertificate || !strings.HasPrefix(*bs.CertificateName, "ccmkit-") {
			t.Errorf("backend set sslConfiguration %+v, want our certificate with verifyPeerCertificate", bs)
		}
	})
}
