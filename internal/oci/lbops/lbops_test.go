package lbops

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	"github.com/oracle/oci-go-sdk/v65/networkloadbalancer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccm/internal/lbspec"
)

const (
	subnetA = "ocid1.subnet.oc1.iad.a"
	subnetB = "ocid1.subnet.oc1.iad.b"
	slA     = "ocid1.securitylist.oc1.iad.a"
)

func newTestOps(f *fakeCloud) *Ops {
	o := New(f, nlbFake{f}, f, Config{Compartment: "ocid1.compartment.oc1..c", Timing: Timing{Poll: time.Millisecond, PollMax: time.Millisecond, Wait: time.Second}})
	return o
}

func desired(kind Kind, ips ...string) *Desired {
	d := &Desired{
		Ref:  lbspec.Ref{Service: types.NamespacedName{Namespace: "default", Name: "web"}, UID: "uid-1"},
		Kind: kind, DisplayName: "uid-1", Subnets: []string{subnetA},
		Shape: ShapeFlexible, FlexMinMbps: 10, FlexMaxMbps: 100, ListenerProtocol: "TCP",
		Listeners:   []lbspec.Listener{{Protocol: lbspec.TCP, Port: 80, NodePort: 30080}},
		HealthCheck: HealthCheck{Protocol: "TCP", Retries: 3, Interval: 5 * time.Second, Timeout: 2 * time.Second},
		Policy:      "ROUND_ROBIN", SecurityListMode: SecurityListNone,
	}
	if kind == KindNLB {
		d.Policy = "FIVE_TUPLE"
	}
	for _, ip := range ips {
		d.Backends = append(d.Backends, Backend{NodeName: "n-" + ip, IP: ip})
	}
	return d
}

