package clbops

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccm/internal/lb/lbspec"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

const (
	testVPC    = "vpc-test0001"
	testSubnet = "subnet-test0001"
)

func newTestOps(env *clbEnv) *Ops {
	return New(env.api, Config{VpcID: testVPC, Timing: Timing{
		TaskPoll: time.Millisecond, TaskPollMax: time.Millisecond, TaskTimeout: 5 * time.Second,
		RetryBackoff: time.Millisecond, RetryBackoffMax: time.Millisecond, RetryTimeout: 5 * time.Second,
	}})
}

type specOpt func(*Desired)

func testSpec(opts ...specOpt) *Desired {
	s := &Desired{Spec: lbspec.Spec{
		Ref:         lbspec.Ref{Service: types.NamespacedName{Namespace: "default", Name: "web"}, UID: "uid-1"},
		ClusterName: "kubernetes",
		Name:        "kubernetes-default-web",
		Listeners: []lbspec.Listener{
			{Protocol: lbspec.TCP, Port: 80, NodePort: 30080},
			{Protocol: lbspec.TCP, Port: 443, NodePort: 30443},
			{Protocol: lbspec.UDP, Port: 53, NodePort: 30053},
		},
		Backends: []lbspec.Backend{{NodeName: "n1", InstanceID: "ins-00000001"}, {NodeName: "n2", InstanceID: "ins-00000002"}},
		HealthCheck: lbspec.HealthCheck{Enabled: true, Protocol: lbspec.HealthCheckTCP, Path: "/healthz",
			Interval: 5 * time.Second, Timeout: 2 * time.Second, HealthyThreshold: 3, UnhealthyThreshold: 3},
	}}
	for _, o := range opts {
		o(s)
	}
	return s
}

func withBackends(ids ...string) specOpt {
	return func(s *Desired) {
		s.Backends = nil
		for i, id := range ids {
			s.Backends = append(s.Backends, lbspec.Backend{NodeName: fmt.Sprintf("n%d", i), InstanceID: id})
		}
	}
}

func withAdopt(id string) specOpt { return func(s *Desired) { s.AdoptID = id } }

func withUID(uid string) specOpt { return func(s *Desired) { s.UID = types.UID(uid) } }

func onlyTCP80(s *Desired) { s.Listeners = s.Listeners[:1] }

func mustEnsure(t *testing.T, o *Ops, spec *Desired) *corev1.LoadBalancerStatus {
	t.Helper()
	st, err := o.Ensure(context.Background(), spec)
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	return st
}

