package cloudsim_test

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/oci"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// TestConsoleServes: the page, its assets and the state each answer with
// their type and the page's content security policy; the state holds both
// clouds; a request through an API tunnel gets no console. The page in a
// browser is test/e2e's TestConsole.
func TestConsoleServes(t *testing.T) {
	sim, url := start(t, cloudsim.Options{VIPRange: simVIPs, DisableDataPlane: true, OCI: cloudsim.OCIOptions{
		Network: oci.NetworkSeed{NetworkSecurityGroups: []oci.NSG{{DisplayName: "console-nsg"}}}}})
	if _, err := sim.AddInstances(cloudsim.Instance{ID: "ins-console1", PrivateIP: "10.0.0.7"}); err != nil {
		t.Fatal(err)
	}
	w := 5
	if _, err := sim.Tencent().CLB().CreateLoadBalancer(tencent.CLBSpec{Name: "console-clb", Listeners: []tencent.CLBListenerSpec{{Protocol: "TCP", Port: 80,
		Targets: []tencent.CLBTarget{{InstanceID: "ins-console1", Port: 30080, Weight: &w}}}}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, ctype, contains string }{
		{cloudsim.ConsolePath, "text/html", "admin listener"},
		{cloudsim.ConsolePath + "/assets/console.js", "javascript", "/admin/console/state"},
		{cloudsim.ConsolePath + "/assets/console.css", "text/css", "table"},
		{cloudsim.ConsolePath + "/assets/favicon.svg", "image/svg+xml", "<svg"},
	} {
		resp, err := http.Get(url + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Type"), tc.ctype) ||
			!strings.Contains(string(body), tc.contains) || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'self'") {
			t.Errorf("GET %s: %d %q CSP %q, body has %q: %v", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"),
				resp.Header.Get("Content-Security-Policy"), tc.contains, strings.Contains(string(body), tc.contains))
		}
	}

	resp, err := http.Get(url + cloudsim.ConsolePath + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st cloudsim.ConsoleState
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if len(st.Tencent.LoadBalancers) != 1 || len(st.Tencent.LoadBalancers[0].Listeners) != 1 ||
		len(st.Tencent.LoadBalancers[0].Listeners[0].Targets) != 1 || st.Tencent.LoadBalancers[0].Listeners[0].Targets[0].IP != "10.0.0.7" {
		t.Errorf("state's Tencent load balancers = %+v, want console-clb with target 10.0.0.7", st.Tencent.LoadBalancers)
	}
	if _, ok := st.Tencent.DataPlane[st.Tencent.LoadBalancers[0].ID]; !ok {
		t.Errorf("state has no data-plane view of %s", st.Tencent.LoadBalancers[0].ID)
	}
	if len(st.Instances) != 1 || len(st.Tencent.RouteTables) != 0 || len(st.OCI.Network.SecurityLists) == 0 {
		t.Errorf("state: %d instances, %d route tables, %d OCI security lists; want 1, 0, the VCN's default", len(st.Instances),
			len(st.Tencent.RouteTables), len(st.OCI.Network.SecurityLists))
	}
	if n := st.OCI.Network.NetworkSecurityGroups; len(n) != 1 || n[0].DisplayName != "console-nsg" {
		t.Errorf("state's NSGs = %+v, want console-nsg", n)
	}

	// Through a tunnel to an API hostname (r.TLS set): not the admin
	// listener, no console.
	req := httptest.NewRequest(http.MethodGet, cloudsim.ConsolePath, nil)
	req.TLS = &tls.ConnectionState{}
	rec := httptest.NewRecorder()
	sim.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "admin listener only") {
		t.Errorf("console through a tunnel: %d %q, want 404 naming the admin listener", rec.Code, rec.Body.String())
	}
}