func TestEnsureCreatesThenResyncWritesNothing(t *testing.T) {
	for _, kind := range []Kind{KindLB, KindNLB} {
		t.Run(string(kind), func(t *testing.T) {
			f := newFakeCloud()
			o := newTestOps(f)
			d := desired(kind, "10.0.0.1", "10.0.0.2")
			st, err := o.Ensure(context.Background(), d)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Ingress) != 1 || !strings.HasPrefix(st.Ingress[0].IP, "127.0.") {
				t.Errorf("status = %+v", st)
			}
			want := []string{"CreateLoadBalancer"}
			if kind == KindNLB {
				want = []string{"CreateNetworkLoadBalancer"}
			}
			if got := f.writesOf(); !slices.Equal(got, want) {
				t.Errorf("writes = %v, want %v (listeners and backend sets inline)", got, want)
			}
			f.resetWrites()
			if _, err := o.Ensure(context.Background(), d); err != nil {
				t.Fatal(err)
			}
			if got := f.writesOf(); len(got) != 0 {
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
	_, exists, err := o.Get(context.Background(), name, false)
	if err != nil {
		t.Fatal(err)
	}
	return exists
}

func TestEnsureIsIdempotentAcrossARetriedCreate(t *testing.T) {
	f := newFakeCloud()
	d := desired(KindLB, "10.0.0.1")
	// A first process created it and died; the retry token makes a repeated
	// create return the same load balancer (here, find sees it anyway).
	if _, err := newTestOps(f).Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if _, err := newTestOps(f).Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if len(f.lbs) != 1 {
		t.Errorf("%d load balancers, want 1", len(f.lbs))
	}
}

func TestEnsurePlansMinimalChanges(t *testing.T) {
	f := newFakeCloud()
	o := newTestOps(f)
	d := desired(KindLB, "10.0.0.1", "10.0.0.2")
	d.Listeners = append(d.Listeners, lbspec.Listener{Protocol: lbspec.TCP, Port: 443, NodePort: 30443})
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	// Someone else's listener on our load balancer is never touched.
	var lbID string
	for id := range f.lbs {
		lbID = id
	}
	f.lbs[lbID].Listeners["custom"] = loadbalancer.Listener{Name: common.String("custom"), DefaultBackendSetName: common.String("TCP-443"),
		Port: common.Int(8443), Protocol: common.String("TCP")}

	// A node goes, port 443 goes, port 8080 comes.
	d.Backends = d.Backends[:1]
	d.Listeners = []lbspec.Listener{{Protocol: lbspec.TCP, Port: 80, NodePort: 30080}, {Protocol: lbspec.TCP, Port: 8080, NodePort: 30808}}
	f.resetWrites()
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	want := []string{"UpdateBackendSet TCP-80", "CreateBackendSet TCP-8080", "CreateListener TCP-8080", "DeleteListener TCP-443"}
	if got := f.writesOf(); !slices.Equal(got, want) {
		t.Errorf("writes = %v\nwant %v (TCP-443's backend set stays: a foreign listener uses it)", got, want)
	}
	if _, ok := f.lbs[lbID].Listeners["custom"]; !ok {
		t.Error("a foreign listener was deleted")
	}
}

func TestEnsureWaitsForWorkRequests(t *testing.T) {
	f := newFakeCloud()
	f.wrPolls = 3
	o := newTestOps(f)
	d := desired(KindLB, "10.0.0.1")
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	// Each write's work request is read until it succeeds before the next write.
	d.Listeners = append(d.Listeners, lbspec.Listener{Protocol: lbspec.TCP, Port: 443, NodePort: 30443})
	before := f.reads
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if polls := f.reads - before; polls < 8 {
		t.Errorf("%d reads for two writes with 3 pending polls each; the work requests were not awaited", polls)
	}
}

func TestWorkRequestTimeoutIsRememberedAndAwaited(t *testing.T) {
	f := newFakeCloud()
	o := newTestOps(f)
	d := desired(KindLB, "10.0.0.1")
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	o.timing.Wait = 5 * time.Millisecond
	f.wrPolls = 1 << 30 // never finishes while we look
	d.Backends = append(d.Backends, Backend{NodeName: "n2", IP: "10.0.0.2"})
	_, err := o.Ensure(context.Background(), d)
	var re *api.RetryError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want a RetryError", err)
	}
	// The next change must not start while that work request runs.
	f.resetWrites()
	d.Backends = append(d.Backends, Backend{NodeName: "n3", IP: "10.0.0.3"})
	if _, err := o.Ensure(context.Background(), d); !errors.As(err, &re) {
		t.Fatalf("err = %v, want a RetryError while the work request runs", err)
	}
	if w := f.writesOf(); len(w) != 0 {
		t.Errorf("a change started while a work request was in flight: %v", w)
	}
	f.wrPolls = 0
	for _, wr := range f.wrs {
		wr.polls = 0
	}
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if w := f.writesOf(); !slices.Equal(w, []string{"UpdateBackendSet TCP-80"}) {
		t.Errorf("writes = %v", w)
	}
}

func TestBusyLoadBalancerIsRetried(t *testing.T) {
	f := newFakeCloud()
	o := newTestOps(f)
	d := desired(KindLB, "10.0.0.1")
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	f.busy = true
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
	f := newFakeCloud()
	o := newTestOps(f)
	d := desired(KindNLB, "10.0.0.1")
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	f.busy, f.busyCode = true, "Conflict"
	f.resetWrites()
	d.Backends = append(d.Backends, Backend{NodeName: "n2", IP: "10.0.0.2"})
	_, err := o.Ensure(context.Background(), d)
	var re *api.RetryError
	if !errors.As(err, &re) || re.RetryAfter() != DefaultTiming.Retry {
		t.Fatalf("err = %v, want a RetryError after %s", err, DefaultTiming.Retry)
	}
	if w := f.writesOf(); len(w) != 1 {
		t.Errorf("writes = %v, want one attempt", w)
	}
	f.busy = false
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
			f := newFakeCloud()
			o := newTestOps(f)
			f.failCreates = 1
			st, err := o.Ensure(context.Background(), desired(kind, "10.0.0.1"))
			if err != nil || len(st.Ingress) != 1 {
				t.Fatalf("Ensure after one failed creation: %v %v", st, err)
			}
			create, del := "CreateLoadBalancer", "DeleteLoadBalancer"
			if kind == KindNLB {
				create, del = "CreateNetworkLoadBalancer", "DeleteNetworkLoadBalancer"
			}
			if w := f.writesOf(); !slices.Equal(w, []string{create, del, create}) {
				t.Errorf("writes = %v", w)
			}
			if !slices.Equal(f.usedTokens, []string{"uid-1", "uid-1-retry-1"}) {
				t.Errorf("tokens = %v", f.usedTokens)
			}
			if n := len(f.lbs) + len(f.nlbs); n != 1 {
				t.Errorf("%d load balancers, want 1", n)
			}

			f2 := newFakeCloud()
			f2.failCreates = 2
			_, err = newTestOps(f2).Ensure(context.Background(), desired(kind, "10.0.0.1"))
			want := "injected failure"
			if kind == KindNLB {
				want = "InternalServerError: injected NLB failure"
			}
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
	for _, invalidate := range []bool{false, true} {
		t.Run(map[bool]string{false: "token replayed", true: "token invalidated"}[invalidate], func(t *testing.T) {
			f := newFakeCloud()
			f.invalidateTokens = invalidate
			o := newTestOps(f)
			d := desired(KindLB, "10.0.0.1")
			if _, err := o.Ensure(context.Background(), d); err != nil {
				t.Fatal(err)
			}
			for _, lb := range f.lbs {
				lb.LifecycleState = loadbalancer.LoadBalancerLifecycleStateFailed
			}
			f.resetWrites()
			if _, err := o.Ensure(context.Background(), d); err != nil {
				t.Fatal(err)
			}
			if w := f.writesOf(); !slices.Equal(w, []string{"DeleteLoadBalancer", "CreateLoadBalancer", "CreateLoadBalancer"}) {
				t.Errorf("writes = %v", w)
			}
			if len(f.lbs) != 1 || !mustGet(t, o, "uid-1") {
				t.Errorf("%d load balancers after the re-creation, want 1", len(f.lbs))
			}
		})
	}
}

func TestKindSwitchReplaces(t *testing.T) {
	f := newFakeCloud()
	o := newTestOps(f)
	if _, err := o.Ensure(context.Background(), desired(KindLB, "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Ensure(context.Background(), desired(KindNLB, "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	if len(f.lbs) != 0 || len(f.nlbs) != 1 {
		t.Errorf("lbs=%d nlbs=%d, want 0 and 1", len(f.lbs), len(f.nlbs))
	}
	if err := o.Delete(context.Background(), desired(KindLB)); err != nil {
		t.Fatal(err)
	}
	if len(f.nlbs) != 0 || mustGet(t, o, "uid-1") {
		t.Error("Delete left a load balancer")
	}
	if err := o.Delete(context.Background(), desired(KindLB)); err != nil {
		t.Errorf("deleting again: %v", err)
	}
}

func TestUpdateDoesNotCreate(t *testing.T) {
	f := newFakeCloud()
	if err := newTestOps(f).Update(context.Background(), desired(KindLB, "10.0.0.1")); err == nil {
		t.Fatal("Update created or accepted a missing load balancer")
	}
	if len(f.lbs) != 0 {
		t.Error("Update created a load balancer")
	}
}

func TestImmutableDiffReportedAfterReconcile(t *testing.T) {
	f := newFakeCloud()
	o := newTestOps(f)
	d := desired(KindLB, "10.0.0.1")
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	d.Internal, d.FlexMaxMbps = true, 400
	d.Backends = append(d.Backends, Backend{NodeName: "n2", IP: "10.0.0.2"})
	f.resetWrites()
	_, err := o.Ensure(context.Background(), d)
	if err == nil || !strings.Contains(err.Error(), "internal is false") || !strings.Contains(err.Error(), "10-100 Mbps") {
		t.Fatalf("err = %v", err)
	}
	if w := f.writesOf(); !slices.Equal(w, []string{"UpdateBackendSet TCP-80"}) {
		t.Errorf("writes = %v: backends must still be reconciled", w)
	}
}

func TestNLBHealthChecksAndUDP(t *testing.T) {
	f := newFakeCloud()
	o := newTestOps(f)
	d := desired(KindNLB, "10.0.0.1")
	d.Listeners = append(d.Listeners, lbspec.Listener{Protocol: lbspec.UDP, Port: 53, NodePort: 30053})
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	n := f.anyNLB()
	udp := n.BackendSets["UDP-53"].HealthChecker
	if string(udp.Protocol) != "HTTP" || *udp.Port != kubeProxyHealthPort || *udp.UrlPath != "/healthz" {
		t.Errorf("UDP backend set health check = %s:%d%s, want HTTP:10256/healthz", udp.Protocol, *udp.Port, *udp.UrlPath)
	}
	tcp := n.BackendSets["TCP-80"].HealthChecker
	if string(tcp.Protocol) != "TCP" || *tcp.Port != 30080 {
		t.Errorf("TCP backend set health check = %s:%d", tcp.Protocol, *tcp.Port)
	}
	// Local policy: HTTP on the healthCheckNodePort for every set.
	d.HealthCheck = HealthCheck{Protocol: "HTTP", Port: 32000, Path: "/healthz", Retries: 3, Interval: 5 * time.Second, Timeout: 2 * time.Second}
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	for name, bs := range f.anyNLB().BackendSets {
		if hc := bs.HealthChecker; string(hc.Protocol) != "HTTP" || *hc.Port != 32000 {
			t.Errorf("%s: health check %s:%d, want HTTP:32000", name, hc.Protocol, *hc.Port)
		}
	}
}

func (f *fakeCloud) anyNLB() *networkloadbalancer.NetworkLoadBalancer {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.nlbs {
		return n
	}
	return nil
}

func TestSecurityListsFrontend(t *testing.T) {
	f := newFakeCloud()
	o := newTestOps(f)
	d := desired(KindLB, "10.0.0.1")
	d.SecurityListMode = SecurityListFrontend
	d.SourceRanges = []string{"192.0.2.0/24", "198.51.100.0/24"}
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	rules := f.seclists[slA].IngressSecurityRules
	if len(rules) != 3 || *rules[0].Description != "someone else's" {
		t.Fatalf("rules = %d: %v", len(rules), describe(rules))
	}
	for _, r := range rules[1:] {
		if *r.Description != "ccmkit.io/service-uid=uid-1" || *r.TcpOptions.DestinationPortRange.Min != 80 {
			t.Errorf("rule %v", describe([]core.IngressSecurityRule{r}))
		}
	}
	f.resetWrites()
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if w := f.writesOf(); len(w) != 0 {
		t.Errorf("unchanged rules rewritten: %v", w)
	}
	// A concurrent edit (etag mismatch) is retried, never overwritten.
	d.SourceRanges = nil
	f.staleTag = true
	var re *api.RetryError
	if _, err := o.Ensure(context.Background(), d); !errors.As(err, &re) {
		t.Fatalf("err = %v, want a RetryError on 412", err)
	}
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if rules := f.seclists[slA].IngressSecurityRules; len(rules) != 2 || *rules[1].Source != "0.0.0.0/0" {
		t.Errorf("rules = %v", describe(rules))
	}
	if err := o.Delete(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if rules := f.seclists[slA].IngressSecurityRules; len(rules) != 1 {
		t.Errorf("after delete, rules = %v", describe(rules))
	}
}

func TestSecurityListsNoneTouchesNothing(t *testing.T) {
	f := newFakeCloud()
	o := newTestOps(f)
	d := desired(KindLB, "10.0.0.1")
	d.SourceRanges = []string{"192.0.2.0/24"}
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if len(f.seclists) != 0 {
		t.Error("mode None read or wrote a security list")
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
	for name, want := range map[string]bool{"TCP-80": true, "UDP-53": true, "HTTP-80": false, "TCP-": false, "TCP-8a": false, "custom": false} {
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
	}{
		{"public: the private address is left out, though it sorts first", false, false,
			[]ipModel{priv("10.0.0.9"), pub("203.0.113.7")}, []string{"203.0.113.7"}},
		{"public, external-ip-only false: public first", false, true,
			[]ipModel{priv("10.0.0.9"), pub("203.0.113.7")}, []string{"203.0.113.7", "10.0.0.9"}},
		{"public: several, sorted", false, false,
			[]ipModel{pub("203.0.113.9"), priv("10.0.0.9"), pub("203.0.113.10")}, []string{"203.0.113.10", "203.0.113.9"}},
		{"private", true, false, []ipModel{priv("10.0.0.9")}, []string{"10.0.0.9"}},
		{"nothing matches: everything", false, false, []ipModel{priv("10.0.0.9")}, []string{"10.0.0.9"}},
		{"no address yet", false, false, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := status(&actual{Internal: tt.internal, IPs: tt.ips}, tt.publishPrivate)
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
