//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
	"github.com/ccmkit/ccm/pkg/cloudsim/testca"
)

// waitHTTP200 waits until GET url answers 200 with want. A layer-7
// listener answers by itself (503) while its rule has no target in
// service, so only a 200 with the node's body counts.
func waitHTTP200(t *testing.T, url, want string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		code, body, err := func() (int, string, error) {
			resp, err := httpClient.Get(url)
			if err != nil {
				return 0, "", err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b), err
		}()
		if err == nil && code == http.StatusOK && body == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %d %q, %v; want 200 %q within %s", url, code, body, err, want, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestTencentHTTPListener: TKE's specify-protocol makes one port an HTTP
// listener and another an HTTPS one (certificate from TKE's Secret); each
// gets one default rule, and requests through the VIP reach the node's
// HTTP server, the HTTPS chain verified against the test CA. Changing the
// ports back to TCP replaces the listeners, and traffic still flows.
func TestTencentHTTPListener(t *testing.T) {
	const sel = "l7"
	n1 := lbNode(t, sel)
	ca, err := testca.New("e2e layer-7 CA")
	if err != nil {
		t.Fatal(err)
	}
	certSecret(t, "l7-cert", uploadServerCert(t, ca, "l7"))

	spec := lbServiceSpec("l7", sel, 8080, 8443)
	spec.Annotations[string(annotations.TKESpecifyProtocol)] = `{"8080":{"protocol":["HTTP"]},"8443":{"protocol":["HTTPS"],"tls":"l7-cert"}}`
	serve(t, n1.PrivateIP, nodePort(spec, 8080), 200, "node-1 on 8080")
	serve(t, n1.PrivateIP, nodePort(spec, 8443), 200, "node-1 on 8443")
	svc := createService(t, spec)
	vip := waitIngress(t, svc, 60*time.Second)
	svc = getService(t, svc)
	lbs := clbsOf(svc.UID)
	if len(lbs) != 1 {
		t.Fatalf("CLBs for the Service: %d, want 1", len(lbs))
	}
	lbID := lbs[0].ID
	for name, proto := range map[string]string{"HTTP-8080": "HTTP", "HTTPS-8443": "HTTPS"} {
		if l, ok := listenerNamed(lbs[0], name); !ok || l.Protocol != proto {
			t.Fatalf("no %s listener %s: %+v", proto, name, lbs[0].Listeners)
		}
	}
	httpURL, httpsURL := fmt.Sprintf("http://%s:8080/some/path", vip), fmt.Sprintf("https://%s:8443/", vip)
	waitHTTP200(t, httpURL, "node-1 on 8080", 30*time.Second)
	waitHTTPS(t, httpsURL, ca.Pool(), "node-1 on 8443", 30*time.Second)
	other, err := testca.New("a CA the client does not trust")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := httpsGet(httpsURL, other.Pool()); err == nil {
		t.Error("the chain verified against a CA that did not sign it")
	}

	t.Run("back to TCP: listeners replaced, traffic flows", func(t *testing.T) {
		before := map[string]string{"HTTP-8080": listenerID(t, lbs[0], "HTTP-8080")}
		updateService(t, svc, func(s *corev1.Service) {
			delete(s.Annotations, string(annotations.TKESpecifyProtocol))
		})
		lb := waitCLB(t, lbID, "TCP listeners on 8080 and 8443", 30*time.Second, func(lb tencent.CLBLoadBalancer) bool {
			a, okA := listenerNamed(lb, "TCP-8080")
			b, okB := listenerNamed(lb, "TCP-8443")
			_, oldA := listenerNamed(lb, "HTTP-8080")
			return okA && okB && !oldA && len(a.Targets) == 1 && len(b.Targets) == 1
		})
		if l, _ := listenerNamed(lb, "TCP-8080"); l.ID == before["HTTP-8080"] {
			t.Errorf("the listener kept its id %s across the protocol change", l.ID)
		}
		waitAnswers(t, fmt.Sprintf("http://%s:8080/", vip), 30*time.Second, "node-1 on 8080")
		waitAnswers(t, fmt.Sprintf("http://%s:8443/", vip), 30*time.Second, "node-1 on 8443")
	})
}
