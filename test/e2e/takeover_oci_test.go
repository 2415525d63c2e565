//go:build e2e

package e2e

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	ocilb "github.com/oracle/oci-go-sdk/v65/loadbalancer"
	ocinlb "github.com/oracle/oci-go-sdk/v65/networkloadbalancer"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/lb/lbkit"
	"github.com/ccmkit/ccm/internal/oci/lbops"
	"github.com/ccmkit/ccm/internal/oci/ociapi"
	"github.com/ccmkit/ccm/internal/testcluster/traffic"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// The switch-over from the public OCI cloud-controller-manager (issue 30,
// docs/migration.md): its load balancers are made here exactly as it makes
// them, through the SDK with a principal of its own (names, listeners,
// backend sets, health checks, security list rules, the Service status it
// writes); then ccmkit starts under traffic and takes them over.

// ociIncumbentUser is the public OCI CCM's principal in these scenarios,
// so that its calls are never counted as ccmkit's.
const ociIncumbentUser = "ocid1.user.oc1..aaaaaaaae2eincumbent"

var incumbent struct {
	once sync.Once
	api  *ociapi.Clients
	err  error
}

// incumbentAPI returns the public OCI CCM's SDK clients.
func incumbentAPI(t *testing.T) *ociapi.Clients {
	t.Helper()
	incumbent.once.Do(func() {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			incumbent.err = err
			return
		}
		fp := ociFingerprint(key)
		if _, incumbent.err = suite.sim.OCI().AddKey(ociTenancy+"/"+ociIncumbentUser+"/"+fp, publicPEM(key)); incumbent.err != nil {
			return
		}
		keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
		incumbent.api, incumbent.err = ociapi.New(ociapi.Options{Tenancy: ociTenancy, User: ociIncumbentUser, Region: ociRegion, Fingerprint: fp,
			Key: keyPEM, Endpoint: suite.simURL, Limits: ociapi.Limits{Disabled: true}})
	})
	if incumbent.err != nil {
		t.Fatalf("the incumbent's OCI clients: %v", incumbent.err)
	}
	return incumbent.api
}