func TestEnsureCreatesAndResyncWritesNothing(t *testing.T) {
	env := newCLBEnv(t)
	o := newTestOps(env)
	st := mustEnsure(t, o, testSpec())

	if len(env.lbIDs()) != 1 {
		t.Fatalf("CLBs = %v, want one", env.lbIDs())
	}
	id := env.lbIDs()[0]
	if want := []corev1.LoadBalancerIngress{{IP: env.lb(id).VIP}}; !reflect.DeepEqual(st.Ingress, want) {
		t.Errorf("status = %+v, want %+v", st.Ingress, want)
	}
	create := env.creates()[0]
	if *create.LoadBalancerType != "OPEN" || *create.VpcId != testVPC || *create.Forward != 1 || *create.LoadBalancerName != "kubernetes-default-web" {
		t.Errorf("CreateLoadBalancer = %s", create.ToJsonString())
	}
	if *create.ClientToken != "ccmkit-uid-1-0" {
		t.Errorf("ClientToken = %q, want ccmkit-uid-1-0", *create.ClientToken)
	}
	tags := map[string]string{}
	for _, tg := range create.Tags {
		tags[*tg.TagKey] = *tg.TagValue
	}
	if want := map[string]string{TagServiceUID: "uid-1", TagService: "default/web", TagCluster: "kubernetes"}; !reflect.DeepEqual(tags, want) {
		t.Errorf("tags = %v, want %v", tags, want)
	}
	if got, want := env.listenerNames(id), []string{"TCP-443:TCP/443", "TCP-80:TCP/80", "UDP-53:UDP/53"}; !reflect.DeepEqual(got, want) {
		t.Errorf("listeners = %v, want %v", got, want)
	}
	// TCP listeners share settings: one CreateListener; UDP another.
	if n := env.count("CreateListener"); n != 2 {
		t.Errorf("CreateListener calls = %d, want 2", n)
	}
	if n := env.count("BatchRegisterTargets"); n != 1 {
		t.Errorf("BatchRegisterTargets calls = %d, want 1", n)
	}
	// Fresh listeners have no targets: no DescribeTargets needed.
	if n := env.count("DescribeTargets"); n != 0 {
		t.Errorf("DescribeTargets calls on create = %d, want 0", n)
	}
	for _, l := range []string{"TCP-80", "TCP-443", "UDP-53"} {
		if got, want := env.targetsOf(id, l), []string{"ins-00000001:" + map[string]string{"TCP-80": "30080", "TCP-443": "30443", "UDP-53": "30053"}[l], "ins-00000002:" + map[string]string{"TCP-80": "30080", "TCP-443": "30443", "UDP-53": "30053"}[l]}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s targets = %v, want %v", l, got, want)
		}
	}
	hc := env.listener(id, "TCP-80").HealthCheck
	if *hc.CheckType != "TCP" || hc.CheckPort != nil || *hc.IntervalTime != 5 || *hc.TimeOut != 2 {
		t.Errorf("TCP-80 health check = %+v, want TCP on the target port every 5s, timeout 2s", hc)
	}
	if *env.listener(id, "UDP-53").HealthCheck.CheckType != "PING" {
		t.Errorf("UDP-53 health check type = %s, want PING", *env.listener(id, "UDP-53").HealthCheck.CheckType)
	}

	// An unchanged resync reads three times and writes nothing.
	env.resetCalls()
	mustEnsure(t, o, testSpec())
	if w := env.writes(); len(w) != 0 {
		t.Errorf("unchanged resync wrote: %v", w)
	}
	if got, want := env.actions(), []string{"DescribeLoadBalancers", "DescribeListeners", "DescribeTargets"}; !reflect.DeepEqual(got, want) {
		t.Errorf("unchanged resync calls = %v, want %v", got, want)
	}
}

func TestEnsureInternal(t *testing.T) {
	env := newCLBEnv(t)
	o := newTestOps(env)
	mustEnsure(t, o, testSpec(func(s *Desired) { s.Internal, s.SubnetID = true, testSubnet }))
	create := env.creates()[0]
	if *create.LoadBalancerType != "INTERNAL" || *create.SubnetId != testSubnet {
		t.Errorf("CreateLoadBalancer = %s, want INTERNAL in %s", create.ToJsonString(), testSubnet)
	}
	// The Service now asks for public: refused, nothing written.
	env.resetCalls()
	_, err := o.Ensure(context.Background(), testSpec())
	if err == nil || !strings.Contains(err.Error(), "is INTERNAL but the Service asks for OPEN") {
		t.Errorf("err = %v, want a type mismatch", err)
	}
	if w := env.writes(); len(w) != 0 {
		t.Errorf("type mismatch wrote: %v", w)
	}
}

