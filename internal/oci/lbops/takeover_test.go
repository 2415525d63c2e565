package lbops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	"github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/internal/lb/lbkit"
	"github.com/ccmkit/ccm/internal/lb/lbspec"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// upstreamDesired is desired with the public OCI CCM's defaults: HTTP
// /healthz on kube-proxy's 10256 every 10 s, 3 s timeout.
func upstreamDesired(kind Kind, ips ...string) *Desired {
	d := desired(kind, ips...)
	d.HealthCheck = lbspec.HealthCheck{Protocol: lbspec.HealthCheckHTTP, Port: 10256, Path: "/healthz", UnhealthyThreshold: 3,
		Interval: 10 * time.Second, Timeout: 3 * time.Second}
	d.ServiceNodePorts = []int{30080}
	return d
}

// makeUpstream creates the load balancer the public OCI CCM makes for d's
// Service (its name for the kind, its health check, a user's tag) on
// subnet, waits for it, and forgets the writes.
func makeUpstream(t *testing.T, env *lbEnv, d *Desired, name, subnet string) string {
	t.Helper()
	ctx := context.Background()
	hc := func() (string, int, string, int, int, int) { return "HTTP", 10256, "/healthz", 3, 10000, 3000 }
	proto, port, path, retries, interval, timeout := hc()
	var wr string
	if d.Kind == KindLB {
		var backends []loadbalancer.BackendDetails
		for _, b := range d.Backends {
			backends = append(backends, loadbalancer.BackendDetails{IpAddress: common.String(b.Address), Port: common.Int(30080), Weight: common.Int(1)})
		}
		resp, err := env.api.LB.CreateLoadBalancer(ctx, loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: loadbalancer.CreateLoadBalancerDetails{
			CompartmentId: common.String(testCompartment), DisplayName: common.String(name), ShapeName: common.String("flexible"),
			ShapeDetails: &loadbalancer.ShapeDetails{MinimumBandwidthInMbps: common.Int(10), MaximumBandwidthInMbps: common.Int(100)},
			SubnetIds:    []string{subnet}, IsPrivate: common.Bool(false), FreeformTags: map[string]string{"team": "web"},
			BackendSets: map[string]loadbalancer.BackendSetDetails{"TCP-80": {Policy: common.String("ROUND_ROBIN"), Backends: backends,
				HealthChecker: &loadbalancer.HealthCheckerDetails{Protocol: common.String(proto), Port: common.Int(port), UrlPath: common.String(path),
					Retries: common.Int(retries), IntervalInMillis: common.Int(interval), TimeoutInMillis: common.Int(timeout), ReturnCode: common.Int(200),
					IsForcePlainText: common.Bool(false)}}},
			Listeners: map[string]loadbalancer.ListenerDetails{"TCP-80": {DefaultBackendSetName: common.String("TCP-80"), Port: common.Int(80), Protocol: common.String("TCP")}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		wr = deref(resp.OpcWorkRequestId)
	} else {
		var backends []networkloadbalancer.Backend
		for _, b := range d.Backends {
			backends = append(backends, networkloadbalancer.Backend{IpAddress: common.String(b.Address), Port: common.Int(30080), Weight: common.Int(1)})
		}
		resp, err := env.api.NLB.CreateNetworkLoadBalancer(ctx, networkloadbalancer.CreateNetworkLoadBalancerRequest{CreateNetworkLoadBalancerDetails: networkloadbalancer.CreateNetworkLoadBalancerDetails{
			CompartmentId: common.String(testCompartment), DisplayName: common.String(name), SubnetId: common.String(subnet),
			IsPrivate: common.Bool(false), FreeformTags: map[string]string{"team": "web"}, NlbIpVersion: networkloadbalancer.NlbIpVersionIpv4,
			BackendSets: map[string]networkloadbalancer.BackendSetDetails{"TCP-80": {Policy: networkloadbalancer.NetworkLoadBalancingPolicyFiveTuple,
				IsPreserveSource: common.Bool(false), Backends: backends, IpVersion: networkloadbalancer.IpVersionIpv4,
				HealthChecker: &networkloadbalancer.HealthChecker{Protocol: networkloadbalancer.HealthCheckProtocolsHttp, Port: common.Int(port),
					UrlPath: common.String(path), Retries: common.Int(retries), IntervalInMillis: common.Int(interval), TimeoutInMillis: common.Int(timeout),
					ReturnCode: common.Int(200)}}},
			Listeners: map[string]networkloadbalancer.ListenerDetails{"TCP-80": {Name: common.String("TCP-80"), DefaultBackendSetName: common.String("TCP-80"),
				Port: common.Int(80), Protocol: networkloadbalancer.ListenerProtocolsTcp, IpVersion: networkloadbalancer.IpVersionIpv4}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		wr = deref(resp.OpcWorkRequestId)
	}
	o := newTestOps(env)
	id, err := o.wait(ctx, o.driver(d.Kind), "", wr)
	if err != nil {
		t.Fatal(err)
	}
	env.resetWrites()
	return id
}

// planned are a plan's writes as the env names them (operation, and the
// backend set, listener or security list).
func planned(p lbkit.Plan) []string {
	var out []string
	for _, w := range p.Writes {
		name := w.Action
		if _, obj, ok := strings.Cut(w.Object, " set "); ok && (strings.HasSuffix(w.Action, "BackendSet") || strings.HasSuffix(w.Action, "RuleSet")) {
			name += " " + obj
		} else if obj, ok := strings.CutPrefix(w.Object, "listener "); ok {
			name += " " + obj
		} else if obj, ok := strings.CutPrefix(w.Object, "security list "); ok {
			name += " " + obj
		}
		out = append(out, name)
	}
	return out
}

func TestTakeOverUpstream(t *testing.T) {
	for _, tc := range []struct {
		name     string
		kind     Kind
		naming   Naming
		lbName   string
		upstream bool // the Service's settings are the public CCM's
		want     []string
	}{
		{name: "LB, its defaults", kind: KindLB, lbName: "uid-1", upstream: true},
		{name: "LB with a prefix, its defaults", kind: KindLB, naming: Naming{Prefix: "oke"}, lbName: "oke-uid-1", upstream: true},
		{name: "NLB, its defaults", kind: KindNLB, naming: Naming{UpstreamNLB: true}, lbName: "default/web/uid-1", upstream: true},
		{name: "LB, ours", kind: KindLB, lbName: "uid-1", want: []string{"UpdateLoadBalancer", "UpdateBackendSet TCP-80"}},
		{name: "NLB (ccmkit naming), ours", kind: KindNLB, lbName: "default/web/uid-1", want: []string{"UpdateNetworkLoadBalancer", "UpdateBackendSet TCP-80"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newLBEnv(t)
			o := New(env.api.LB, env.api.NLB, env.api.Network, Config{Compartment: testCompartment, VCN: testVCN, Naming: tc.naming,
				Timing: Timing{Poll: time.Millisecond, PollMax: time.Millisecond, Wait: 5 * time.Second}})
			d := desired(tc.kind, "10.0.0.1", "10.0.0.2")
			if tc.upstream {
				d = upstreamDesired(tc.kind, "10.0.0.1", "10.0.0.2")
			}
			d.Name = tc.naming.Name(tc.kind, d.Ref)
			id := makeUpstream(t, env, d, tc.lbName, subnetA)

			p, err := o.Plan(context.Background(), d)
			if err != nil {
				t.Fatal(err)
			}
			if p.Verdict != lbkit.VerdictTakeOver || p.LoadBalancer != id || p.Name != tc.lbName || p.Owner != OwnerUpstream {
				t.Errorf("plan = %+v, want the take-over of %s (%s)", p, id, tc.lbName)
			}
			if got := planned(p); !slices.Equal(got, tc.want) {
				t.Errorf("planned writes = %v, want %v", got, tc.want)
			}
			if len(env.writesOf()) != 0 {
				t.Fatalf("the plan wrote: %v", env.writesOf())
			}
			st, err := o.Ensure(context.Background(), d)
			if err != nil {
				t.Fatal(err)
			}
			if got := env.writesOf(); !slices.Equal(got, tc.want) {
				t.Errorf("the sync wrote %v, the plan said %v", got, tc.want)
			}
			lb := env.only(tc.kind)
			if lb.ID != id || len(st.Ingress) == 0 || st.Ingress[0].IP != lb.IPAddress {
				t.Errorf("status %+v of %s, want the incumbent's %s at %s", st, lb.ID, id, lb.IPAddress)
			}
			wantTags := map[string]string{"team": "web"}
			if len(tc.want) > 0 {
				wantTags[TagServiceUID], wantTags[TagService] = "uid-1", "default/web"
			}
			if fmt.Sprint(lb.FreeformTags) != fmt.Sprint(wantTags) {
				t.Errorf("tags = %v, want %v", lb.FreeformTags, wantTags)
			}
			// The next sync finds it as before, and writes nothing.
			env.resetWrites()
			if p, err = o.Plan(context.Background(), d); err != nil || len(p.Writes) != 0 {
				t.Errorf("second plan = %+v, %v; want no write", p, err)
			}
			if len(tc.want) > 0 && p.Verdict != lbkit.VerdictInSync {
				t.Errorf("second verdict %s, want in-sync (ours now)", p.Verdict)
			}
			if _, err := o.Ensure(context.Background(), d); err != nil || len(env.writesOf()) != 0 {
				t.Errorf("second sync: %v, writes %v", err, env.writesOf())
			}
			// Deleted with the Service.
			if err := o.Delete(context.Background(), &Desired{Spec: lbspec.Spec{Ref: d.Ref, Name: string(d.Ref.UID)}}); err != nil {
				t.Fatal(err)
			}
			if n := len(env.balancers(tc.kind)); n != 0 {
				t.Errorf("%d load balancers after the Service's deletion", n)
			}
		})
	}
}

// An HTTP listener the public CCM named HTTP-<port> keeps its name.
func TestTakeOverHTTPListenerName(t *testing.T) {
	env := newLBEnv(t)
	o := newTestOps(env)
	ctx := context.Background()
	d := upstreamDesired(KindLB, "10.0.0.1")
	makeUpstream(t, env, d, "uid-1", subnetA)
	id := env.only(KindLB).ID
	hc := &loadbalancer.HealthCheckerDetails{Protocol: common.String("HTTP"), Port: common.Int(10256), UrlPath: common.String("/healthz"),
		Retries: common.Int(3), IntervalInMillis: common.Int(10000), TimeoutInMillis: common.Int(3000), ReturnCode: common.Int(200)}
	bs, err := env.api.LB.CreateBackendSet(ctx, loadbalancer.CreateBackendSetRequest{LoadBalancerId: &id,
		CreateBackendSetDetails: loadbalancer.CreateBackendSetDetails{Name: common.String("TCP-8080"), Policy: common.String("ROUND_ROBIN"), HealthChecker: hc,
			Backends: []loadbalancer.BackendDetails{{IpAddress: common.String("10.0.0.1"), Port: common.Int(30081)}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.wait(ctx, o.lb, id, deref(bs.OpcWorkRequestId)); err != nil {
		t.Fatal(err)
	}
	l, err := env.api.LB.CreateListener(ctx, loadbalancer.CreateListenerRequest{LoadBalancerId: &id,
		CreateListenerDetails: loadbalancer.CreateListenerDetails{Name: common.String("HTTP-8080"), DefaultBackendSetName: common.String("TCP-8080"),
			Port: common.Int(8080), Protocol: common.String("HTTP")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.wait(ctx, o.lb, id, deref(l.OpcWorkRequestId)); err != nil {
		t.Fatal(err)
	}
	d.Listeners = append(d.Listeners, lbspec.Listener{Protocol: lbspec.TCP, Port: 8080, NodePort: 30081})
	d.ListenerProtocol = "HTTP"
	env.resetWrites()
	p, err := o.Plan(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	// TCP-80 becomes HTTP (the Service says so for every port); HTTP-8080
	// is its HTTP listener on 8080 already.
	if got, want := planned(p), []string{"UpdateLoadBalancer", "UpdateListener TCP-80"}; !slices.Equal(got, want) {
		t.Errorf("planned %v, want %v", got, want)
	}
	if _, err := o.Ensure(ctx, d); err != nil {
		t.Fatal(err)
	}
	if got, want := env.writesOf(), []string{"UpdateLoadBalancer", "UpdateListener TCP-80"}; !slices.Equal(got, want) {
		t.Errorf("the sync wrote %v, want %v", got, want)
	}
}

func TestTakeOverRefused(t *testing.T) {
	const otherVCN, otherSubnet, otherList = "ocid1.vcn.oc1.iad.aaaaothervcn", "ocid1.subnet.oc1.iad.aaaaothersubnet", "ocid1.securitylist.oc1.iad.aaaaotherlist"
	for _, tc := range []struct {
		name, lbName, subnet string
		naming               Naming
		want                 string
	}{
		{name: "another prefix", lbName: "prod-uid-1", subnet: subnetA, want: `LOAD_BALANCER_PREFIX "prod"`},
		{name: "another VCN", lbName: "uid-1", subnet: otherSubnet, want: "of VCN " + otherVCN},
		{name: "the prefix set", lbName: "prod-uid-1", subnet: subnetA, naming: Naming{Prefix: "prod-"}},
	} {
		// With a TTL, the refusal is answered from the listing that
		// answered the lookup (gather.go); without, by a listing of its own.
		for _, ttl := range []time.Duration{0, DefaultLookupTTL} {
			t.Run(fmt.Sprintf("%s ttl %v", tc.name, ttl), func(t *testing.T) {
				env := newLBEnvWith(t, func(o *cloudsim.Options) {
					o.OCI.Network.VCNs = append(o.OCI.Network.VCNs, simoci.VCN{ID: otherVCN, CompartmentID: testCompartment, CIDRBlock: "10.1.0.0/16"})
					o.OCI.Network.SecurityLists = append(o.OCI.Network.SecurityLists, simoci.SecurityList{ID: otherList, VCNID: otherVCN, CompartmentID: testCompartment})
					o.OCI.Network.Subnets = append(o.OCI.Network.Subnets, simoci.Subnet{ID: otherSubnet, VCNID: otherVCN, CompartmentID: testCompartment,
						CIDRBlock: "10.1.0.0/24", SecurityListIDs: []string{otherList}})
				})
				o := New(env.api.LB, env.api.NLB, env.api.Network, Config{Compartment: testCompartment, VCN: testVCN, Naming: tc.naming,
					LookupTTL: ttl, Timing: Timing{Poll: time.Millisecond, PollMax: time.Millisecond, Wait: 5 * time.Second}})
				d := upstreamDesired(KindLB, "10.0.0.1")
				d.Name = tc.naming.Name(KindLB, d.Ref)
				makeUpstream(t, env, d, tc.lbName, tc.subnet)
				p, err := o.Plan(context.Background(), d)
				if err != nil {
					t.Fatal(err)
				}
				_, ensureErr := o.Ensure(context.Background(), d)
				if tc.want == "" {
					if p.Verdict != lbkit.VerdictTakeOver || ensureErr != nil {
						t.Errorf("plan %s (%s), sync %v: want it taken over", p.Verdict, p.Reason, ensureErr)
					}
					return
				}
				var r *lbkit.RefusalError
				if !errors.As(ensureErr, &r) || r.Reason != EventReasonNotTakenOver || !strings.Contains(r.Message, tc.want) {
					t.Errorf("sync error = %v, want a refusal saying %q", ensureErr, tc.want)
				}
				if p.Verdict != lbkit.VerdictRefuse || !strings.Contains(p.Reason, tc.want) || len(p.Writes) != 0 {
					t.Errorf("plan = %+v, want a refusal saying %q", p, tc.want)
				}
				if w := env.writesOf(); len(w) != 0 {
					t.Errorf("a refused sync wrote %v", w)
				}
				if n := len(env.balancers(KindLB)); n != 1 {
					t.Errorf("%d load balancers, want the incumbent's only", n)
				}
			})
		}
	}
}

// The rules the public CCM's mode All wrote: those on the Service's own
// NodePort are taken over (no write while they match) and deleted with
// it; those on ports other Services share (the listener port, kube-proxy's
// 10256) count as present and stay.
func TestTakeOverSecurityRules(t *testing.T) {
	env := newLBEnv(t)
	o := New(env.api.LB, env.api.NLB, env.api.Network, Config{Compartment: testCompartment, VCN: testVCN,
		Timing: Timing{Poll: time.Millisecond, PollMax: time.Millisecond, Wait: 5 * time.Second}})
	d := upstreamDesired(KindLB, "10.0.0.1")
	d.SecurityListMode = SecurityListAll
	makeUpstream(t, env, d, "uid-1", subnetA)
	in := func(src string, port int) core.IngressSecurityRule {
		return core.IngressSecurityRule{Source: common.String(src), Protocol: common.String("6"), IsStateless: common.Bool(false),
			TcpOptions: &core.TcpOptions{DestinationPortRange: &core.PortRange{Min: common.Int(port), Max: common.Int(port)}}}
	}
	out := func(dst string, port int) core.EgressSecurityRule {
		return core.EgressSecurityRule{Destination: common.String(dst), Protocol: common.String("6"), IsStateless: common.Bool(false),
			TcpOptions: &core.TcpOptions{DestinationPortRange: &core.PortRange{Min: common.Int(port), Max: common.Int(port)}}}
	}
	put := func(id string, ins []core.IngressSecurityRule, egs []core.EgressSecurityRule) {
		sl := env.securityList(id)
		if _, err := env.api.Network.UpdateSecurityList(context.Background(), core.UpdateSecurityListRequest{SecurityListId: &id,
			UpdateSecurityListDetails: core.UpdateSecurityListDetails{IngressSecurityRules: append(sl.IngressSecurityRules, ins...),
				EgressSecurityRules: append(nonNilEgress(sl.EgressSecurityRules), egs...)}}); err != nil {
			t.Fatal(err)
		}
	}
	put(slA, []core.IngressSecurityRule{in("0.0.0.0/0", 80)}, []core.EgressSecurityRule{out("10.0.0.0/24", 30080), out("10.0.0.0/24", 10256)})
	put(slNodes, []core.IngressSecurityRule{in("10.0.100.0/24", 30080), in("10.0.100.0/24", 10256)}, nil)
	env.resetWrites()

	p, err := o.Plan(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Writes) != 0 {
		t.Errorf("planned %v, want no write: the incumbent's rules are what the Service needs", planned(p))
	}
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if w := env.writesOf(); len(w) != 0 {
		t.Errorf("the sync wrote %v", w)
	}
	if err := o.Delete(context.Background(), &Desired{Spec: lbspec.Spec{Ref: d.Ref, Name: "uid-1"},
		Settings: Settings{SecurityListMode: SecurityListAll, ServiceNodePorts: []int{30080}}}); err != nil {
		t.Fatal(err)
	}
	rules := func(id string) []string {
		sl := env.securityList(id)
		var out []string
		for _, r := range sl.IngressSecurityRules {
			out = append(out, fmt.Sprintf("in %s %d", deref(r.Source), portOf(r.TcpOptions, r.UdpOptions)))
		}
		for _, r := range sl.EgressSecurityRules {
			out = append(out, fmt.Sprintf("out %s %d", deref(r.Destination), portOf(r.TcpOptions, r.UdpOptions)))
		}
		slices.Sort(out)
		return out
	}
	if got, want := rules(slA), []string{"in 0.0.0.0/0 80", "in 10.0.0.0/16 0", "out 10.0.0.0/24 10256"}; !slices.Equal(got, want) {
		t.Errorf("LB subnet's list after the deletion = %v, want %v", got, want)
	}
	if got, want := rules(slNodes), []string{"in 10.0.0.0/16 0", "in 10.0.100.0/24 10256"}; !slices.Equal(got, want) {
		t.Errorf("node subnet's list after the deletion = %v, want %v", got, want)
	}
}

func nonNilEgress(r []core.EgressSecurityRule) []core.EgressSecurityRule {
	if r == nil {
		return []core.EgressSecurityRule{}
	}
	return r
}

func TestNaming(t *testing.T) {
	ref := lbspec.Ref{UID: "u"}
	ref.Service.Namespace, ref.Service.Name = "ns", "svc"
	for _, tc := range []struct {
		n     Naming
		k     Kind
		name  string
		names []string
	}{
		{Naming{}, KindLB, "u", []string{"u"}},
		{Naming{Prefix: "oke"}, KindLB, "oke-u", []string{"oke-u", "u"}},
		{Naming{Prefix: "oke-"}, KindLB, "oke-u", []string{"oke-u", "u"}},
		{Naming{}, KindNLB, "u", []string{"u", "ns/svc/u"}},
		{Naming{UpstreamNLB: true, Prefix: "oke"}, KindNLB, "ns/svc/u", []string{"ns/svc/u", "u"}},
	} {
		if got := tc.n.Name(tc.k, ref); got != tc.name {
			t.Errorf("%+v %s: Name = %q, want %q", tc.n, tc.k, got, tc.name)
		}
		if got := tc.n.names(tc.k, ref); !slices.Equal(got, tc.names) {
			t.Errorf("%+v %s: names = %q, want %q", tc.n, tc.k, got, tc.names)
		}
	}
}
