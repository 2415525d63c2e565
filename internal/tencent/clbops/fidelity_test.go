package clbops

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	"k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccm/internal/lb/lbspec"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// Behavior the CLB API documents and the operations must cope with
// (issue 11): the DeleteLoadBalancer frequency check, busy answers without
// ResourceInOperating, DeleteListener without a "not found" code,
// ClientToken replays without a task, null health check fields, and batch
// calls that fail for some listeners.

// TestDeleteFrequencyCheckDefers: FailedOperation.FrequencyCheckRisk (30 or
// more CLBs deleted in the region within 5 minutes; ForceDelete does not
// override it) defers every deletion for DeleteRetryAfter, with a
// RetryError, instead of calling again at once for each waiting Service.
func TestDeleteFrequencyCheckDefers(t *testing.T) {
	env := newCLBEnv(t)
	o := newTestOps(env)
	now := time.Unix(1_700_000_000, 0)
	o.now = func() time.Time { return now }
	ctx := context.Background()
	a, b := testSpec(onlyTCP80, withUID("uid-a")), testSpec(onlyTCP80, withUID("uid-b"))
	mustEnsure(t, o, a)
	mustEnsure(t, o, b)
	env.fail("DeleteLoadBalancer", codeFrequencyCheckRisk, 1)

	err := o.Delete(ctx, a)
	var re *api.RetryError
	if !errors.As(err, &re) || re.RetryAfter() != DefaultTiming.DeleteRetryAfter ||
		!strings.Contains(err.Error(), "["+codeFrequencyCheckRisk+"] ") {
		t.Fatalf("Delete = %v, want a RetryError after %s naming the code and the API's message", err, DefaultTiming.DeleteRetryAfter)
	}
	if !strings.HasPrefix(err.Error(), "clbops.Delete: Service default/web: ") {
		t.Errorf("err = %q, want the operation and the Service", err)
	}
	// Meanwhile no Service calls DeleteLoadBalancer.
	now = now.Add(30 * time.Second)
	if err := o.Delete(ctx, b); !errors.As(err, &re) || re.RetryAfter() != 30*time.Second || !strings.Contains(err.Error(), "no call made") {
		t.Fatalf("second Delete during the wait = %v", err)
	}
	if n := env.count("DeleteLoadBalancer"); n != 1 {
		t.Fatalf("DeleteLoadBalancer calls = %d, want 1", n)
	}
	// After the wait both go.
	now = now.Add(31 * time.Second)
	for _, s := range []*Desired{a, b} {
		if err := o.Delete(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(env.lbIDs()); n != 0 {
		t.Fatalf("CLBs left: %d", n)
	}
}

// TestBusyWithoutResourceInOperating: DeleteListener (like
// DeleteLoadBalancer, DeregisterTargets and BatchDeregisterTargets) does
// not document ResourceInOperating and answers a busy CLB with plain
// FailedOperation. That code may also mean something lasting, so it is not
// retried blindly: the reconcile fails with a message that says so, and
// the next one reads the CLB again.
func TestBusyWithoutResourceInOperating(t *testing.T) {
	env := newCLBEnv(t)
	o := newTestOps(env)
	mustEnsure(t, o, testSpec())
	env.fail("DeleteListener", codeFailedOperation, 1)
	env.resetCalls()
	_, err := o.Ensure(context.Background(), testSpec(onlyTCP80))
	if err == nil || !strings.Contains(err.Error(), "[FailedOperation] ") || !strings.Contains(err.Error(), "the next reconcile reads it again") {
		t.Fatalf("Ensure = %v", err)
	}
	if n := env.count("DeleteListener"); n != 1 {
		t.Fatalf("DeleteListener calls = %d, want 1 (no blind retry)", n)
	}
	mustEnsure(t, o, testSpec(onlyTCP80))
	if got := env.listenerNames(env.lbIDs()[0]); !slices.Equal(got, []string{"TCP-80:TCP/80"}) {
		t.Fatalf("listeners after the next reconcile = %v", got)
	}
}

// TestDeleteListenerGoneIsDone: DeleteListener documents no "not found"
// code (clb@v1.3.105 client.go): a listener, or a whole CLB, that is
// already gone answers a generic code. The operations read it again and
// count absence as success, and only absence.
func TestDeleteListenerGoneIsDone(t *testing.T) {
	env := newCLBEnv(t)
	o := newTestOps(env)
	ctx := context.Background()
	id := env.addLB(testVPC, nil)
	kept := env.addListener(id, "TCP-80", "TCP", 80)
	lb := &loadBalancer{id: id}

	if err := o.deleteListener(ctx, lb, &listener{id: "lbl-gone0001", name: "TCP-81"}); err != nil {
		t.Errorf("a listener already gone: %v", err)
	}
	env.fail("DeleteListener", "InvalidParameter", 1)
	if err := o.deleteListener(ctx, lb, &listener{id: kept, name: "TCP-80"}); err == nil || !strings.Contains(err.Error(), "[InvalidParameter] ") {
		t.Errorf("a listener still there: %v, want the API's error", err)
	}
	if err := o.deleteListener(ctx, &loadBalancer{id: "lb-gone0001"}, &listener{id: "lbl-x", name: "TCP-82"}); err != nil {
		t.Errorf("a CLB already gone: %v", err)
	}
	if n := env.count("DescribeListeners"); n != 3 {
		t.Errorf("DescribeListeners calls = %d, want one per failed delete", n)
	}
}

// TestCreateReplayWaitsOnStatus: a replayed ClientToken answers the first
// create's ids and starts no task, so its RequestId finds none; the
// operations then use the CLB's Status.
func TestCreateReplayWaitsOnStatus(t *testing.T) {
	env := newCLBEnv(t)
	o := newTestOps(env)
	spec := testSpec(onlyTCP80)
	mustEnsure(t, o, spec)
	first := env.lbIDs()[0]
	env.resetCalls()

	lb, err := o.create(context.Background(), spec) // the same token: a replay
	if err != nil || lb == nil || lb.id != first {
		t.Fatalf("create = %v, %v; want %s", lb, err, first)
	}
	if got := env.actions(); !slices.Equal(got, []string{"CreateLoadBalancer", "DescribeTaskStatus", "DescribeLoadBalancers"}) {
		t.Errorf("calls = %v", got)
	}
	if len(env.lbIDs()) != 1 {
		t.Errorf("CLBs = %v, want one", env.lbIDs())
	}
}

// TestHealthCheckNullsMakeNoWrites: CheckPort, HttpCode, HttpCheckPath,
// HttpCheckDomain, HttpCheckMethod and HttpVersion "may be returned as
// null" (HealthCheck in clb@v1.3.105 models.go). Null is "unknown": an
// unchanged resync makes no write and finds no drift.
func TestHealthCheckNullsMakeNoWrites(t *testing.T) {
	env := newCLBEnvWith(t, func(o *cloudsim.Options) { o.Tencent.CLBNullHealthCheckFields = true })
	o := newTestOps(env)
	spec := testSpec(func(s *Desired) {
		s.HealthCheck.Protocol, s.HealthCheck.Port, s.HealthCheck.Path = lbspec.HealthCheckHTTP, 31999, "/healthz"
	})
	mustEnsure(t, o, spec)
	env.resetCalls()
	mustEnsure(t, o, spec)
	if w := env.writes(); len(w) != 0 {
		t.Fatalf("an unchanged resync wrote %v", w)
	}
	if d, err := o.Drift(context.Background(), spec); err != nil || d != nil {
		t.Fatalf("drift = %v, %v", d, err)
	}
}

func TestHealthCheckUnknownAndCase(t *testing.T) {
	want := wantHealthCheck(lbspec.HealthCheck{Enabled: true, Protocol: lbspec.HealthCheckHTTP, Path: "/healthz", Port: 31999,
		Interval: 5 * time.Second, Timeout: 2 * time.Second, HealthyThreshold: 3, UnhealthyThreshold: 3}, lbspec.TCP)
	base := func(mod func(*clb.HealthCheck)) *clb.HealthCheck {
		h := &clb.HealthCheck{HealthSwitch: common.Int64Ptr(1), CheckType: common.StringPtr("HTTP"), TimeOut: common.Int64Ptr(2),
			IntervalTime: common.Int64Ptr(5), HealthNum: common.Int64Ptr(3), UnHealthNum: common.Int64Ptr(3),
			CheckPort: common.Int64Ptr(31999), HttpCode: common.Int64Ptr(2), HttpCheckPath: common.StringPtr("/healthz"),
			HttpCheckDomain: common.StringPtr("localhost"), HttpCheckMethod: common.StringPtr("GET"), HttpVersion: common.StringPtr("HTTP/1.1")}
		if mod != nil {
			mod(h)
		}
		return h
	}
	tests := []struct {
		name string
		in   *clb.HealthCheck
		same bool
	}{
		{"as sent", base(nil), true},
		{"every nullable field null", base(func(h *clb.HealthCheck) {
			h.CheckPort, h.HttpCode, h.HttpCheckPath, h.HttpCheckDomain, h.HttpCheckMethod, h.HttpVersion = nil, nil, nil, nil, nil, nil
		}), true},
		{"other case", base(func(h *clb.HealthCheck) {
			h.CheckType, h.HttpCheckMethod, h.HttpVersion, h.HttpCheckDomain = common.StringPtr("http"), common.StringPtr("get"), common.StringPtr("http/1.1"), common.StringPtr("LocalHost")
		}), true},
		{"a known field differs", base(func(h *clb.HealthCheck) { h.HttpCode = common.Int64Ptr(31) }), false},
		{"a known path differs", base(func(h *clb.HealthCheck) { h.HttpCheckPath = common.StringPtr("/") }), false},
		{"a never-null field differs", base(func(h *clb.HealthCheck) { h.IntervalTime = common.Int64Ptr(10) }), false},
	}
	for _, tc := range tests {
		got := healthCheckFromSDK(tc.in, "TCP")
		if got.equal(want) != tc.same || want.equal(got) != tc.same {
			t.Errorf("%s: equal = %v, want %v (%s vs %s)", tc.name, !tc.same, tc.same, got, want)
		}
	}
	if s := healthCheckFromSDK(base(func(h *clb.HealthCheck) { h.HttpCode, h.CheckPort = nil, nil }), "TCP").String(); !strings.Contains(s, "HTTP on ? ") || !strings.Contains(s, "codes ?") {
		t.Errorf("String() = %q, want unknown fields shown as ?", s)
	}
}

// TestBatchPartialFailure: BatchRegisterTargets can fail for some listeners
// (FailListenerIdSet, with a Message) and bind the others. The operations
// retry the failed listeners once, and never count them as done: a second
// failure fails the reconcile with the API's message.
func TestBatchPartialFailure(t *testing.T) {
	env := newCLBEnv(t)
	o := newTestOps(env)
	spec := testSpec()
	mustEnsure(t, o, spec)
	id := env.lbIDs()[0]
	lis := env.listener(id, "TCP-443")
	more := testSpec(withBackends("ins-00000001", "ins-00000002", "ins-00000003"))

	// Once: retried at once, and done.
	failBind(t, env, *lis.ListenerId, 1)
	mustEnsure(t, o, more)
	if got := env.targetsOf(id, "TCP-443"); len(got) != 3 {
		t.Fatalf("TCP-443 targets after a retried partial failure = %v", got)
	}
	if n := env.count("BatchRegisterTargets"); n != 3 { // spec, more, the retry
		t.Errorf("BatchRegisterTargets calls = %d, want 3", n)
	}

	// Twice: the reconcile fails naming the listener and the message; the
	// other listeners got their targets; the next reconcile finishes.
	failBind(t, env, *lis.ListenerId, 2)
	four := testSpec(withBackends("ins-00000001", "ins-00000002", "ins-00000003", "ins-00000004"))
	_, err := o.Ensure(context.Background(), four)
	if err == nil || !strings.Contains(err.Error(), "failed twice for listeners TCP-443 ("+*lis.ListenerId+"): ") ||
		!strings.Contains(err.Error(), "RS quota of the listener is full") {
		t.Fatalf("Ensure = %v", err)
	}
	if got := env.targetsOf(id, "TCP-80"); len(got) != 4 {
		t.Errorf("TCP-80 targets = %v, want the 4 bound despite the other listener's failure", got)
	}
	if got := env.targetsOf(id, "TCP-443"); len(got) != 3 {
		t.Errorf("TCP-443 targets = %v, want 3 (not claimed done)", got)
	}
	if d, _ := o.Drift(context.Background(), four); len(d) != 1 || !strings.Contains(d[0], "TCP-443: target ins-00000004") {
		t.Errorf("drift = %v, want the missing target", d)
	}
	mustEnsure(t, o, four)
	if got := env.targetsOf(id, "TCP-443"); len(got) != 4 {
		t.Errorf("TCP-443 targets after the next reconcile = %v", got)
	}
}

// failBind makes the next times BatchRegisterTargets calls fail for the
// listener (FailListenerIdSet), with the message the tests look for.
func failBind(t *testing.T, env *clbEnv, listenerID string, times int) {
	t.Helper()
	if err := env.sim.Tencent().CLB().FailBindings(tencent.BindFailure{ListenerID: listenerID, Message: "RS quota of the listener is full", Times: times}); err != nil {
		t.Fatal(err)
	}
}