func TestEnsureChanges(t *testing.T) {
	tests := []struct {
		name       string
		change     specOpt
		wantWrites []string
		check      func(t *testing.T, env *clbEnv, id string)
	}{
		{"port added", func(s *Desired) {
			s.Listeners = append(s.Listeners, lbspec.Listener{Protocol: lbspec.TCP, Port: 8080, NodePort: 30808})
		}, []string{"CreateListener", "BatchRegisterTargets"}, func(t *testing.T, env *clbEnv, id string) {
			if got := env.targetsOf(id, "TCP-8080"); !reflect.DeepEqual(got, []string{"ins-00000001:30808", "ins-00000002:30808"}) {
				t.Errorf("TCP-8080 targets = %v", got)
			}
		}},
		{"port removed", func(s *Desired) { s.Listeners = s.Listeners[:2] },
			[]string{"DeleteListener"}, func(t *testing.T, env *clbEnv, id string) {
				if got := env.listenerNames(id); !reflect.DeepEqual(got, []string{"TCP-443:TCP/443", "TCP-80:TCP/80"}) {
					t.Errorf("listeners = %v", got)
				}
			}},
		{"node added", withBackends("ins-00000001", "ins-00000002", "ins-00000003"),
			[]string{"BatchRegisterTargets"}, func(t *testing.T, env *clbEnv, id string) {
				if got := env.targetsOf(id, "TCP-80"); len(got) != 3 {
					t.Errorf("TCP-80 targets = %v, want 3", got)
				}
			}},
		{"node replaced: register first, then deregister", withBackends("ins-00000002", "ins-00000003"),
			[]string{"BatchRegisterTargets", "BatchDeregisterTargets"}, func(t *testing.T, env *clbEnv, id string) {
				if got := env.targetsOf(id, "UDP-53"); !reflect.DeepEqual(got, []string{"ins-00000002:30053", "ins-00000003:30053"}) {
					t.Errorf("UDP-53 targets = %v", got)
				}
			}},
		{"NodePort changed", func(s *Desired) { s.Listeners[0].NodePort = 31080 },
			[]string{"BatchRegisterTargets", "BatchDeregisterTargets"}, func(t *testing.T, env *clbEnv, id string) {
				if got := env.targetsOf(id, "TCP-80"); !reflect.DeepEqual(got, []string{"ins-00000001:31080", "ins-00000002:31080"}) {
					t.Errorf("TCP-80 targets = %v", got)
				}
			}},
		{"externalTrafficPolicy Local", func(s *Desired) {
			s.HealthCheck.Protocol, s.HealthCheck.Port = lbspec.HealthCheckHTTP, 32000
		}, []string{"ModifyListener", "ModifyListener"}, func(t *testing.T, env *clbEnv, id string) {
			hc := env.listener(id, "TCP-80").HealthCheck
			if *hc.CheckType != "HTTP" || *hc.CheckPort != 32000 || *hc.HttpCheckPath != "/healthz" || *hc.HttpCheckMethod != "GET" || *hc.HttpCode != 2 || *hc.HttpVersion != "HTTP/1.1" || *hc.HttpCheckDomain == "" {
				t.Errorf("TCP-80 health check = %+v", hc)
			}
			// UDP cannot HTTP-check: it keeps PING and is not modified.
			if *env.listener(id, "UDP-53").HealthCheck.CheckType != "PING" {
				t.Error("UDP-53 health check changed")
			}
		}},
		{"session affinity", func(s *Desired) {
			s.SessionAffinity = lbspec.SessionAffinity{ClientIP: true, Timeout: time.Hour}
		}, []string{"ModifyListener", "ModifyListener", "ModifyListener"}, func(t *testing.T, env *clbEnv, id string) {
			if got := *env.listener(id, "TCP-443").SessionExpireTime; got != 3600 {
				t.Errorf("SessionExpireTime = %d, want 3600", got)
			}
		}},
		{"health check off", func(s *Desired) { s.HealthCheck.Enabled = false },
			[]string{"ModifyListener", "ModifyListener", "ModifyListener"}, func(t *testing.T, env *clbEnv, id string) {
				if got := *env.listener(id, "TCP-80").HealthCheck.HealthSwitch; got != 0 {
					t.Errorf("HealthSwitch = %d, want 0", got)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newCLBEnv(t)
			o := newTestOps(env)
			mustEnsure(t, o, testSpec())
			env.resetCalls()
			mustEnsure(t, o, testSpec(tc.change))
			if got := env.writes(); !reflect.DeepEqual(got, tc.wantWrites) {
				t.Errorf("writes = %v, want %v", got, tc.wantWrites)
			}
			tc.check(t, env, env.lbIDs()[0])
			// And converged: the next resync writes nothing.
			env.resetCalls()
			mustEnsure(t, o, testSpec(tc.change))
			if w := env.writes(); len(w) != 0 {
				t.Errorf("resync after the change wrote: %v", w)
			}
		})
	}
}

func TestEnsureRetriesBusyCLB(t *testing.T) {
	env := newCLBEnv(t)
	o := newTestOps(env)
	env.fail("CreateListener", codeResourceInOperating, 2)
	env.fail("BatchRegisterTargets", codeRequestLimit, 1)
	mustEnsure(t, o, testSpec())
	if n := env.count("CreateListener"); n != 4 {
		t.Errorf("CreateListener calls = %d, want 4 (2 refused, 2 applied)", n)
	}
	if n := env.count("BatchRegisterTargets"); n != 2 {
		t.Errorf("BatchRegisterTargets calls = %d, want 2 (1 throttled, 1 applied)", n)
	}
	if got := env.listenerNames(env.lbIDs()[0]); len(got) != 3 {
		t.Errorf("listeners = %v", got)
	}
}

func TestEnsureErrors(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(env *clbEnv)
		spec    *Desired
		wantErr string
	}{
		{"task status 1 is a failure", func(env *clbEnv) { env.failTask("CreateListener", "LimitExceeded") },
			testSpec(), "(listeners TCP-80, TCP-443): asynchronous task failed: task "},
		{"other errors are not retried", func(env *clbEnv) { env.fail("CreateLoadBalancer", "LimitExceeded", 1) },
			testSpec(), "CreateLoadBalancer on Service default/web (name \"kubernetes-default-web\", OPEN): [LimitExceeded] "},
		{"source ranges without the VPC API are refused before any call", nil,
			testSpec(func(s *Desired) { s.SourceRanges = []string{"10.0.0.0/8"} }), "loadBalancerSourceRanges and the security-groups annotation need the VPC API"},
		{"internal without subnet", nil,
			testSpec(func(s *Desired) { s.Internal = true }), "an internal CLB needs a subnet"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newCLBEnv(t)
			if tc.setup != nil {
				tc.setup(env)
			}
			_, err := newTestOps(env).Ensure(context.Background(), tc.spec)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if !strings.HasPrefix(err.Error(), "clbops.Ensure: Service default/web: ") {
				t.Errorf("err = %q, want it to name the operation and the Service", err)
			}
		})
	}
}

