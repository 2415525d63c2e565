package lbops

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccm/internal/lb/lbspec"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

func newTestOps(env *lbEnv) *Ops {
	return New(env.api.LB, env.api.NLB, env.api.Network, Config{Compartment: testCompartment,
		Timing: Timing{Poll: time.Millisecond, PollMax: time.Millisecond, Wait: 5 * time.Second}})
}

func desired(kind Kind, ips ...string) *Desired {
	d := &Desired{
		Spec: lbspec.Spec{
			Ref:         lbspec.Ref{Service: types.NamespacedName{Namespace: "default", Name: "web"}, UID: "uid-1"},
			Name:        "uid-1",
			Listeners:   []lbspec.Listener{{Protocol: lbspec.TCP, Port: 80, NodePort: 30080}},
			HealthCheck: lbspec.HealthCheck{Protocol: lbspec.HealthCheckTCP, UnhealthyThreshold: 3, Interval: 5 * time.Second, Timeout: 2 * time.Second},
		},
		Settings: Settings{
			Kind: kind, Subnets: []string{subnetA},
			Shape: ShapeFlexible, FlexMinMbps: 10, FlexMaxMbps: 100, ListenerProtocol: "TCP",
			Policy: "ROUND_ROBIN", SecurityListMode: SecurityListNone,
		},
	}
	if kind == KindNLB {
		d.Policy = "FIVE_TUPLE"
	}
	for _, ip := range ips {
		d.Backends = append(d.Backends, lbspec.Backend{NodeName: "n-" + ip, Address: ip})
	}
	return d
}

func TestEnsureCreatesThenResyncWritesNothing(t *testing.T) {
	for _, tc := range []struct {
		kind     Kind
		proxy    int  // Settings.ProxyProtocol (proxyprotocol.go)
		ruleSets bool // Settings.RuleSets (rulesets.go), inline at creation
	}{{KindLB, 0, false}, {KindNLB, 0, false}, {KindLB, 2, false}, {KindNLB, 2, false}, {KindLB, 2, true}} {
		kind := tc.kind
		t.Run(fmt.Sprintf("%s proxy protocol %d rule sets %v", kind, tc.proxy, tc.ruleSets), func(t *testing.T) {
			env := newLBEnv(t)
			o := newTestOps(env)
			d := desired(kind, "10.0.0.1", "10.0.0.2")
			d.ProxyProtocol = tc.proxy
			if tc.ruleSets {
				d.RuleSets = twoRuleSets(t, "prod")
			}
			st, err := o.Ensure(context.Background(), d)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Ingress) != 1 || st.Ingress[0].IP != env.only(kind).IPAddress {
				t.Errorf("status = %+v", st)
			}
			want := []string{"CreateLoadBalancer"}
			if kind == KindNLB {
				want = []string{"CreateNetworkLoadBalancer"}
			}
			if got := env.writesOf(); !slices.Equal(got, want) {
				t.Errorf("writes = %v, want %v (listeners and backend sets inline)", got, want)
			}
			env.resetWrites()
			if _, err := o.Ensure(context.Background(), d); err != nil {
				t.Fatal(err)
			}
			if got := env.writesOf(); len(got) != 0 {
				t.Errorf("an unchanged resync wrote: %v", got)
			}
			if exists := mustGet(t, o, "uid-1"); !exists {
				t.Error("Get does not find it")
			}
		})
	}
}

func mustGet(t *testing.T, o *Ops, name string) bool {
	t.Helper()
	_, exists, err := o.Get(context.Background(), &Desired{Spec: lbspec.Spec{Name: name}})
	if err != nil {
		t.Fatal(err)
	}
	return exists
}

func TestEnsureIsIdempotentAcrossARetriedCreate(t *testing.T) {
	env := newLBEnv(t)
	d := desired(KindLB, "10.0.0.1")
	// A first process created it and died; the retry token makes a repeated
	// create return the same load balancer (here, find sees it anyway).
	if _, err := newTestOps(env).Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if _, err := newTestOps(env).Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if n := len(env.balancers(KindLB)); n != 1 {
		t.Errorf("%d load balancers, want 1", n)
	}
}