// upstreamLB makes the load balancer the public OCI CCM v1.35 makes for
// svc (one TCP port) on the nodes, named name, as its EnsureLoadBalancer
// does with a Service that sets only the load balancer type (and, for an
// LB, the flexible shape a tenancy made after May 2023 needs): listener
// and backend set <PROTO>-<port>, policy ROUND_ROBIN (LB) or FIVE_TUPLE
// (NLB), an HTTP health check of kube-proxy's /healthz on 10256 every 10 s
// with a 3 s timeout and 3 retries, the nodes' InternalIP:NodePort with
// weight 1, no tags. It waits until the load balancer is ACTIVE and writes
// the Service's status as that CCM does (every address, OCI's order).
func upstreamLB(t *testing.T, svc *corev1.Service, nodes []string, name, subnet string) simoci.LoadBalancer {
	t.Helper()
	api, ctx := incumbentAPI(t), context.Background()
	p := svc.Spec.Ports[0]
	set := fmt.Sprintf("TCP-%d", p.Port)
	var id string
	if svc.Annotations[annotations.OCILoadBalancerType.String()] == "nlb" {
		var backends []ocinlb.Backend
		for _, ip := range nodes {
			backends = append(backends, ocinlb.Backend{IpAddress: common.String(ip), Port: common.Int(int(p.NodePort)), Weight: common.Int(1)})
		}
		resp, err := api.NLB.CreateNetworkLoadBalancer(ctx, ocinlb.CreateNetworkLoadBalancerRequest{CreateNetworkLoadBalancerDetails: ocinlb.CreateNetworkLoadBalancerDetails{
			CompartmentId: common.String(ociCompartment), DisplayName: common.String(name), SubnetId: common.String(subnet),
			IsPrivate: common.Bool(false), NlbIpVersion: ocinlb.NlbIpVersionIpv4,
			BackendSets: map[string]ocinlb.BackendSetDetails{set: {Policy: ocinlb.NetworkLoadBalancingPolicyFiveTuple, IsPreserveSource: common.Bool(false),
				IpVersion: ocinlb.IpVersionIpv4, Backends: backends,
				HealthChecker: &ocinlb.HealthChecker{Protocol: ocinlb.HealthCheckProtocolsHttp, Port: common.Int(10256), UrlPath: common.String("/healthz"),
					Retries: common.Int(3), IntervalInMillis: common.Int(10000), TimeoutInMillis: common.Int(3000), ReturnCode: common.Int(200)}}},
			Listeners: map[string]ocinlb.ListenerDetails{set: {Name: common.String(set), DefaultBackendSetName: common.String(set), Port: common.Int(int(p.Port)),
				Protocol: ocinlb.ListenerProtocolsTcp, IpVersion: ocinlb.IpVersionIpv4}},
		}, OpcRetryToken: common.String(string(svc.UID))})
		if err != nil {
			t.Fatalf("the incumbent's CreateNetworkLoadBalancer: %v", err)
		}
		id = deref(resp.Id)
	} else {
		var backends []ocilb.BackendDetails
		for _, ip := range nodes {
			backends = append(backends, ocilb.BackendDetails{IpAddress: common.String(ip), Port: common.Int(int(p.NodePort)), Weight: common.Int(1)})
		}
		_, err := api.LB.CreateLoadBalancer(ctx, ocilb.CreateLoadBalancerRequest{CreateLoadBalancerDetails: ocilb.CreateLoadBalancerDetails{
			CompartmentId: common.String(ociCompartment), DisplayName: common.String(name), ShapeName: common.String("flexible"),
			ShapeDetails: &ocilb.ShapeDetails{MinimumBandwidthInMbps: common.Int(10), MaximumBandwidthInMbps: common.Int(100)},
			SubnetIds:    []string{subnet}, IsPrivate: common.Bool(false),
			BackendSets: map[string]ocilb.BackendSetDetails{set: {Policy: common.String("ROUND_ROBIN"), Backends: backends,
				HealthChecker: &ocilb.HealthCheckerDetails{Protocol: common.String("HTTP"), Port: common.Int(10256), UrlPath: common.String("/healthz"),
					Retries: common.Int(3), IntervalInMillis: common.Int(10000), TimeoutInMillis: common.Int(3000), ReturnCode: common.Int(200),
					IsForcePlainText: common.Bool(false)}}},
			Listeners: map[string]ocilb.ListenerDetails{set: {DefaultBackendSetName: common.String(set), Port: common.Int(int(p.Port)), Protocol: common.String("TCP")}},
		}, OpcRetryToken: common.String(string(svc.UID))})
		if err != nil {
			t.Fatalf("the incumbent's CreateLoadBalancer: %v", err)
		}
	}
	var lb simoci.LoadBalancer
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, l := range suite.sim.OCI().LoadBalancers() {
			if l.DisplayName == name && (id == "" || l.ID == id) && l.LifecycleState == "ACTIVE" {
				lb = l
			}
		}
		if lb.ID != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the incumbent's load balancer %s is not ACTIVE within 30s", name)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Its status, as loadBalancerToStatus writes it: every address in the
	// order the API lists them.
	var ips []string
	if lb.Kind == "networkloadbalancer" {
		resp, err := api.NLB.GetNetworkLoadBalancer(ctx, ocinlb.GetNetworkLoadBalancerRequest{NetworkLoadBalancerId: &lb.ID})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range resp.IpAddresses {
			ips = append(ips, deref(a.IpAddress))
		}
	} else {
		resp, err := api.LB.GetLoadBalancer(ctx, ocilb.GetLoadBalancerRequest{LoadBalancerId: &lb.ID})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range resp.IpAddresses {
			ips = append(ips, deref(a.IpAddress))
		}
	}
	s := getService(t, svc)
	s.Status.LoadBalancer.Ingress = nil
	for _, ip := range ips {
		s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip})
	}
	if _, err := suite.cluster.Client.CoreV1().Services(s.Namespace).UpdateStatus(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("write the incumbent's status: %v", err)
	}
	return lb
}

// upstreamRule is a rule as the public OCI CCM writes it: stateful TCP to
// one port, no description.
type upstreamRule struct {
	list, peer string
	ingress    bool
	port       int
}