// A CCM killed right after CreateLoadBalancer finds the CLB by its tag
// (still being created) and never creates a second.
func TestEnsureAfterRestartMidCreate(t *testing.T) {
	// 2 s: the CLB must still be creating when the test looks, however
	// long a loaded machine takes to get there.
	env := newCLBEnvWith(t, func(o *cloudsim.Options) { o.Tencent.TaskLatency = 2 * time.Second })
	o := newTestOps(env)
	// The "previous CCM" creates and dies before waiting.
	req := clb.NewCreateLoadBalancerRequest()
	req.LoadBalancerType, req.VpcId, req.ClientToken = common.StringPtr("OPEN"), common.StringPtr(testVPC), common.StringPtr(clientToken("uid-1", 0))
	req.Tags = []*clb.TagInfo{{TagKey: common.StringPtr(TagServiceUID), TagValue: common.StringPtr("uid-1")}}
	if _, err := env.own.CreateLoadBalancerWithContext(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if st := env.lb(env.lbIDs()[0]).Status; st != lbCreating {
		t.Fatalf("CLB status %d right after the create, want %d (creating)", st, lbCreating)
	}
	mustEnsure(t, o, testSpec())
	if n := env.count("CreateLoadBalancer"); n != 0 {
		t.Errorf("CreateLoadBalancer calls = %d, want only the first CCM's", n)
	}
	if len(env.lbIDs()) != 1 {
		t.Errorf("CLBs = %v, want exactly one", env.lbIDs())
	}
}

// A CLB still being created when waiting gives up asks for a quick retry.
func TestEnsureRetryErrorWhileCreating(t *testing.T) {
	env := newCLBEnvWith(t, func(o *cloudsim.Options) { o.Tencent.TaskLatency = time.Minute })
	o := newTestOps(env)
	o.timing.TaskTimeout = 20 * time.Millisecond
	req := clb.NewCreateLoadBalancerRequest()
	req.LoadBalancerType, req.VpcId = common.StringPtr("OPEN"), common.StringPtr(testVPC)
	req.Tags = []*clb.TagInfo{{TagKey: common.StringPtr(TagServiceUID), TagValue: common.StringPtr("uid-1")}}
	if _, err := env.own.CreateLoadBalancerWithContext(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	_, err := o.Ensure(context.Background(), testSpec())
	var re *api.RetryError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want an api.RetryError", err)
	}
}

// After its CLB was deleted behind our back, a Service's first client token
// answers with the dead CLB; the next generation creates a new one.
func TestEnsureRecreatesWithNextToken(t *testing.T) {
	env := newCLBEnv(t)
	o := newTestOps(env)
	mustEnsure(t, o, testSpec())
	first := env.lbIDs()[0]
	if err := o.Delete(context.Background(), testSpec()); err != nil {
		t.Fatal(err)
	}
	mustEnsure(t, o, testSpec())
	ids := env.lbIDs()
	if len(ids) != 1 || ids[0] == first {
		t.Fatalf("CLBs = %v, want one new CLB (not %s)", ids, first)
	}
	var tokens []string
	for _, c := range env.creates() {
		tokens = append(tokens, *c.ClientToken)
	}
	// The first create, its replay answering with the deleted CLB, the next generation.
	if want := []string{"ccmkit-uid-1-0", "ccmkit-uid-1-0", "ccmkit-uid-1-1"}; !reflect.DeepEqual(tokens, want) {
		t.Errorf("tokens = %v, want %v", tokens, want)
	}
}

func TestDeleteCreated(t *testing.T) {
	env := newCLBEnv(t)
	o := newTestOps(env)
	mustEnsure(t, o, testSpec())
	if err := o.Delete(context.Background(), testSpec()); err != nil {
		t.Fatal(err)
	}
	if len(env.lbIDs()) != 0 {
		t.Errorf("CLBs after delete = %v", env.lbIDs())
	}
	env.resetCalls()
	if err := o.Delete(context.Background(), testSpec()); err != nil {
		t.Fatal(err)
	}
	if w := env.writes(); len(w) != 0 {
		t.Errorf("deleting a deleted CLB wrote: %v", w)
	}
	if _, exists, err := o.Get(context.Background(), testSpec()); err != nil || exists {
		t.Errorf("Get after delete = exists %v, err %v", exists, err)
	}
}

func TestAdopt(t *testing.T) {
	env := newCLBEnv(t)
	o := newTestOps(env)
	existing := env.addLB(testVPC, map[string]string{"team": "web"})
	foreign := env.addListener(existing, "hand-made", "TCP", 8080)
	// A listener named like ours on a created CLB, but without our UID: foreign here.
	env.addListener(existing, "TCP-9090", "TCP", 9090)

	spec := testSpec(withAdopt(existing), onlyTCP80)
	st := mustEnsure(t, o, spec)
	if st.Ingress[0].IP != env.lb(existing).VIP {
		t.Errorf("status = %+v", st)
	}
	if n := env.count("CreateLoadBalancer"); n != 0 {
		t.Errorf("CreateLoadBalancer calls = %d, want 0", n)
	}
	want := []string{"TCP-80-uid-1:TCP/80", "TCP-9090:TCP/9090", "hand-made:TCP/8080"}
	if got := env.listenerNames(existing); !reflect.DeepEqual(got, want) {
		t.Errorf("listeners = %v, want %v", got, want)
	}

	// A second Service adopts the same CLB; each keeps to its own.
	other := testSpec(withAdopt(existing), withUID("uid-2"), func(s *Desired) {
		s.Listeners = []lbspec.Listener{{Protocol: lbspec.TCP, Port: 81, NodePort: 30081}}
	})
	mustEnsure(t, o, other)
	env.resetCalls()
	mustEnsure(t, o, spec)
	mustEnsure(t, o, other)
	if w := env.writes(); len(w) != 0 {
		t.Errorf("resync of two adopters wrote: %v", w)
	}

	// Deleting the first Service removes only its listener, never the CLB.
	if err := o.Delete(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	want = []string{"TCP-81-uid-2:TCP/81", "TCP-9090:TCP/9090", "hand-made:TCP/8080"}
	if got := env.listenerNames(existing); !reflect.DeepEqual(got, want) {
		t.Errorf("listeners after delete = %v, want %v", got, want)
	}
	if n := env.count("DeleteLoadBalancer"); n != 0 || len(env.lbIDs()) != 1 {
		t.Errorf("the adopted CLB was deleted")
	}
	if env.listener(existing, "hand-made") == nil || *env.listener(existing, "hand-made").ListenerId != foreign {
		t.Error("the foreign listener was touched")
	}
}

func TestAdoptRefusals(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(env *clbEnv, o *Ops) string // returns the id of the CLB to adopt
		wantErr func(env *clbEnv, id string) string
	}{
		{"missing", func(*clbEnv, *Ops) string { return "lb-missing0" },
			func(*clbEnv, string) string {
				return "CLB lb-missing0 named by annotation service.kubernetes.io/tke-existed-lbid does not exist"
			}},
		{"other VPC", func(env *clbEnv, _ *Ops) string { return env.addLB("vpc-other001", nil) },
			func(*clbEnv, string) string { return `is in VPC "vpc-other001", not the cluster's VPC` }},
		{"created for another Service", func(env *clbEnv, _ *Ops) string {
			return env.addLB(testVPC, map[string]string{TagServiceUID: "uid-9", TagService: "shop/cart"})
		}, func(*clbEnv, string) string { return "was created by this CCM for Service shop/cart (uid uid-9)" }},
		{"port taken by a foreign listener", func(env *clbEnv, _ *Ops) string {
			id := env.addLB(testVPC, nil)
			env.addListener(id, "legacy", "TCP", 80)
			return id
		}, func(env *clbEnv, id string) string {
			return `port 80/TCP is used by listener ` + *env.listener(id, "legacy").ListenerId + ` ("legacy"), which this Service does not own`
		}},
		{"already has its own CLB", func(env *clbEnv, o *Ops) string {
			id := env.addLB(testVPC, nil)
			mustEnsureQuiet(o, testSpec())
			return id
		}, func(env *clbEnv, id string) string {
			own := slices.DeleteFunc(env.lbIDs(), func(x string) bool { return x == id })
			return "the Service already has CLB " + strings.Join(own, ",") + ", created for it; it cannot also adopt " + id
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newCLBEnv(t)
			o := newTestOps(env)
			id := tc.setup(env, o)
			env.resetCalls()
			_, err := o.Ensure(context.Background(), testSpec(withAdopt(id)))
			if want := tc.wantErr(env, id); err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v, want %q", err, want)
			}
			if w := env.writes(); len(w) != 0 {
				t.Errorf("refused adoption wrote: %v", w)
			}
		})
	}
}