func TestEnsurePlansMinimalChanges(t *testing.T) {
	env := newLBEnv(t)
	o := newTestOps(env)
	d := desired(KindLB, "10.0.0.1", "10.0.0.2")
	d.Listeners = append(d.Listeners, lbspec.Listener{Protocol: lbspec.TCP, Port: 443, NodePort: 30443})
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	// Someone else's listener on our load balancer is never touched.
	lbID := env.only(KindLB).ID
	custom := loadbalancer.CreateListenerRequest{LoadBalancerId: &lbID, CreateListenerDetails: loadbalancer.CreateListenerDetails{
		Name: common.String("custom"), DefaultBackendSetName: common.String("TCP-443"), Port: common.Int(8443), Protocol: common.String("TCP")}}
	if _, err := env.api.LB.CreateListener(context.Background(), custom); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, env, lbID)

	// A node goes, port 443 goes, port 8080 comes.
	d.Backends = d.Backends[:1]
	d.Listeners = []lbspec.Listener{{Protocol: lbspec.TCP, Port: 80, NodePort: 30080}, {Protocol: lbspec.TCP, Port: 8080, NodePort: 30808}}
	env.resetWrites()
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	want := []string{"UpdateBackendSet TCP-80", "CreateBackendSet TCP-8080", "CreateListener TCP-8080", "DeleteListener TCP-443"}
	if got := env.writesOf(); !slices.Equal(got, want) {
		t.Errorf("writes = %v\nwant %v (TCP-443's backend set stays: a foreign listener uses it)", got, want)
	}
	if !slices.ContainsFunc(env.only(KindLB).Listeners, func(l simoci.Listener) bool { return l.Name == "custom" }) {
		t.Error("a foreign listener was deleted")
	}
}

func TestEnsureWaitsForWorkRequests(t *testing.T) {
	env := newLBEnvWith(t, func(o *cloudsim.Options) { o.OCI.WorkRequestLatency = 200 * time.Millisecond })
	o := newTestOps(env)
	d := desired(KindLB, "10.0.0.1")
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	id := env.only(KindLB).ID
	if lb, err := env.sim.OCI().LoadBalancer(id); err != nil || lb.Busy != "" {
		t.Fatalf("Ensure returned while the creation ran (%+v, %v)", lb.Busy, err)
	}
	// Each write's work request is awaited before the next write (cloudsim
	// refuses a write while one runs: 409) and before Ensure returns. The
	// check is on the cloud's state, not on a count of polls, which a
	// loaded machine makes fewer.
	d.Listeners = append(d.Listeners, lbspec.Listener{Protocol: lbspec.TCP, Port: 443, NodePort: 30443})
	env.resetWrites()
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if w := env.writesOf(); len(w) < 2 {
		t.Fatalf("writes = %v, want a backend set and a listener", w)
	}
	lb, err := env.sim.OCI().LoadBalancer(id)
	if err != nil {
		t.Fatal(err)
	}
	if lb.Busy != "" {
		t.Errorf("Ensure returned while a work request ran: %s", lb.Busy)
	}
}

func TestWorkRequestTimeoutIsRememberedAndAwaited(t *testing.T) {
	// The work request must still run when the third Ensure comes: 2 s,
	// not 300 ms, which a starved test once outlived (the third Ensure then
	// found it done and rightly wrote).
	env := newLBEnvWith(t, func(o *cloudsim.Options) { o.OCI.WorkRequestLatency = 2 * time.Second })
	o := newTestOps(env)
	d := desired(KindLB, "10.0.0.1")
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	o.timing.Wait = 5 * time.Millisecond // the next work request outlives the wait
	d.Backends = append(d.Backends, lbspec.Backend{NodeName: "n2", Address: "10.0.0.2"})
	_, err := o.Ensure(context.Background(), d)
	var re *api.RetryError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want a RetryError", err)
	}
	// The next change must not start while that work request runs.
	env.resetWrites()
	d.Backends = append(d.Backends, lbspec.Backend{NodeName: "n3", Address: "10.0.0.3"})
	if _, err := o.Ensure(context.Background(), d); !errors.As(err, &re) {
		t.Fatalf("err = %v, want a RetryError while the work request runs", err)
	}
	if w := env.writesOf(); len(w) != 0 {
		t.Errorf("a change started while a work request was in flight: %v", w)
	}
	waitIdle(t, env, env.only(KindLB).ID)
	o.timing.Wait = 5 * time.Second
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if w := env.writesOf(); !slices.Equal(w, []string{"UpdateBackendSet TCP-80"}) {
		t.Errorf("writes = %v", w)
	}
}