// addUpstreamRules adds the rules of the public OCI CCM's security list
// mode All for an LB Service (its defaultSecurityListManager): clients to
// the listener port in the LB subnet's list; the LB subnet to the node
// subnet on the NodePort and kube-proxy's 10256, as egress in the LB
// subnet's list and ingress in the node subnet's. At the end of the test
// the lists are as they were before (they are the suite's).
func addUpstreamRules(t *testing.T, port, nodePort int) []upstreamRule {
	t.Helper()
	rules := []upstreamRule{
		{list: ociLBSecurityList, peer: "0.0.0.0/0", ingress: true, port: port},
		{list: ociLBSecurityList, peer: ociNodeCIDR, port: nodePort},
		{list: ociLBSecurityList, peer: ociNodeCIDR, port: 10256},
		{list: ociSecurityList, peer: ociLBCIDR, ingress: true, port: nodePort},
		{list: ociSecurityList, peer: ociLBCIDR, ingress: true, port: 10256},
	}
	type listRules struct {
		in []ocicore.IngressSecurityRule
		eg []ocicore.EgressSecurityRule
	}
	saved := map[string]listRules{}
	editRules(t, func(list string, in []ocicore.IngressSecurityRule, eg []ocicore.EgressSecurityRule) ([]ocicore.IngressSecurityRule, []ocicore.EgressSecurityRule) {
		saved[list] = listRules{in: slices.Clone(in), eg: slices.Clone(eg)}
		for _, r := range rules {
			if r.list != list {
				continue
			}
			ports := &ocicore.TcpOptions{DestinationPortRange: &ocicore.PortRange{Min: common.Int(r.port), Max: common.Int(r.port)}}
			if r.ingress {
				in = append(in, ocicore.IngressSecurityRule{Source: common.String(r.peer), Protocol: common.String("6"), IsStateless: common.Bool(false), TcpOptions: ports})
			} else {
				eg = append(eg, ocicore.EgressSecurityRule{Destination: common.String(r.peer), Protocol: common.String("6"), IsStateless: common.Bool(false), TcpOptions: ports})
			}
		}
		return in, eg
	})
	// The suite's own rules may have the incumbent's shape (its 10256
	// rule from the load balancer subnet does): the lists go back to what
	// they were rather than losing every rule that looks like one of these.
	t.Cleanup(func() {
		editRules(t, func(list string, _ []ocicore.IngressSecurityRule, _ []ocicore.EgressSecurityRule) ([]ocicore.IngressSecurityRule, []ocicore.EgressSecurityRule) {
			return saved[list].in, saved[list].eg
		})
	})
	return rules
}

func hasUpstreamRule(rules []upstreamRule, peer string, ingress bool, tcp *ocicore.TcpOptions) bool {
	if tcp == nil || tcp.DestinationPortRange == nil || derefInt(tcp.DestinationPortRange.Min) != derefInt(tcp.DestinationPortRange.Max) {
		return false
	}
	for _, r := range rules {
		if r.peer == peer && r.ingress == ingress && r.port == derefInt(tcp.DestinationPortRange.Min) {
			return true
		}
	}
	return false
}

// editRules rewrites the suite's two security lists with the incumbent's
// principal.
func editRules(t *testing.T, edit func(list string, in []ocicore.IngressSecurityRule, eg []ocicore.EgressSecurityRule) ([]ocicore.IngressSecurityRule, []ocicore.EgressSecurityRule)) {
	t.Helper()
	api, ctx := incumbentAPI(t), context.Background()
	for _, id := range []string{ociLBSecurityList, ociSecurityList} {
		resp, err := api.Network.GetSecurityList(ctx, ocicore.GetSecurityListRequest{SecurityListId: common.String(id)})
		if err != nil {
			t.Fatal(err)
		}
		in, eg := edit(id, resp.IngressSecurityRules, resp.EgressSecurityRules)
		if _, err := api.Network.UpdateSecurityList(ctx, ocicore.UpdateSecurityListRequest{SecurityListId: common.String(id), IfMatch: resp.Etag,
			UpdateSecurityListDetails: ocicore.UpdateSecurityListDetails{IngressSecurityRules: in, EgressSecurityRules: eg}}); err != nil {
			t.Fatal(err)
		}
	}
}

// upstreamRulesLeft are the rules of the list that are still there.
func upstreamRulesLeft(t *testing.T, rules []upstreamRule) []upstreamRule {
	t.Helper()
	var out []upstreamRule
	for _, sl := range suite.sim.OCI().Network().SecurityLists {
		for _, r := range rules {
			if r.list != sl.ID {
				continue
			}
			found := false
			for _, in := range sl.IngressSecurityRules {
				found = found || (r.ingress && deref(in.Description) == "" && deref(in.Source) == r.peer && hasUpstreamRule([]upstreamRule{r}, r.peer, true, in.TcpOptions))
			}
			for _, eg := range sl.EgressSecurityRules {
				found = found || (!r.ingress && deref(eg.Description) == "" && deref(eg.Destination) == r.peer && hasUpstreamRule([]upstreamRule{r}, r.peer, false, eg.TcpOptions))
			}
			if found {
				out = append(out, r)
			}
		}
	}
	return out
}