func mustEnsureQuiet(o *Ops, spec *Desired) {
	if _, err := o.Ensure(context.Background(), spec); err != nil {
		panic(err)
	}
}

// Adopting the CLB that was created for the Service itself is harmless.
func TestAdoptOwnCLB(t *testing.T) {
	env := newCLBEnv(t)
	o := newTestOps(env)
	mustEnsure(t, o, testSpec())
	id := env.lbIDs()[0]
	env.resetCalls()
	mustEnsure(t, o, testSpec(withAdopt(id)))
	if w := env.writes(); len(w) != 0 {
		t.Errorf("wrote: %v", w)
	}
	if err := o.Delete(context.Background(), testSpec(withAdopt(id))); err != nil {
		t.Fatal(err)
	}
	if len(env.lbIDs()) != 0 {
		t.Error("a CLB created for the Service must be deleted with it")
	}
}

func TestUpdateDoesNotCreate(t *testing.T) {
	env := newCLBEnv(t)
	err := newTestOps(env).Update(context.Background(), testSpec())
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if w := env.writes(); len(w) != 0 {
		t.Errorf("Update wrote: %v", w)
	}
}

func TestDuplicateTaggedCLBs(t *testing.T) {
	env := newCLBEnv(t)
	a := env.addLB(testVPC, map[string]string{TagServiceUID: "uid-1"})
	b := env.addLB(testVPC, map[string]string{TagServiceUID: "uid-1"})
	_, err := newTestOps(env).Ensure(context.Background(), testSpec())
	if err == nil || !strings.Contains(err.Error(), "2 CLBs carry tag ccmkit.io/service-uid=uid-1 (") ||
		!strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), b) {
		t.Fatalf("err = %v", err)
	}
}

