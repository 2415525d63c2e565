//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/annotations"
)

// ruleSetsValue is an oci-load-balancer-rule-sets value: rule set "env"
// adds x-env: env to each request and, when size > 0, rule set "size" sets
// the header buffer size.
func ruleSetsValue(env string, size int) string {
	v := `{"env": {"items": [{"action": "ADD_HTTP_REQUEST_HEADER", "header": "x-env", "value": "` + env + `"}]}`
	if size > 0 {
		v += fmt.Sprintf(`, "size": {"items": [{"action": "HTTP_HEADER", "httpLargeHeaderSizeInKB": %d}]}`, size)
	}
	return v + "}"
}

// TestOCIRuleSets (issue 14 item 6): oci-load-balancer-rule-sets on an OCI
// Load Balancer whose listener speaks HTTP (backend-protocol HTTP: the SDK
// models say header rules apply only to HTTP listeners). Read back through
// the OCI SDK from cloudsim: the load balancer holds the annotation's rule
// sets and the listener names them; a changed rule is one UpdateRuleSet; a
// rule set taken out of the value is dropped from the listener, then
// deleted; bad JSON or an unknown action is an Event naming the annotation
// and no write; an unchanged resync writes nothing. Through the VIP, the
// node sees the request header the rule set adds, and its new value after
// the change. (Of the rules, cloudsim's data plane applies the header edits
// only; HTTP_HEADER is checked as configuration.)
func TestOCIRuleSets(t *testing.T) {
	startOCIServiceController(t)
	const (
		sel      = "oci-rulesets"
		port     = 8104
		listener = "TCP-8104"
	)
	n := ociLBNode(t, sel)
	spec := lbServiceSpec("oci-rulesets", sel, port)
	spec.Annotations[annotations.OCILBBackendProtocol.String()] = "HTTP"
	spec.Annotations[string(annotations.OCILBRuleSets)] = ruleSetsValue("prod", 16)
	serveRequestHeader(t, n.PrivateIP, nodePort(spec, port), "X-Env")
	svc := createService(t, spec)
	vip := waitIngress(t, svc, 90*time.Second)
	svc = getService(t, svc)
	url := fmt.Sprintf("http://%s:%d/", vip, port)

	readLB := ociLBReader(t, ociLBClient(t), svc)
	// waitRuleSets waits until the load balancer's rule sets (as
	// "name: rules JSON") are want and the listener names them, and
	// returns them.
	waitRuleSets := func(what string, want map[string]string) map[string]string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			lb := readLB()
			got := ruleSetsJSON(t, lb)
			names := lb.Listeners[listener].RuleSetNames
			if maps.Equal(got, want) && slices.Equal(names, slices.Sorted(maps.Keys(want))) {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: rule sets %v, listener %s names %v; want %v", what, got, listener, names, want)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	// The rules as the SDK encodes them, to compare with what is read.
	rulesJSON := func(r loadbalancer.Rule) string {
		b, err := json.Marshal([]loadbalancer.Rule{r})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	envRule := func(v string) string {
		return rulesJSON(loadbalancer.AddHttpRequestHeaderRule{Header: common.String("x-env"), Value: common.String(v)})
	}
	sizeRule := rulesJSON(loadbalancer.HttpHeaderRule{HttpLargeHeaderSizeInKB: common.Int(16)})

	lb := readLB()
	if p := lb.Listeners[listener].Protocol; p == nil || *p != "HTTP" {
		t.Errorf("listener %s protocol %v, want HTTP", listener, p)
	}
	waitRuleSets("created", map[string]string{"env": envRule("prod"), "size": sizeRule})
	// cloudsim's data plane makes an HTTP listener's header edits
	// (pkg/cloudsim/oci/rulesets_plane.go): the node sees x-env.
	waitHTTP200(t, url, "x-env: prod", 30*time.Second)

	// writesDuring runs change and returns the OCI writes cloudsim
	// answered until done holds (and a moment more, for a stray write).
	writesDuring := func(change func(), done func() bool) map[string]int {
		t.Helper()
		suite.sim.ResetCalls()
		change()
		deadline := time.Now().Add(30 * time.Second)
		for !done() {
			if time.Now().After(deadline) {
				t.Fatal("the change was not made within 30s")
			}
			time.Sleep(200 * time.Millisecond)
		}
		time.Sleep(2 * time.Second)
		return theOCIEnv.lbWrites()
	}
	wantWrites := func(what string, got map[string]int, want ...string) {
		t.Helper()
		var list []string
		for action, n := range got {
			for range n {
				list = append(list, strings.TrimPrefix(action, "oci:"))
			}
		}
		slices.Sort(list)
		slices.Sort(want)
		if !slices.Equal(list, want) {
			t.Errorf("%s: writes %v, want %v", what, list, want)
		}
	}

	t.Run("rule changed: one UpdateRuleSet", func(t *testing.T) {
		w := writesDuring(func() {
			svc = updateService(t, svc, func(s *corev1.Service) {
				s.Annotations[string(annotations.OCILBRuleSets)] = ruleSetsValue("staging", 16)
			})
		}, func() bool { return ruleSetsJSON(t, readLB())["env"] == envRule("staging") })
		waitRuleSets("changed", map[string]string{"env": envRule("staging"), "size": sizeRule})
		wantWrites("env changed", w, "UpdateRuleSet")
		waitHTTP200(t, url, "x-env: staging", 10*time.Second)
	})

	t.Run("rule set removed: dropped from the listener, then deleted", func(t *testing.T) {
		w := writesDuring(func() {
			svc = updateService(t, svc, func(s *corev1.Service) {
				s.Annotations[string(annotations.OCILBRuleSets)] = ruleSetsValue("staging", 0)
			})
		}, func() bool { _, ok := readLB().RuleSets["size"]; return !ok })
		waitRuleSets("size removed", map[string]string{"env": envRule("staging")})
		wantWrites("size removed", w, "UpdateListener", "DeleteRuleSet")
		waitAnswers(t, url, 5*time.Second, "x-env: staging")
	})

	for _, bad := range []struct{ name, value, want string }{
		{"malformed JSON", `{"env": {"items": [`, "must be a JSON object"},
		{"unknown action", `{"env": {"items": [{"action": "TELEPORT", "header": "x-env"}]}}`, `action "TELEPORT" is not one of`},
	} {
		t.Run(bad.name+": an Event, nothing changes", func(t *testing.T) {
			before := ruleSetsJSON(t, readLB())
			suite.sim.ResetCalls()
			svc = updateService(t, svc, func(s *corev1.Service) { s.Annotations[string(annotations.OCILBRuleSets)] = bad.value })
			ev := waitEvent(t, svc, "", []string{string(annotations.OCILBRuleSets), bad.want}, 30*time.Second)
			t.Logf("event: %s", ev)
			time.Sleep(2 * time.Second)
			wantWrites(bad.name, theOCIEnv.lbWrites())
			if after := ruleSetsJSON(t, readLB()); !maps.Equal(after, before) {
				t.Errorf("rule sets changed after a refused value: %v, were %v", after, before)
			}
			waitAnswers(t, url, 5*time.Second, "x-env: staging")
		})
	}

	t.Run("unchanged resync writes nothing", func(t *testing.T) {
		// Back to the value in force: the reconcile finds the load
		// balancer as wanted. Then touch the Service once more.
		for i, change := range []func(*corev1.Service){
			func(s *corev1.Service) {
				s.Annotations[string(annotations.OCILBRuleSets)] = ruleSetsValue("staging", 0)
			},
			func(s *corev1.Service) { s.Annotations["e2e.ccmkit.io/touch"] = "resync" },
		} {
			suite.sim.ResetCalls()
			svc = updateService(t, svc, change)
			deadline := time.Now().Add(30 * time.Second)
			for theOCIEnv.lbReads() == 0 && time.Now().Before(deadline) {
				time.Sleep(200 * time.Millisecond)
			}
			time.Sleep(3 * time.Second) // what a reconcile would write comes right after its reads
			if theOCIEnv.lbReads() == 0 {
				t.Errorf("resync %d: no reconcile after the Service changed (no load balancer read)", i)
			}
			wantWrites(fmt.Sprintf("resync %d", i), theOCIEnv.lbWrites())
		}
		waitRuleSets("after the resyncs", map[string]string{"env": envRule("staging")})
	})
}

// ruleSetsJSON is a load balancer's rule sets as name -> rules JSON (the
// SDK's encoding, so that the actions are included).
func ruleSetsJSON(t *testing.T, lb loadbalancer.LoadBalancer) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, rs := range lb.RuleSets {
		b, err := json.Marshal(rs.Items)
		if err != nil {
			t.Fatalf("encoding rule set %s: %v", name, err)
		}
		out[name] = string(b)
	}
	return out
}

// serveRequestHeader runs a node's NodePort that answers "<header>: <its
// value>" (lower-cased name), or "<header>: none" when the request has
// none: what the load balancer added on the way.
func serveRequestHeader(t *testing.T, ip string, port int32, header string) {
	t.Helper()
	ln, err := net.Listen("tcp", fmt.Sprintf("%s:%d", ip, port))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := r.Header.Get(header)
		if v == "" {
			v = "none"
		}
		fmt.Fprintf(w, "%s: %s", strings.ToLower(header), v)
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
}