// adoptPlans runs `cloud-controller-manager adopt --dry-run -o json` with
// the CCM's identity and config, and returns the plans of the Services.
func adoptPlans(t *testing.T, config string, svcs ...*corev1.Service) map[string]lbkit.Plan {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, suite.ccmBinary, "adopt", "--dry-run", "--cloud-provider=oci", "--cloud-config="+config,
		"--kubeconfig="+suite.kubeconfig, "-o", "json")
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("adopt --dry-run: %v: %s", err, stderr)
	}
	var plans []lbkit.Plan
	if err := json.Unmarshal(out, &plans); err != nil {
		t.Fatalf("adopt --dry-run -o json: %v: %s", err, out)
	}
	got := map[string]lbkit.Plan{}
	for _, p := range plans {
		for _, s := range svcs {
			if p.Service.Namespace == s.Namespace && p.Service.Name == s.Name {
				got[s.Name] = p
			}
		}
	}
	if len(got) != len(svcs) {
		t.Fatalf("adopt --dry-run planned %d of the %d Services: %s", len(got), len(svcs), out)
	}
	return got
}

// ociWrites are the OCI write operations a principal made, by operation
// (without cloudsim's "oci:" and "nlb:" prefixes).
func ociWrites(principal string) map[string]int {
	principals.Lock()
	defer principals.Unlock()
	out := map[string]int{}
	for action, n := range principals.actions[principal] {
		op := ociLBOp(action)
		for _, verb := range []string{"Create", "Update", "Delete", "Change", "Add", "Remove"} {
			if strings.HasPrefix(op, verb) {
				out[op] += n
			}
		}
	}
	return out
}