func TestTargetsFallbackAndChunks(t *testing.T) {
	env := newCLBEnv(t)
	// An account without the batch actions.
	env.fail("BatchRegisterTargets", codeInvalidAction, 0)
	env.fail("BatchDeregisterTargets", codeInvalidAction, 0)
	o := newTestOps(env)
	var ids []string
	for i := range 45 {
		ids = append(ids, fmt.Sprintf("ins-b%07d", i))
	}
	env.addInstances(ids...)
	mustEnsure(t, o, testSpec(onlyTCP80, withBackends(ids...)))
	// 45 targets on one listener: 20 + 20 + 5.
	if n := env.count("RegisterTargets"); n != 3 {
		t.Errorf("RegisterTargets calls = %d, want 3", n)
	}
	if got := env.targetsOf(env.lbIDs()[0], "TCP-80"); len(got) != 45 {
		t.Errorf("targets = %d, want 45", len(got))
	}
	mustEnsure(t, o, testSpec(onlyTCP80, withBackends(ids[:1]...)))
	if n := env.count("DeregisterTargets"); n != 3 {
		t.Errorf("DeregisterTargets calls = %d, want 3", n)
	}
}

func TestBatchChunks(t *testing.T) {
	// An account whose target quota was raised (by ticket) to 300.
	env := newCLBEnvWith(t, func(o *cloudsim.Options) { o.Tencent.CLBTargetQuota = 300 })
	o := newTestOps(env)
	var ids []string
	for i := range 300 {
		ids = append(ids, fmt.Sprintf("ins-b%07d", i))
	}
	env.addInstances(ids...)
	// 300 nodes x 2 TCP listeners = 600 targets: 500 + 100.
	mustEnsure(t, o, testSpec(withBackends(ids...), func(s *Desired) { s.Listeners = s.Listeners[:2] }))
	if n := env.count("BatchRegisterTargets"); n != 2 {
		t.Errorf("BatchRegisterTargets calls = %d, want 2", n)
	}
}

