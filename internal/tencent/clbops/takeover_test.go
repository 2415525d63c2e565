package clbops

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"

	"github.com/ccmkit/ccm/internal/lb/lbkit"
	"github.com/ccmkit/ccm/internal/lb/lbspec"
	"github.com/ccmkit/ccm/internal/tencent/tcapi"
)

const testTKECluster = "cls-test0001"

// tkeEnv is a clbEnv with a recorded Tag API client.
type tkeEnv struct {
	*sgEnv
	tags *tcapi.TagClient
}

func newTKEEnv(t *testing.T) *tkeEnv {
	e := &tkeEnv{sgEnv: newSGEnv(t)}
	clients := tcapi.NewClients(tcapi.ClientOptions{Region: "ap-guangzhou", SecretID: simID, SecretKey: simKey,
		Endpoint: strings.TrimPrefix(e.url, "http://"), Scheme: "HTTP", Transport: e.clbEnv})
	var err error
	if e.tags, err = clients.Tag(); err != nil {
		t.Fatal(err)
	}
	return e
}

// ops returns Ops as the provider builds them, with lb_defaults tke when
// compat.
func (e *tkeEnv) ops(cluster string, compat bool) *Ops {
	o := e.sgEnv.ops()
	o.tagAPI, o.region, o.tkeClusterID, o.tkeCompat = e.tags, "ap-guangzhou", cluster, compat
	return o
}

// tkeCLB makes a CLB as TKE's service controller does, through the API:
// its two tags, no LoadBalancerPassToTarget (the API's default, false),
// one TKE-DEDICATED-LISTENER per port with the CLB's default health check,
// and the backends at each NodePort.
func (e *tkeEnv) tkeCLB(vpcID, cluster string, spec *Desired) string {
	e.t.Helper()
	ctx := context.Background()
	own := New(e.own, Config{VpcID: vpcID, Timing: Timing{TaskPoll: time.Millisecond, TaskPollMax: time.Millisecond, TaskTimeout: 5 * time.Second}})
	req := clb.NewCreateLoadBalancerRequest()
	req.LoadBalancerType, req.Forward, req.VpcId = common.StringPtr("OPEN"), common.Int64Ptr(1), common.StringPtr(vpcID)
	req.LoadBalancerName = common.StringPtr("tke-" + spec.Service.Name)
	req.Tags = []*clb.TagInfo{
		{TagKey: common.StringPtr(TagTKECreatedBy), TagValue: common.StringPtr("yes")},
		{TagKey: common.StringPtr(TagTKECluster), TagValue: common.StringPtr(cluster)},
	}
	resp, err := e.own.CreateLoadBalancerWithContext(ctx, req)
	if err != nil {
		e.t.Fatal(err)
	}
	id := *resp.Response.LoadBalancerIds[0]
	if _, err := own.waitTask(ctx, "CreateLoadBalancer", id, *resp.Response.RequestId, ""); err != nil {
		e.t.Fatal(err)
	}
	for _, l := range spec.Listeners {
		lreq := clb.NewCreateListenerRequest()
		lreq.LoadBalancerId, lreq.Protocol = common.StringPtr(id), common.StringPtr(string(l.Protocol))
		lreq.Ports, lreq.ListenerNames = common.Int64Ptrs([]int64{int64(l.Port)}), common.StringPtrs([]string{TKEListenerName})
		lresp, err := e.own.CreateListenerWithContext(ctx, lreq)
		if err != nil {
			e.t.Fatal(err)
		}
		if _, err := own.waitTask(ctx, "CreateListener", id, *lresp.Response.RequestId, ""); err != nil {
			e.t.Fatal(err)
		}
		if vpcID != testVPC {
			continue // the test's instances are in testVPC
		}
		treq := clb.NewBatchRegisterTargetsRequest()
		treq.LoadBalancerId = common.StringPtr(id)
		for _, b := range spec.Backends {
			treq.Targets = append(treq.Targets, &clb.BatchTarget{ListenerId: lresp.Response.ListenerIds[0], InstanceId: common.StringPtr(b.InstanceID),
				Port: common.Int64Ptr(int64(l.NodePort)), Weight: common.Int64Ptr(10)})
		}
		tresp, err := e.own.BatchRegisterTargetsWithContext(ctx, treq)
		if err != nil {
			e.t.Fatal(err)
		}
		if _, err := own.waitTask(ctx, "BatchRegisterTargets", id, *tresp.Response.RequestId, ""); err != nil {
			e.t.Fatal(err)
		}
	}
	return id
}