func diffCounts(after, before map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// lbCreationsAndDeletions counts every principal's.
func lbCreationsAndDeletions() int {
	n := 0
	for action, byCode := range suite.sim.Calls() {
		switch ociLBOp(action) {
		case "CreateLoadBalancer", "DeleteLoadBalancer", "CreateNetworkLoadBalancer", "DeleteNetworkLoadBalancer":
			n += total(byCode)
		}
	}
	return n
}

func ingressIPs(svc *corev1.Service) []string {
	var out []string
	for _, in := range svc.Status.LoadBalancer.Ingress {
		out = append(out, in.IP)
	}
	return out
}

func (e *ociEnv) ccmPrincipal() string { return ociTenancy + "/" + ociUser + "/" + e.fingerprint }

// TestOCITakeover switches an LB Service and an NLB Service from the
// public OCI CCM to ccmkit, with ccmkit's defaults and with defaults:
// upstream, under traffic through both VIPs.
func TestOCITakeover(t *testing.T) {
	e := theOCIEnv
	e.prepare(t)
	for i, tc := range []struct {
		name     string
		extra    string
		upstream bool
	}{
		{name: "ccmkit defaults"},
		{name: "upstream defaults", extra: "defaults: upstream\n", upstream: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pauseMainCCM(t) // no service controller while the incumbent's state is laid out
			sel := fmt.Sprintf("oci-takeover-%d", i)
			n1, n2 := ociLBNode(t, sel), ociLBNode(t, sel)
			nodes := []string{n1.PrivateIP, n2.PrivateIP}
			lbSvc := lbServiceSpec("takeover-lb", sel, int32(8480+2*i))
			lbSvc.Annotations[annotations.OCILoadBalancerType.String()] = "lb"
			lbSvc.Annotations[string(annotations.OCILBShape)] = "flexible"
			lbSvc.Annotations[annotations.OCILBShapeFlexMin.String()] = "10"
			lbSvc.Annotations[annotations.OCILBShapeFlexMax.String()] = "100"
			nlbSvc := lbServiceSpec("takeover-nlb", sel, int32(8481+2*i))
			nlbSvc.Annotations[annotations.OCILoadBalancerType.String()] = "nlb"
			for _, s := range []*corev1.Service{lbSvc, nlbSvc} {
				np := s.Spec.Ports[0].NodePort
				serve(t, n1.PrivateIP, np, 200, "node-1")
				serve(t, n2.PrivateIP, np, 200, "node-2")
			}
			lbSvc, nlbSvc = createService(t, lbSvc), createService(t, nlbSvc)

			// The incumbent's load balancers, rules and statuses.
			lb := upstreamLB(t, lbSvc, nodes, string(lbSvc.UID), ociLBSubnet)
			nlb := upstreamLB(t, nlbSvc, nodes, fmt.Sprintf("%s/%s/%s", nlbSvc.Namespace, nlbSvc.Name, nlbSvc.UID), ociLBSubnet)
			rules := addUpstreamRules(t, int(lbSvc.Spec.Ports[0].Port), int(lbSvc.Spec.Ports[0].NodePort))
			lbSvc, nlbSvc = getService(t, lbSvc), getService(t, nlbSvc)
			before := map[string][]string{lbSvc.Name: ingressIPs(lbSvc), nlbSvc.Name: ingressIPs(nlbSvc)}
			addrs := []string{fmt.Sprintf("%s:%d", lb.IPAddress, lbSvc.Spec.Ports[0].Port), fmt.Sprintf("%s:%d", nlb.IPAddress, nlbSvc.Spec.Ports[0].Port)}
			for _, a := range addrs {
				waitAnswers(t, "http://"+a+"/", 30*time.Second, "node-1", "node-2")
			}

			// The dry run, with the CCM's identity and config.
			name := "ccm-oci-takeover-" + strings.ReplaceAll(tc.name, " ", "-")
			config := e.writeConfig("cloud-oci-"+name+".yaml", tc.extra)
			plans := adoptPlans(t, config, lbSvc, nlbSvc)
			for svcName, id := range map[string]string{lbSvc.Name: lb.ID, nlbSvc.Name: nlb.ID} {
				p := plans[svcName]
				if p.Verdict != lbkit.VerdictTakeOver || p.LoadBalancer != id || p.Owner != lbops.OwnerUpstream {
					t.Errorf("plan of %s = %+v, want the take-over of %s", svcName, p, id)
				}
				if tc.upstream && len(p.Writes) != 0 {
					t.Errorf("plan of %s with defaults: upstream = %v, want no write", svcName, p.Writes)
				}
			}

			// The switch, under traffic.
			load := traffic.Start(traffic.Options{Addrs: addrs, Rate: 50})
			writesBefore, lbOpsBefore := ociWrites(e.ccmPrincipal()), lbCreationsAndDeletions()
			p, err := e.startCCM(name, config, lbControllers...)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Stop()
			waitEvent(t, lbSvc, "EnsuredLoadBalancer", nil, 90*time.Second)
			waitEvent(t, nlbSvc, "EnsuredLoadBalancer", nil, 90*time.Second)
			writes := diffCounts(ociWrites(e.ccmPrincipal()), writesBefore)
			time.Sleep(2 * time.Second) // traffic after the last change
			counts := load.Stop()

			want := map[string]int{}
			for _, p := range plans {
				for _, w := range p.Writes {
					want[w.Action]++
				}
			}
			if fmt.Sprint(writes) != fmt.Sprint(want) {
				t.Errorf("the first sync wrote %v; the dry run printed %v", writes, want)
			}
			if tc.upstream && len(writes) != 0 {
				t.Errorf("with defaults: upstream the first sync wrote %v, want nothing", writes)
			}
			if n := lbCreationsAndDeletions() - lbOpsBefore; n != 0 {
				t.Errorf("%d load balancers created or deleted during the switch, want 0", n)
			}
			if counts.RequestsFailed != 0 || counts.ConnectionsReset != 0 || counts.Requests == 0 {
				t.Errorf("traffic during the switch: %s; want no failure", counts)
			}
			// Every address unchanged, in its order: with ccmkit's
			// defaults too, a private address the Service already shows
			// stays (docs/migration.md).
			for _, s := range []*corev1.Service{lbSvc, nlbSvc} {
				if got, was := ingressIPs(getService(t, s)), before[s.Name]; !slices.Equal(got, was) {
					t.Errorf("status of %s = %v, was %v", s.Name, got, was)
				}
			}
			t.Logf("dry run: %d writes; first sync: %v; traffic: %s", len(plans[lbSvc.Name].Writes)+len(plans[nlbSvc.Name].Writes), writes, counts)

			// The next syncs find them as their own. Deleting the Services
			// deletes the load balancers and, in security list mode All
			// (defaults: upstream), the incumbent's rules on the Service's
			// NodePort; the ones on ports other Services may share (the
			// listener port, kube-proxy's 10256) stay.
			for _, s := range []*corev1.Service{lbSvc, nlbSvc} {
				if err := suite.cluster.Client.CoreV1().Services(s.Namespace).Delete(context.Background(), s.Name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				waitServiceGone(t, s, 90*time.Second)
			}
			for _, id := range []string{lb.ID, nlb.ID} {
				if got, err := suite.sim.OCI().LoadBalancer(id); err == nil && ociLive(got) {
					t.Errorf("load balancer %s outlived its Service", id)
				}
			}
			left := upstreamRulesLeft(t, rules)
			wantLeft := rules // mode None: never touched
			if tc.upstream {
				wantLeft = slices.DeleteFunc(slices.Clone(rules), func(r upstreamRule) bool { return r.port == int(lbSvc.Spec.Ports[0].NodePort) })
			}
			if fmt.Sprint(left) != fmt.Sprint(wantLeft) {
				t.Errorf("the incumbent's rules left after the deletion: %v, want %v", left, wantLeft)
			}
		})
	}
}

// TestOCITakeoverRefused: the incumbent ran with LOAD_BALANCER_PREFIX=prod,
// and ccmkit's config does not say so. ccmkit refuses to create a second
// load balancer beside it and says why, until the user sets the prefix;
// then it takes it over with its address.
func TestOCITakeoverRefused(t *testing.T) {
	e := theOCIEnv
	e.prepare(t)
	pauseMainCCM(t)
	const sel = "oci-takeover-refused"
	n1 := ociLBNode(t, sel)
	svc := lbServiceSpec("takeover-refused", sel, 8490)
	svc.Annotations[string(annotations.OCILBShape)] = "flexible"
	svc.Annotations[annotations.OCILBShapeFlexMin.String()] = "10"
	svc.Annotations[annotations.OCILBShapeFlexMax.String()] = "100"
	serve(t, n1.PrivateIP, svc.Spec.Ports[0].NodePort, 200, "node-1")
	svc = createService(t, svc)
	lb := upstreamLB(t, svc, []string{n1.PrivateIP}, "prod-"+string(svc.UID), ociLBSubnet)
	was := ingressIPs(getService(t, svc))

	config := e.writeConfig("cloud-oci-takeover-refused.yaml", "")
	if p := adoptPlans(t, config, svc)[svc.Name]; p.Verdict != lbkit.VerdictRefuse || !strings.Contains(p.Reason, `"prod"`) {
		t.Errorf("plan = %+v, want a refusal naming the prefix", p)
	}
	lbOps := lbCreationsAndDeletions()
	p, err := e.startCCM("ccm-oci-takeover-refused", config, lbControllers...)
	if err != nil {
		t.Fatal(err)
	}
	waitEvent(t, svc, lbops.EventReasonNotTakenOver, []string{lb.ID, "loadBalancer.namePrefix: prod"}, 60*time.Second)
	holdsFor(t, 3*time.Second, "nothing created beside it", func() bool { return lbCreationsAndDeletions() == lbOps })
	if got := ingressIPs(getService(t, svc)); !slices.Equal(got, was) {
		t.Errorf("status = %v, want the incumbent's %v kept", got, was)
	}
	p.Stop()

	// The user says so: the prefix in the config.
	text := strings.Replace(e.ociConfig(ociUser, e.keyPEM, e.fingerprint, ""), "  subnet1: "+ociLBSubnet+"\n", "  subnet1: "+ociLBSubnet+"\n  namePrefix: prod\n", 1)
	config = filepath.Join(suite.dir, "cloud-oci-takeover-prefix.yaml")
	if err := os.WriteFile(config, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err = e.startCCM("ccm-oci-takeover-prefix", config, lbControllers...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	waitEvent(t, svc, "EnsuredLoadBalancer", nil, 90*time.Second)
	if n := lbCreationsAndDeletions() - lbOps; n != 0 {
		t.Errorf("%d load balancers created or deleted, want the incumbent's taken over", n)
	}
	if got := ingressIPs(getService(t, svc)); !slices.Equal(got, was) {
		t.Errorf("status = %v, want the incumbent's %v kept", got, was)
	}
	got, err := suite.sim.OCI().LoadBalancer(lb.ID)
	if err != nil || got.FreeformTags[lbops.TagServiceUID] != string(svc.UID) {
		t.Errorf("load balancer %s tags = %v (%v), want ours added by the first change", lb.ID, got.FreeformTags, err)
	}
	if err := suite.cluster.Client.CoreV1().Services(svc.Namespace).Delete(context.Background(), svc.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitServiceGone(t, svc, 90*time.Second)
	if got, err := suite.sim.OCI().LoadBalancer(lb.ID); err == nil && ociLive(got) {
		t.Errorf("load balancer %s outlived its Service", lb.ID)
	}
}

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