func TestDrift(t *testing.T) {
	env := newCLBEnv(t)
	o := newTestOps(env)
	mustEnsure(t, o, testSpec())
	id := env.lbIDs()[0]
	ctx := context.Background()

	if d, err := o.Drift(ctx, testSpec()); err != nil || d != nil {
		t.Fatalf("in sync: drift = %v, err %v", d, err)
	}
	// Behind the CCM's back: a listener deleted, a target removed.
	if err := env.sim.Tencent().CLB().DeleteListener(id, *env.listener(id, "TCP-443").ListenerId); err != nil {
		t.Fatal(err)
	}
	dereg := clb.NewDeregisterTargetsRequest()
	dereg.LoadBalancerId, dereg.ListenerId = common.StringPtr(id), env.listener(id, "TCP-80").ListenerId
	dereg.Targets = []*clb.Target{{InstanceId: common.StringPtr("ins-00000002"), Port: common.Int64Ptr(30080)}}
	if _, err := env.own.DeregisterTargetsWithContext(ctx, dereg); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, env, id)

	env.resetCalls()
	d, err := o.Drift(ctx, testSpec())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"listener TCP-443 missing", "listener TCP-80: target ins-00000002:30080 missing"}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("drift = %q, want %q", d, want)
	}
	if w := env.writes(); len(w) != 0 {
		t.Errorf("Drift wrote: %v", w)
	}
	mustEnsure(t, o, testSpec())
	if d, err := o.Drift(ctx, testSpec()); err != nil || d != nil {
		t.Errorf("after repair: drift = %v, err %v", d, err)
	}
}