func TestBusyLoadBalancerIsRetried(t *testing.T) {
	env := newLBEnv(t)
	o := newTestOps(env)
	d := desired(KindLB, "10.0.0.1")
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	env.fail("UpdateBackendSet", http.StatusConflict, "IncorrectState", 0)
	d.Backends = nil
	_, err := o.Ensure(context.Background(), d)
	var re *api.RetryError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want a RetryError for 409 IncorrectState", err)
	}
}

// An NLB with a work request in flight answers 409 Conflict ("Invalid
// State Transition of NLB lifeCycle state from Updating to Updating"): the
// change is retried later (a RetryError with the configured delay), after
// one attempt, not in a loop.
func TestBusyNLBConflictIsRetriedLater(t *testing.T) {
	env := newLBEnv(t)
	o := newTestOps(env)
	d := desired(KindNLB, "10.0.0.1")
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	env.fail("nlb:UpdateBackendSet", http.StatusConflict, "Conflict", 1)
	env.resetWrites()
	d.Backends = append(d.Backends, lbspec.Backend{NodeName: "n2", Address: "10.0.0.2"})
	_, err := o.Ensure(context.Background(), d)
	var re *api.RetryError
	if !errors.As(err, &re) || re.RetryAfter() != DefaultTiming.Retry {
		t.Fatalf("err = %v, want a RetryError after %s", err, DefaultTiming.Retry)
	}
	if w := env.writesOf(); len(w) != 1 {
		t.Errorf("writes = %v, want one attempt", w)
	}
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatalf("once the NLB is free: %v", err)
	}
}

// A creation whose work request FAILED: creating again with the same
// opc-retry-token would replay the failure, so the FAILED load balancer is
// deleted and the create sent with the second, derived token, which works
// across restarts as the first does. A second failure is the error, and
// names both; for the NLB the reason comes from ListWorkRequestErrors.
func TestFailedCreationUsesTheSecondToken(t *testing.T) {
	for _, kind := range []Kind{KindLB, KindNLB} {
		t.Run(string(kind), func(t *testing.T) {
			env := newLBEnv(t)
			o := newTestOps(env)
			env.failCreations(kind, 1)
			st, err := o.Ensure(context.Background(), desired(kind, "10.0.0.1"))
			if err != nil || len(st.Ingress) != 1 {
				t.Fatalf("Ensure after one failed creation: %v %v", st, err)
			}
			create, del := "CreateLoadBalancer", "DeleteLoadBalancer"
			if kind == KindNLB {
				create, del = "CreateNetworkLoadBalancer", "DeleteNetworkLoadBalancer"
			}
			if w := env.writesOf(); !slices.Equal(w, []string{create, del, create}) {
				t.Errorf("writes = %v", w)
			}
			if got := env.usedTokens(); !slices.Equal(got, []string{"uid-1", "uid-1-retry-1"}) {
				t.Errorf("tokens = %v", got)
			}
			if n := len(env.balancers(KindLB)) + len(env.balancers(KindNLB)); n != 1 {
				t.Errorf("%d load balancers, want 1", n)
			}

			env2 := newLBEnv(t)
			env2.failCreations(kind, 2)
			_, err = newTestOps(env2).Ensure(context.Background(), desired(kind, "10.0.0.1"))
			want := "InternalError"
			if err == nil || strings.Count(err.Error(), want) != 2 || !strings.Contains(err.Error(), "an earlier creation failed too") {
				t.Fatalf("err = %v, want both failures with %q", err, want)
			}
		})
	}
}