// tkeDefaults is spec as lb_defaults tke translates a plain Service: CLB's
// own TCP check of each NodePort, pass-to-target left alone.
func tkeDefaults(s *Desired) {
	s.HealthCheck.Protocol, s.HealthCheck.Port = lbspec.HealthCheckTCP, 0
	s.KeepPassToTarget = true
}

// ourDefaults: kube-proxy's /healthz, pass-to-target on.
func ourDefaults(s *Desired) {
	s.HealthCheck.Protocol, s.HealthCheck.Port, s.HealthCheck.Path = lbspec.HealthCheckHTTP, lbspec.KubeProxyHealthPort, "/healthz"
	s.PassToTarget = true
}

func withIncumbent(id string) specOpt { return func(s *Desired) { s.Incumbent = id } }

func tcpOnly(s *Desired) { s.Listeners = s.Listeners[:2] }

// planActions are a plan's write actions, sorted.
func planActions(p lbkit.Plan) []string {
	var out []string
	for _, w := range p.Writes {
		out = append(out, w.Action)
	}
	slices.Sort(out)
	return out
}

// syncWrites are the recorded write actions (the task polls are reads),
// sorted.
func (e *tkeEnv) syncWrites() []string {
	w := e.writes()
	slices.Sort(w)
	return w
}

