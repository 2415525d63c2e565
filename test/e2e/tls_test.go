//go:build e2e

package e2e

import (
	"context"
	"crypto/x509"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
	"github.com/ccmkit/ccm/pkg/cloudsim/testca"
)

// tlsServerName is the name the test certificates are issued for; clients
// verify it (and the chain) instead of the VIP, which is not known before
// the CLB exists.
const tlsServerName = "tls-e2e.example.test"

// uploadServerCert signs a server certificate with ca and uploads it to
// cloudsim's certificate store through the admin API, as a user uploads
// one to Tencent Cloud; it returns the certificate id.
func uploadServerCert(t *testing.T, ca *testca.CA, name string) string {
	t.Helper()
	leaf, err := ca.Server(tlsServerName)
	if err != nil {
		t.Fatal(err)
	}
	admin := &cloudsim.AdminClient{BaseURL: suite.simURL}
	c, err := admin.UploadCertificate(context.Background(), tencent.CertificateSpec{Name: name, Certificate: string(leaf.CertPEM), Key: string(leaf.KeyPEM)})
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}

// certSecret creates TKE's certificate Secret: Opaque, the certificate id
// under qcloud_cert_id.
func certSecret(t *testing.T, name, certID string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Type: corev1.SecretTypeOpaque,
		StringData: map[string]string{"qcloud_cert_id": certID}}
	c := suite.cluster.Client.CoreV1().Secrets("default")
	if _, err := c.Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

// httpsGet GETs url verifying the chain against roots and the name
// tlsServerName.
func httpsGet(url string, roots *x509.CertPool) (string, error) {
	return testca.Get(url, roots, tlsServerName, nil)
}

func waitHTTPS(t *testing.T, url string, roots *x509.CertPool, want string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		body, err := httpsGet(url, roots)
		if err == nil && body == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("HTTPS GET %s: %q, %v; want %q within %s", url, body, err, want, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestTencentTLSListener: a Service port made TCP_SSL with TKE's
// specify-protocol annotation, its certificate named through TKE's
// certificate Secret, gets a CLB listener that ends TLS with that
// certificate: an HTTPS GET through the VIP verifies the chain against the
// test CA and reaches the node's plain HTTP server. Pointing the annotation
// at another Secret switches the certificate in place; an unknown
// certificate id or an unsupported protocol is an Event, and the working
// listener is kept.
func TestTencentTLSListener(t *testing.T) {
	const sel = "tls"
	n1 := lbNode(t, sel)
	ca, err := testca.New("e2e test CA")
	if err != nil {
		t.Fatal(err)
	}
	certA, certB := uploadServerCert(t, ca, "tls-a"), uploadServerCert(t, ca, "tls-b")
	certSecret(t, "tls-cert-a", certA)
	certSecret(t, "tls-cert-b", certB)
	certSecret(t, "tls-cert-unknown", "nothere1")

	spec := lbServiceSpec("tls", sel, 8443)
	spec.Annotations[string(annotations.TKESpecifyProtocol)] = `{"8443":{"protocol":["TCP_SSL"],"tls":"tls-cert-a"}}`
	np := nodePort(spec, 8443)
	serve(t, n1.PrivateIP, np, 200, "node-1 over plain HTTP")
	svc := createService(t, spec)
	vip := waitIngress(t, svc, 60*time.Second)
	svc = getService(t, svc)
	lbs := clbsOf(svc.UID)
	if len(lbs) != 1 {
		t.Fatalf("CLBs for the Service: %d, want 1", len(lbs))
	}
	lbID := lbs[0].ID
	l, ok := listenerNamed(lbs[0], "TCP_SSL-8443")
	if !ok || l.Protocol != "TCP_SSL" || l.Certificate == nil || *l.Certificate.CertId != certA || *l.Certificate.SSLMode != "UNIDIRECTIONAL" {
		t.Fatalf("listener TCP_SSL-8443 with certificate %s: %+v", certA, lbs[0].Listeners)
	}
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

	t.Run("certificate changed", func(t *testing.T) {
		updateService(t, svc, func(s *corev1.Service) {
			s.Annotations[string(annotations.TKESpecifyProtocol)] = `{"8443":{"protocol":["TCP_SSL"],"tls":"tls-cert-b"}}`
		})
		lb := waitCLB(t, lbID, "certificate "+certB, 30*time.Second, func(lb tencent.CLBLoadBalancer) bool {
			l, ok := listenerNamed(lb, "TCP_SSL-8443")
			return ok && l.Certificate != nil && *l.Certificate.CertId == certB
		})
		l, _ := listenerNamed(lb, "TCP_SSL-8443")
		if l.ID != listenerID(t, lbs[0], "TCP_SSL-8443") {
			t.Errorf("the listener was replaced (%s), want it modified in place", l.ID)
		}
		waitHTTPS(t, url, ca.Pool(), "node-1 over plain HTTP", 10*time.Second)
	})

	t.Run("unknown certificate id: an Event, the listener kept", func(t *testing.T) {
		updateService(t, svc, func(s *corev1.Service) {
			s.Annotations[string(annotations.TKESpecifyProtocol)] = `{"8443":{"protocol":["TCP_SSL"],"tls":"tls-cert-unknown"}}`
		})
		waitEvent(t, svc, "SyncLoadBalancerFailed", []string{"ModifyListener", "nothere1"}, 30*time.Second)
		l, _ := listenerNamed(waitCLB(t, lbID, "listener kept", time.Second, func(tencent.CLBLoadBalancer) bool { return true }), "TCP_SSL-8443")
		if l.Certificate == nil || *l.Certificate.CertId != certB {
			t.Errorf("listener after the refused change: %+v", l)
		}
		waitHTTPS(t, url, ca.Pool(), "node-1 over plain HTTP", 5*time.Second)
	})

	t.Run("hosts (rules per domain) are refused naming the port", func(t *testing.T) {
		updateService(t, svc, func(s *corev1.Service) {
			s.Annotations[string(annotations.TKESpecifyProtocol)] = `{"8443":{"protocol":["HTTPS"],"hosts":{"a.example.test":{"tls":"tls-cert-a"}}}}`
		})
		waitEvent(t, svc, "SyncLoadBalancerFailed", []string{string(annotations.TKESpecifyProtocol), "port 8443/TCP",
			`"hosts" (rules per domain) is not supported`}, 30*time.Second)
		waitHTTPS(t, url, ca.Pool(), "node-1 over plain HTTP", 5*time.Second)
	})
}

func listenerID(t *testing.T, lb tencent.CLBLoadBalancer, name string) string {
	t.Helper()
	l, ok := listenerNamed(lb, name)
	if !ok {
		t.Fatalf("no listener %s on %s", name, lb.ID)
	}
	return l.ID
}