func TestDriftAll(t *testing.T) {
	env := newCLBEnv(t)
	o := newTestOps(env)
	adopted := env.addLB(testVPC, nil)
	specs := []*Desired{
		testSpec(withUID("uid-a")),
		testSpec(withUID("uid-b")),
		testSpec(withUID("uid-c"), withAdopt(adopted), onlyTCP80),
	}
	for _, s := range specs {
		mustEnsure(t, o, s)
	}
	missing := testSpec(withUID("uid-missing"))
	specs = append(specs, missing)

	env.resetCalls()
	res := o.DriftAll(context.Background(), specs)
	for _, s := range specs[:3] {
		if r := res[s.UID]; r.Err != nil || r.Diffs != nil {
			t.Errorf("%s: %+v, want in sync", s.UID, r)
		}
	}
	if r := res["uid-missing"]; !reflect.DeepEqual(r.Diffs, []string{"load balancer missing"}) {
		t.Errorf("uid-missing: %+v", r)
	}
	// One lookup by tag for all, one for the adopted CLB, then two reads per CLB.
	if n := env.count("DescribeLoadBalancers"); n != 2 {
		t.Errorf("DescribeLoadBalancers calls = %d, want 2", n)
	}
	if n := env.count("DescribeListeners") + env.count("DescribeTargets"); n != 6 {
		t.Errorf("listener+target reads = %d, want 6", n)
	}
	if w := env.writes(); len(w) != 0 {
		t.Errorf("DriftAll wrote: %v", w)
	}
}

func TestHealthCheckNormalization(t *testing.T) {
	want := wantHealthCheck(lbspec.HealthCheck{Enabled: true, Protocol: lbspec.HealthCheckTCP,
		Interval: 5 * time.Second, Timeout: 2 * time.Second, HealthyThreshold: 3, UnhealthyThreshold: 3}, lbspec.TCP)
	tests := []struct {
		name string
		in   *clb.HealthCheck
		same bool
	}{
		{"nil answer is CLB's default", nil, true},
		{"CheckPort -1 means target port", &clb.HealthCheck{HealthSwitch: common.Int64Ptr(1), CheckType: common.StringPtr("tcp"), CheckPort: common.Int64Ptr(-1)}, true},
		{"HTTP fields ignored for TCP", &clb.HealthCheck{HealthSwitch: common.Int64Ptr(1), HttpCheckPath: common.StringPtr("/x")}, true},
		{"other port", &clb.HealthCheck{HealthSwitch: common.Int64Ptr(1), CheckPort: common.Int64Ptr(31000)}, false},
		{"off", &clb.HealthCheck{HealthSwitch: common.Int64Ptr(0)}, false},
		{"other interval", &clb.HealthCheck{IntervalTime: common.Int64Ptr(10)}, false},
	}
	for _, tc := range tests {
		if got := healthCheckFromSDK(tc.in, "TCP").equal(want); got != tc.same {
			t.Errorf("%s: equal = %v, want %v", tc.name, got, tc.same)
		}
	}
	if seconds(1500*time.Millisecond) != 2 {
		t.Error("seconds must round up")
	}
}

// Deleting must never be blocked by an adoption that Ensure would refuse.
func TestGetAndDeleteAreLenient(t *testing.T) {
	env := newCLBEnv(t)
	o := newTestOps(env)
	other := env.addLB(testVPC, map[string]string{TagServiceUID: "uid-9"})
	env.addListener(other, "TCP-80-uid-9", "TCP", 80)
	ctx := context.Background()
	for _, id := range []string{"lb-missing0", other} {
		ref := testSpec(withAdopt(id))
		if _, exists, err := o.Get(ctx, ref); err != nil || exists {
			t.Errorf("%s: Get = exists %v, err %v; want false, nil", id, exists, err)
		}
		if err := o.Delete(ctx, ref); err != nil {
			t.Errorf("%s: Delete: %v", id, err)
		}
	}
	if w := env.writes(); len(w) != 0 {
		t.Errorf("wrote: %v", w)
	}
	if got := env.listenerNames(other); len(got) != 1 {
		t.Errorf("another Service's listener was touched: %v", got)
	}
}

// waitIdle waits until no task runs on the CLB, so that the next write is
// not refused as busy.
func waitIdle(t *testing.T, env *clbEnv, id string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); env.lb(id).InOperation != ""; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("CLB %s still busy with %s", id, env.lb(id).InOperation)
		}
	}
}