func TestTakeOverTKE(t *testing.T) {
	tests := []struct {
		name    string
		compat  bool
		spec    specOpt
		wantW   []string // the first sync's writes, sorted
		ourTags bool
	}{
		{"our defaults: tags, pass-to-target and health checks change", false, ourDefaults,
			[]string{"AttachResourcesTag", "AttachResourcesTag", "AttachResourcesTag", "DeleteListener", "ModifyListener", "ModifyListener", "ModifyLoadBalancerAttributes"}, true},
		{"TKE's defaults: only TKE's stale listener goes", true, tkeDefaults, []string{"DeleteListener"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTKEEnv(t)
			ctx := context.Background()
			spec := testSpec(tcpOnly, tt.spec)
			id := e.tkeCLB(testVPC, testTKECluster, spec)
			// TKE's listener on a port the Service no longer has, and a
			// user's listener, on the same CLB.
			stale := e.addListener(id, TKEListenerName, "TCP", 9000)
			e.addListener(id, "user-8080", "TCP", 8080)
			before := e.lb(id)
			spec.Incumbent = id
			o := e.ops(testTKECluster, tt.compat)

			e.resetCalls()
			plan, err := o.Plan(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			if plan.Verdict != lbkit.VerdictTakeOver || plan.LoadBalancer != id || plan.Owner != OwnerTKE {
				t.Fatalf("plan = %+v, want take-over of %s from %s", plan, id, OwnerTKE)
			}
			if w := e.writes(); len(w) != 0 {
				t.Fatalf("Plan wrote %v", w)
			}
			if got := planActions(plan); !slices.Equal(got, tt.wantW) {
				t.Errorf("planned writes = %v, want %v", got, tt.wantW)
			}

			e.resetCalls()
			st := mustEnsure(t, o, spec)
			if got := e.syncWrites(); !slices.Equal(got, planActions(plan)) {
				t.Errorf("first sync wrote %v, the plan said %v", got, planActions(plan))
			}
			if ids := e.lbIDs(); !slices.Equal(ids, []string{id}) {
				t.Errorf("CLBs = %v, want only TKE's %s", ids, id)
			}
			if len(st.Ingress) != 1 || st.Ingress[0].IP != before.VIP {
				t.Errorf("status = %+v, want TKE's VIP %s", st.Ingress, before.VIP)
			}
			if got, want := e.listenerNames(id), []string{"TKE-DEDICATED-LISTENER:TCP/443", "TKE-DEDICATED-LISTENER:TCP/80", "user-8080:TCP/8080"}; !slices.Equal(got, want) {
				t.Errorf("listeners = %v, want %v (TKE's names kept, its stale %s gone, the user's kept)", got, want, stale)
			}
			after := e.lb(id)
			if after.Tags[TagTKECreatedBy] != "yes" || after.Tags[TagTKECluster] != testTKECluster {
				t.Errorf("TKE's tags = %v, want them kept", after.Tags)
			}
			_, tagged := after.Tags[TagServiceUID]
			if tagged != tt.ourTags {
				t.Errorf("tags = %v, want our tags: %t", after.Tags, tt.ourTags)
			}

			// Converged: the next sync writes nothing and plans nothing.
			e.resetCalls()
			mustEnsure(t, o, spec)
			if w := e.writes(); len(w) != 0 {
				t.Errorf("second sync wrote %v", w)
			}
			if p, err := o.Plan(ctx, spec); err != nil || len(p.Writes) != 0 {
				t.Errorf("second plan = %+v, %v; want no write", p, err)
			}
			if _, found, err := o.Get(ctx, spec); err != nil || !found {
				t.Errorf("Get = %t, %v; want found", found, err)
			}
			// Deleted with the Service, as TKE did.
			if err := o.Delete(ctx, spec); err != nil {
				t.Fatal(err)
			}
			if ids := e.lbIDs(); len(ids) != 0 {
				t.Errorf("CLBs after Delete = %v, want none", ids)
			}
		})
	}
}

func TestTakeOverRefused(t *testing.T) {
	tests := []struct {
		name          string
		vpc, cluster  string // the CLB's
		configCluster string
		ours          string // a ccmkit.io/service-uid tag instead of TKE's
		want          string
	}{
		{"another VPC", "vpc-other001", testTKECluster, testTKECluster, "", `is in VPC "vpc-other001", not the cluster's VPC`},
		{"another cluster", testVPC, "cls-other001", testTKECluster, "", `for cluster "cls-other001"`},
		{"no tke_cluster_id", testVPC, testTKECluster, "", "", "set tke_cluster_id"},
		{"another Service's CLB of ours", testVPC, "", testTKECluster, "uid-other", "belongs to Service default/other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTKEEnv(t)
			ctx := context.Background()
			spec := testSpec(onlyTCP80, tkeDefaults)
			var id string
			if tt.ours != "" {
				id = e.addLB(tt.vpc, map[string]string{TagServiceUID: tt.ours, TagService: "default/other"})
			} else {
				id = e.tkeCLB(tt.vpc, tt.cluster, spec)
			}
			spec.Incumbent = id
			o := e.ops(tt.configCluster, true)
			e.resetCalls()

			p, err := o.Plan(ctx, spec)
			if err != nil || p.Verdict != lbkit.VerdictRefuse || !strings.Contains(p.Reason, tt.want) || p.LoadBalancer != id {
				t.Errorf("plan = %+v, %v; want a refusal of %s saying %q", p, err, id, tt.want)
			}
			_, err = o.Ensure(ctx, spec)
			var refused *RefusalError
			if !errors.As(err, &refused) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "remove the annotation service.kubernetes.io/loadbalance-id") {
				t.Errorf("Ensure err = %v, want a refusal saying %q and how to get a new CLB", err, tt.want)
			}
			if w := e.writes(); len(w) != 0 {
				t.Errorf("refused Service wrote %v", w)
			}
			if ids := e.lbIDs(); !slices.Equal(ids, []string{id}) {
				t.Errorf("CLBs = %v, want only %s: nothing created in its place", ids, id)
			}
			// Not the Service's: not reported, not deleted with it.
			if _, found, err := o.Get(ctx, spec); err != nil || found {
				t.Errorf("Get = %t, %v; want not found", found, err)
			}
			if err := o.Delete(ctx, spec); err != nil {
				t.Fatal(err)
			}
			if ids := e.lbIDs(); !slices.Equal(ids, []string{id}) {
				t.Errorf("CLBs after Delete = %v, want %s kept", ids, id)
			}
		})
	}
}