func TestFailedLoadBalancerIsRecreated(t *testing.T) {
	// OCI keeps the Service UID's retry token for 24 hours: a second create
	// with it is refused (InvalidatedRetryToken) or replays the first
	// creation, whose load balancer is gone. Either way a new token is used.
	env := newLBEnv(t)
	o := newTestOps(env)
	d := desired(KindLB, "10.0.0.1")
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if err := env.sim.OCI().FailLoadBalancer(env.only(KindLB).ID); err != nil {
		t.Fatal(err)
	}
	env.resetWrites()
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if w := env.writesOf(); !slices.Equal(w, []string{"DeleteLoadBalancer", "CreateLoadBalancer", "CreateLoadBalancer"}) {
		t.Errorf("writes = %v, want the delete, the refused replay and the create with a new token", w)
	}
	if n := len(env.balancers(KindLB)); n != 1 || !mustGet(t, o, "uid-1") {
		t.Errorf("%d load balancers after the re-creation, want 1", n)
	}
}

func TestKindSwitchReplaces(t *testing.T) {
	env := newLBEnv(t)
	o := newTestOps(env)
	if _, err := o.Ensure(context.Background(), desired(KindLB, "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Ensure(context.Background(), desired(KindNLB, "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	if lbs, nlbs := len(env.balancers(KindLB)), len(env.balancers(KindNLB)); lbs != 0 || nlbs != 1 {
		t.Errorf("lbs=%d nlbs=%d, want 0 and 1", lbs, nlbs)
	}
	if err := o.Delete(context.Background(), desired(KindLB)); err != nil {
		t.Fatal(err)
	}
	if len(env.balancers(KindNLB)) != 0 || mustGet(t, o, "uid-1") {
		t.Error("Delete left a load balancer")
	}
	if err := o.Delete(context.Background(), desired(KindLB)); err != nil {
		t.Errorf("deleting again: %v", err)
	}
}

func TestUpdateDoesNotCreate(t *testing.T) {
	env := newLBEnv(t)
	if err := newTestOps(env).Update(context.Background(), desired(KindLB, "10.0.0.1")); err == nil {
		t.Fatal("Update created or accepted a missing load balancer")
	}
	if len(env.balancers(KindLB)) != 0 {
		t.Error("Update created a load balancer")
	}
}

func TestImmutableDiffReportedAfterReconcile(t *testing.T) {
	env := newLBEnv(t)
	o := newTestOps(env)
	d := desired(KindLB, "10.0.0.1")
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	d.Internal, d.FlexMaxMbps = true, 400
	d.Backends = append(d.Backends, lbspec.Backend{NodeName: "n2", Address: "10.0.0.2"})
	env.resetWrites()
	_, err := o.Ensure(context.Background(), d)
	if err == nil || !strings.Contains(err.Error(), "internal is false") || !strings.Contains(err.Error(), "10-100 Mbps") {
		t.Fatalf("err = %v", err)
	}
	if w := env.writesOf(); !slices.Equal(w, []string{"UpdateBackendSet TCP-80"}) {
		t.Errorf("writes = %v: backends must still be reconciled", w)
	}
}

func TestNLBHealthChecksAndUDP(t *testing.T) {
	env := newLBEnv(t)
	o := newTestOps(env)
	d := desired(KindNLB, "10.0.0.1")
	d.Listeners = append(d.Listeners, lbspec.Listener{Protocol: lbspec.UDP, Port: 53, NodePort: 30053})
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	udp := nlbSetHealth(t, env, "UDP-53")
	if udp.Protocol != "HTTP" || udp.Port != kubeProxyHealthPort || udp.URLPath != "/healthz" {
		t.Errorf("UDP backend set health check = %+v, want HTTP:10256/healthz", udp)
	}
	if tcp := nlbSetHealth(t, env, "TCP-80"); tcp.Protocol != "TCP" || tcp.Port != 30080 {
		t.Errorf("TCP backend set health check = %+v", tcp)
	}
	// Local policy: HTTP on the healthCheckNodePort for every set.
	d.HealthCheck = lbspec.HealthCheck{Protocol: lbspec.HealthCheckHTTP, Port: 32000, Path: "/healthz", UnhealthyThreshold: 3, Interval: 5 * time.Second, Timeout: 2 * time.Second}
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"TCP-80", "UDP-53"} {
		if hc := nlbSetHealth(t, env, name); hc.Protocol != "HTTP" || hc.Port != 32000 {
			t.Errorf("%s: health check %+v, want HTTP:32000", name, hc)
		}
	}
}

func TestSecurityListsFrontend(t *testing.T) {
	env := newLBEnv(t)
	o := newTestOps(env)
	d := desired(KindLB, "10.0.0.1")
	d.SecurityListMode = SecurityListFrontend
	d.SourceRanges = []string{"192.0.2.0/24", "198.51.100.0/24"}
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	rules := env.securityList(slA).IngressSecurityRules
	if len(rules) != 3 || *rules[0].Description != "someone else's" {
		t.Fatalf("rules = %d: %v", len(rules), describe(rules))
	}
	for _, r := range rules[1:] {
		if *r.Description != "ccmkit.io/service-uid=uid-1" || *r.TcpOptions.DestinationPortRange.Min != 80 {
			t.Errorf("rule %v", describe([]core.IngressSecurityRule{r}))
		}
	}
	env.resetWrites()
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if w := env.writesOf(); len(w) != 0 {
		t.Errorf("unchanged rules rewritten: %v", w)
	}
	// A concurrent edit (etag mismatch) is retried, never overwritten.
	d.SourceRanges = nil
	env.fail("UpdateSecurityList", http.StatusPreconditionFailed, "NoEtagMatch", 1)
	var re *api.RetryError
	if _, err := o.Ensure(context.Background(), d); !errors.As(err, &re) {
		t.Fatalf("err = %v, want a RetryError on 412", err)
	}
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if rules := env.securityList(slA).IngressSecurityRules; len(rules) != 2 || *rules[1].Source != "0.0.0.0/0" {
		t.Errorf("rules = %v", describe(rules))
	}
	if err := o.Delete(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if rules := env.securityList(slA).IngressSecurityRules; len(rules) != 1 {
		t.Errorf("after delete, rules = %v", describe(rules))
	}
}

func TestSecurityListsNoneTouchesNothing(t *testing.T) {
	env := newLBEnv(t)
	o := newTestOps(env)
	d := desired(KindLB, "10.0.0.1")
	d.SourceRanges = []string{"192.0.2.0/24"}
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if w := env.writesOf(); slices.ContainsFunc(w, func(op string) bool { return strings.HasPrefix(op, "UpdateSecurityList") }) {
		t.Errorf("mode None wrote a security list: %v", w)
	}
}

func describe(rules []core.IngressSecurityRule) []string {
	var out []string
	for _, r := range rules {
		out = append(out, *r.Source+" "+*r.Protocol+" "+deref(r.Description))
	}
	return out
}

func TestOwnedName(t *testing.T) {
	for name, want := range map[string]bool{"TCP-80": true, "UDP-53": true, "HTTP-80": true, "GRPC-443": true, "TCP-80-IPv6": true, "TLS-80": false, "TCP-": false, "TCP-8a": false, "custom": false} {
		if ownedName(name) != want {
			t.Errorf("ownedName(%q) = %v", name, !want)
		}
	}
}

// A public NLB lists its private address too (IsPublic false); the status
// publishes only what clients can reach, in a stable order.
func TestStatusAddresses(t *testing.T) {
	pub := func(ip string) ipModel { return ipModel{IP: ip, Public: true} }
	priv := func(ip string) ipModel { return ipModel{IP: ip} }
	tests := []struct {
		name           string
		internal       bool
		publishPrivate bool
		ips            []ipModel
		want           []string
		apiOrder       bool
		published      []string // the Service's status now
		chose          bool     // external-ip-only is set
	}{
		{"public: the private address is left out, though it sorts first", false, false,
			[]ipModel{priv("10.0.0.9"), pub("203.0.113.7")}, []string{"203.0.113.7"}, false, nil, false},
		{"public, external-ip-only false: public first", false, true,
			[]ipModel{priv("10.0.0.9"), pub("203.0.113.7")}, []string{"203.0.113.7", "10.0.0.9"}, false, nil, false},
		{"public: several, sorted", false, false,
			[]ipModel{pub("203.0.113.9"), priv("10.0.0.9"), pub("203.0.113.10")}, []string{"203.0.113.10", "203.0.113.9"}, false, nil, false},
		{"private", true, false, []ipModel{priv("10.0.0.9")}, []string{"10.0.0.9"}, false, nil, false},
		{"nothing matches: everything", false, false, []ipModel{priv("10.0.0.9")}, []string{"10.0.0.9"}, false, nil, false},
		{"no address yet", false, false, nil, nil, false, nil, false},
		{"the public OCI CCM's: every address, OCI's order", false, true,
			[]ipModel{priv("10.0.0.9"), pub("203.0.113.7")}, []string{"10.0.0.9", "203.0.113.7"}, true, nil, false},
		{"the public OCI CCM's, external-ip-only: public only", false, false,
			[]ipModel{priv("10.0.0.9"), pub("203.0.113.9"), pub("203.0.113.10")}, []string{"203.0.113.9", "203.0.113.10"}, true, nil, false},
		{"taken over: the private address the Service shows stays, in its order", false, false,
			[]ipModel{pub("203.0.113.7"), priv("10.0.0.9")}, []string{"10.0.0.9", "203.0.113.7"}, false, []string{"10.0.0.9", "203.0.113.7"}, false},
		{"taken over, external-ip-only true: the private address goes", false, false,
			[]ipModel{pub("203.0.113.7"), priv("10.0.0.9")}, []string{"203.0.113.7"}, false, []string{"10.0.0.9", "203.0.113.7"}, true},
		{"a status with another address: sorted as ours", false, false,
			[]ipModel{pub("203.0.113.9"), pub("203.0.113.10")}, []string{"203.0.113.10", "203.0.113.9"}, false, []string{"203.0.113.9"}, false},
		{"the same addresses: the status's order kept", false, false,
			[]ipModel{pub("203.0.113.9"), pub("203.0.113.10")}, []string{"203.0.113.9", "203.0.113.10"}, false, []string{"203.0.113.9", "203.0.113.10"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := status(&actual{Internal: tt.internal, IPs: tt.ips}, &Desired{Settings: Settings{PublishPrivate: tt.publishPrivate, APIOrder: tt.apiOrder,
				PublishPrivateSet: tt.chose, Published: tt.published}})
			var got []string
			for _, in := range st.Ingress {
				got = append(got, in.IP)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("status = %v, want %v", got, tt.want)
			}
		})
	}
}

// waitIdle waits until no work request runs on the load balancer.
func waitIdle(t *testing.T, env *lbEnv, id string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		lb, err := env.sim.OCI().LoadBalancer(id)
		if err != nil {
			t.Fatal(err)
		}
		if lb.Busy == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("load balancer %s still busy with %s", id, lb.Busy)
		}
	}
}

// nlbSetHealth returns the health checker of one of the NLB's backend sets.
func nlbSetHealth(t *testing.T, env *lbEnv, set string) simoci.HealthChecker {
	t.Helper()
	for _, bs := range env.only(KindNLB).BackendSets {
		if bs.Name == set {
			return bs.HealthChecker
		}
	}
	t.Fatalf("no backend set %s", set)
	return simoci.HealthChecker{}
}

// A work request is read a poll after its write, not at once: one that
// ends within the first poll costs one read (at 1,000 creations, the read
// right after each write bounded the burst: docs/scale.md).
func TestWorkRequestReadAfterAPoll(t *testing.T) {
	env := newLBEnv(t)
	o := New(env.api.LB, env.api.NLB, env.api.Network, Config{Compartment: testCompartment,
		Timing: Timing{Poll: 500 * time.Millisecond, PollMax: time.Second, Wait: 30 * time.Second}})
	if _, err := o.Ensure(context.Background(), desired(KindLB, "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	// The creation's work request takes 2 ms (newLBEnv), well within a poll.
	if n := env.listsOf("GetWorkRequest"); n != 1 {
		t.Errorf("%d GetWorkRequest for one creation, want 1", n)
	}
}