// A CLB the annotation names that TKE did not make (no created-by tag) is
// not TKE's to hand over: the annotation is ignored, as before, and the
// Service gets a CLB of its own. One that is gone is the same.
func TestIncumbentNotTKEs(t *testing.T) {
	e := newTKEEnv(t)
	user := e.addLB(testVPC, map[string]string{"team": "web"})
	for _, incumbent := range []string{user, "lb-gone0001"} {
		spec := testSpec(onlyTCP80, withIncumbent(incumbent))
		o := e.ops(testTKECluster, false)
		p, err := o.Plan(context.Background(), spec)
		if err != nil || p.Verdict != lbkit.VerdictCreate || len(p.Writes) != 1 || p.Writes[0].Action != "CreateLoadBalancer" {
			t.Errorf("%s: plan = %+v, %v; want a creation", incumbent, p, err)
		}
		mustEnsure(t, o, spec)
		if err := o.Delete(context.Background(), spec); err != nil {
			t.Fatal(err)
		}
	}
	if ids := e.lbIDs(); !slices.Equal(ids, []string{user}) {
		t.Errorf("CLBs = %v, want the user's %s untouched", ids, user)
	}
	if tags := e.lb(user).Tags; !maps.Equal(tags, map[string]string{"team": "web"}) {
		t.Errorf("user's CLB tags = %v", tags)
	}
}

// The plan of a CLB of ours lists the writes its sync makes, step by step.
func TestPlanEqualsSync(t *testing.T) {
	tests := []struct {
		name     string
		from, to *Desired
	}{
		{"in sync", testSpec(), testSpec()},
		{"a port added and one removed", testSpec(), testSpec(func(s *Desired) {
			s.Listeners = []lbspec.Listener{{Protocol: lbspec.TCP, Port: 80, NodePort: 30080}, {Protocol: lbspec.TCP, Port: 8443, NodePort: 30843}, {Protocol: lbspec.UDP, Port: 53, NodePort: 30053}}
		})},
		{"health check and affinity changed", testSpec(), testSpec(ourDefaults, func(s *Desired) {
			s.SessionAffinity = lbspec.SessionAffinity{ClientIP: true, Timeout: time.Minute}
		})},
		{"backends replaced, no drain", testSpec(), testSpec(withBackends("ins-00000002", "ins-00000003", "ins-00000004"))},
		{"backends replaced, drained", testSpec(), testSpec(withBackends("ins-00000003"), func(s *Desired) { s.DrainPeriod = time.Minute })},
		{"weights", testSpec(), testSpec(func(s *Desired) { s.Backends[0].Weight = 50 })},
		{"pass-to-target", testSpec(withPassToTarget(true)), testSpec(withPassToTarget(false))},
		{"source ranges", testSpec(), testSpec(withRanges("10.0.0.0/8"))},
		{"source ranges removed", testSpec(withRanges("10.0.0.0/8")), testSpec()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTKEEnv(t)
			ctx := context.Background()
			o := e.ops("", false)
			mustEnsure(t, o, tt.from)
			e.resetCalls()
			p, err := o.Plan(ctx, tt.to)
			if err != nil {
				t.Fatal(err)
			}
			if w := e.writes(); len(w) != 0 {
				t.Fatalf("Plan wrote %v", w)
			}
			mustEnsure(t, o, tt.to)
			if got := e.syncWrites(); !slices.Equal(got, planActions(p)) {
				t.Errorf("sync wrote %v, the plan said %v (%v)", got, planActions(p), p.Writes)
			}
			wantVerdict := lbkit.VerdictUpdate
			if len(p.Writes) == 0 {
				wantVerdict = lbkit.VerdictInSync
			}
			if p.Verdict != wantVerdict || p.Owner != lbkit.OwnerOurs {
				t.Errorf("verdict %s owner %s, want %s by %s", p.Verdict, p.Owner, wantVerdict, lbkit.OwnerOurs)
			}
		})
	}
}
