package oci

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	ocicommon "github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	"github.com/oracle/oci-go-sdk/v65/networkloadbalancer"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/oci/ociapi"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// These tests run the provider against cloudsim where cloudsim plays what
// the real OCI does and an earlier cloudsim did not (issue 11): fixed
// shapes refused, a public NLB's private address, a busy NLB's 409, FAILED
// work requests and their errors, terminated instances kept TERMINATED.

// simNode adds an instance with a loopback server standing for its
// NodePort, and returns its Node and NodePort.
func simNode(t *testing.T, sim *cloudsim.Sim, name, ip string) (*corev1.Node, int) {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatalf("no loopback alias %s: %v", ip, err)
	}
	serveKubeProxy(t, ip)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello from "+name) })}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	added, err := sim.AddInstances(cloudsim.Instance{Name: name, PrivateIP: ip, VpcID: simVCN, SubnetID: simSubnet, CompartmentID: simCompartment})
	if err != nil {
		t.Fatal(err)
	}
	return node(name, internalIP(ip), providerID("oci://"+added[0].OCID)), ln.Addr().(*net.TCPAddr).Port
}

func ingressIPs(st *corev1.LoadBalancerStatus) []string {
	var out []string
	for _, in := range st.Ingress {
		out = append(out, in.IP)
	}
	return out
}

// Item 2: a fixed shape works in a tenancy created after May 2023 (which
// refuses fixed shapes: the default) and in an older one: it is created
// flexible with min = max; in an older tenancy a load balancer that already
// has the fixed shape is left as it is.
func TestCloudsimFixedShape(t *testing.T) {
	for _, older := range []bool{false, true} {
		t.Run(map[bool]string{false: "tenancy after May 2023", true: "older tenancy"}[older], func(t *testing.T) {
			sim, c, cfg := startSimWith(t, func(o *cloudsim.Options) { o.OCI.FixedShapes = older })
			n, nodePort := simNode(t, sim, "shape-node", "127.0.53.1")
			events := record.NewFakeRecorder(10)
			c.lb.UseRecorder(events)
			svc := lbService(map[string]string{string(annotations.OCILBShape): "100Mbps"},
				corev1.ServicePort{Protocol: corev1.ProtocolTCP, Port: 8080, NodePort: int32(nodePort)})
			svc.UID = types.UID(fmt.Sprintf("uid-fixed-%v", older))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			st, err := c.lb.EnsureLoadBalancer(ctx, "k", svc, []*corev1.Node{n})
			if err != nil {
				t.Fatal(err)
			}
			if body, err := getUntil(ctx, fmt.Sprintf("http://%s:8080/", st.Ingress[0].IP)); err != nil || body != "hello from shape-node" {
				t.Fatalf("through the VIP: %q %v", body, err)
			}
			lbs := sim.OCI().LoadBalancers()
			if len(lbs) != 1 || lbs[0].Shape != "flexible" || lbs[0].MinMbps != 100 || lbs[0].MaxMbps != 100 {
				t.Fatalf("load balancers: %+v", lbs)
			}
			if len(events.Events) == 0 || !strings.Contains(<-events.Events, EventReasonFixedShape) {
				t.Error("no Warning Event")
			}
			if err := c.lb.EnsureLoadBalancerDeleted(ctx, "k", svc); err != nil {
				t.Fatal(err)
			}
			if !older {
				return
			}
			// A load balancer made with the fixed shape before (by hand,
			// or an earlier CCM) is kept, not reported as a shape change.
			cl, err := ociapi.New(clientOptions(cfg, mustCredentials(t, cfg)))
			if err != nil {
				t.Fatal(err)
			}
			svc.UID = "uid-fixed-existing"
			name := fmt.Sprintf("TCP-%d", 8080)
			_, err = cl.LB.CreateLoadBalancer(ctx, loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: loadbalancer.CreateLoadBalancerDetails{
				CompartmentId: ocicommon.String(simCompartment), DisplayName: ocicommon.String(string(svc.UID)), ShapeName: ocicommon.String("100Mbps"),
				SubnetIds: []string{simSubnet}, IsPrivate: ocicommon.Bool(false),
				BackendSets: map[string]loadbalancer.BackendSetDetails{name: {Policy: ocicommon.String("ROUND_ROBIN"),
					HealthChecker: &loadbalancer.HealthCheckerDetails{Protocol: ocicommon.String("TCP"), Port: ocicommon.Int(nodePort)}}},
				Listeners: map[string]loadbalancer.ListenerDetails{name: {DefaultBackendSetName: ocicommon.String(name), Port: ocicommon.Int(8080), Protocol: ocicommon.String("TCP")}},
			}})
			if err != nil {
				t.Fatalf("a fixed shape in an older tenancy: %v", err)
			}
			if _, err := getUntilOK(ctx, func() error {
				_, exists, err := c.lb.GetLoadBalancer(ctx, "k", svc)
				if err == nil && !exists {
					err = errors.New("not yet")
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.lb.EnsureLoadBalancer(ctx, "k", svc, []*corev1.Node{n}); err != nil {
				t.Fatalf("Ensure of an existing 100Mbps load balancer: %v", err)
			}
			if err := c.lb.EnsureLoadBalancerDeleted(ctx, "k", svc); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// getUntilOK retries f for up to ten seconds.
func getUntilOK(ctx context.Context, f func() error) (int, error) {
	var err error
	for i := 0; i < 100 && ctx.Err() == nil; i++ {
		if err = f(); err == nil {
			return i, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return 0, err
}

// Item 5: cloudsim lists a public NLB's private address too (IsPublic
// false); the status has only the public one, which carries the traffic,
// unless external-ip-only is false (then public first).
func TestCloudsimNLBPublicAddresses(t *testing.T) {
	sim, c := startSim(t)
	n, nodePort := simNode(t, sim, "nlb-node", "127.0.54.1")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tt := range []struct {
		externalOnly string
		want         int
	}{{"", 1}, {"false", 2}} {
		ann := map[string]string{annotations.OCILoadBalancerType.String(): "nlb"}
		if tt.externalOnly != "" {
			ann[annotations.OCINLBExternalIPOnly.String()] = tt.externalOnly
		}
		svc := lbService(ann, corev1.ServicePort{Protocol: corev1.ProtocolTCP, Port: 8080, NodePort: int32(nodePort)})
		svc.UID = types.UID("uid-nlb-ips" + tt.externalOnly)
		st, err := c.lb.EnsureLoadBalancer(ctx, "k", svc, []*corev1.Node{n})
		if err != nil {
			t.Fatal(err)
		}
		var vip string
		for _, l := range sim.OCI().LoadBalancers() {
			if l.DisplayName == string(svc.UID) {
				vip = l.IPAddress
			}
		}
		got := ingressIPs(st)
		if len(got) != tt.want || got[0] != vip || (tt.want == 2 && !strings.HasPrefix(got[1], "127.0.")) {
			t.Fatalf("external-ip-only %q: status %v, want the public VIP %s first (%d addresses)", tt.externalOnly, got, vip, tt.want)
		}
		if body, err := getUntil(ctx, fmt.Sprintf("http://%s:8080/", got[0])); err != nil || body != "hello from nlb-node" {
			t.Fatalf("through %s: %q %v", got[0], body, err)
		}
		if st2, exists, err := c.lb.GetLoadBalancer(ctx, "k", svc); err != nil || !exists || strings.Join(ingressIPs(st2), ",") != strings.Join(got, ",") {
			t.Fatalf("GetLoadBalancer: %v %v %v, want %v", st2, exists, err, got)
		}
	}
}

// Item 11: an NLB with a work request in flight is UPDATING, and a change
// of it answers 409 Conflict: Ensure waits while it is UPDATING, and a 409
// (a change started between its read and its write) asks for a retry later
// after one attempt, not a loop. The classic LB queues the change, and
// Ensure waits for it.
func TestCloudsimBusy(t *testing.T) {
	sim, c, cfg := startSimWith(t, func(o *cloudsim.Options) { o.OCI.WorkRequestLatency = time.Second })
	n1, nodePort := simNode(t, sim, "busy-1", "127.0.55.1")
	n2, _ := simNode(t, sim, "busy-2", "127.0.55.2")
	cl, err := ociapi.New(clientOptions(cfg, mustCredentials(t, cfg)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, kind := range []string{"nlb", "lb"} {
		t.Run(kind, func(t *testing.T) {
			svc := lbService(map[string]string{annotations.OCILoadBalancerType.String(): kind},
				corev1.ServicePort{Protocol: corev1.ProtocolTCP, Port: 8080, NodePort: int32(nodePort)})
			svc.UID = types.UID("uid-busy-" + kind)
			if _, err := c.lb.EnsureLoadBalancer(ctx, "k", svc, []*corev1.Node{n1}); err != nil {
				t.Fatal(err)
			}
			var id string
			for _, l := range sim.OCI().LoadBalancers() {
				if l.DisplayName == string(svc.UID) {
					id = l.ID
				}
			}
			// Someone else's change, in flight for a second.
			if kind == "nlb" {
				_, err = cl.NLB.UpdateNetworkLoadBalancer(ctx, networkloadbalancer.UpdateNetworkLoadBalancerRequest{NetworkLoadBalancerId: &id,
					UpdateNetworkLoadBalancerDetails: networkloadbalancer.UpdateNetworkLoadBalancerDetails{FreeformTags: map[string]string{"by": "hand"}}})
			} else {
				_, err = cl.LB.UpdateLoadBalancer(ctx, loadbalancer.UpdateLoadBalancerRequest{LoadBalancerId: &id,
					UpdateLoadBalancerDetails: loadbalancer.UpdateLoadBalancerDetails{FreeformTags: map[string]string{"by": "hand"}}})
			}
			if err != nil {
				t.Fatal(err)
			}
			sim.ResetCalls()
			_, err := c.lb.EnsureLoadBalancer(ctx, "k", svc, []*corev1.Node{n1, n2})
			calls := sim.Calls()
			if kind == "lb" {
				if err != nil || calls["oci:UpdateBackendSet"]["OK"] != 1 {
					t.Fatalf("Ensure of an LB with a change in flight: %v (calls %v), want the change queued", err, calls["oci:UpdateBackendSet"])
				}
			} else {
				// The NLB shows UPDATING: Ensure waits for it, and writes
				// once it is ACTIVE, without a 409.
				if err != nil || calls["oci:nlb:UpdateBackendSet"]["OK"] != 1 || len(calls["oci:nlb:UpdateBackendSet"]) != 1 {
					t.Fatalf("Ensure of an UPDATING NLB: %v (calls %v)", err, calls["oci:nlb:UpdateBackendSet"])
				}
				// A change that starts between our read and our write gets
				// the 409 Conflict: a retry later, after one attempt.
				sim.SetFault(cloudsim.Fault{Action: "oci:nlb:UpdateBackendSet", ErrorRate: 1, HTTPStatus: http.StatusConflict, ErrorCode: "Conflict"})
				sim.ResetCalls()
				_, err = c.lb.EnsureLoadBalancer(ctx, "k", svc, []*corev1.Node{n1})
				sim.ClearFaults()
				var re *api.RetryError
				if !errors.As(err, &re) || !strings.Contains(err.Error(), "Conflict") {
					t.Fatalf("Ensure answered 409 Conflict: %v, want a RetryError", err)
				}
				if got := sim.Calls()["oci:nlb:UpdateBackendSet"]; got["HTTP409"] != 1 || len(got) != 1 {
					t.Errorf("UpdateBackendSet calls %v, want one 409", got)
				}
				if _, err := c.lb.EnsureLoadBalancer(ctx, "k", svc, []*corev1.Node{n1}); err != nil {
					t.Fatalf("the retry: %v", err)
				}
			}
			if err := c.lb.EnsureLoadBalancerDeleted(ctx, "k", svc); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Items 12 and 13: the first creation's work request FAILS (an injected
// task fault); the provider creates again with a second, derived retry
// token (the first would replay the failure) after deleting the FAILED
// load balancer. A FAILED change's reason (LB: errorDetails; NLB:
// ListWorkRequestErrors) is in the error, which the service controller puts
// in its Event.
func TestCloudsimFailedWorkRequests(t *testing.T) {
	sim, c := startSim(t)
	n1, nodePort := simNode(t, sim, "fail-1", "127.0.56.1")
	n2, _ := simNode(t, sim, "fail-2", "127.0.56.2")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, kind := range []string{"lb", "nlb"} {
		t.Run(kind, func(t *testing.T) {
			prefix, op, update := "oci:", "CreateLoadBalancer", "UpdateBackendSet of loadbalancer"
			if kind == "nlb" {
				prefix, op, update = "oci:nlb:", "CreateNetworkLoadBalancer", "UPDATE_BACKENDSET of networkloadbalancer"
			}
			sim.ResetCalls()
			sim.SetFault(cloudsim.Fault{Action: prefix + op, ErrorRate: 1, FailTask: true})
			go func() { // only the first creation fails
				for ctx.Err() == nil && sim.Calls()[prefix+op]["OK"] == 0 {
					time.Sleep(time.Millisecond)
				}
				sim.ClearFaults()
			}()
			svc := lbService(map[string]string{annotations.OCILoadBalancerType.String(): kind},
				corev1.ServicePort{Protocol: corev1.ProtocolTCP, Port: 8080, NodePort: int32(nodePort)})
			svc.UID = types.UID("uid-fail-" + kind)
			st, err := c.lb.EnsureLoadBalancer(ctx, "k", svc, []*corev1.Node{n1})
			if err != nil {
				t.Fatalf("Ensure after a FAILED creation: %v", err)
			}
			if body, err := getUntil(ctx, fmt.Sprintf("http://%s:8080/", st.Ingress[0].IP)); err != nil || body != "hello from fail-1" {
				t.Fatalf("through the VIP: %q %v", body, err)
			}
			calls := sim.Calls()
			if calls[prefix+op]["OK"] != 2 || calls[prefix+"Delete"+strings.TrimPrefix(op, "Create")]["OK"] != 1 {
				t.Errorf("calls: %v %v", calls[prefix+op], calls[prefix+"Delete"+strings.TrimPrefix(op, "Create")])
			}
			live := 0
			for _, l := range sim.OCI().LoadBalancers() {
				if l.DisplayName == string(svc.UID) && l.LifecycleState != "DELETED" {
					live++
				}
			}
			if live != 1 {
				t.Errorf("%d live load balancers named %s, want 1", live, svc.UID)
			}

			// A FAILED update: its reason is in the error.
			sim.SetFault(cloudsim.Fault{Action: prefix + "UpdateBackendSet", ErrorRate: 1, FailTask: true})
			_, err = c.lb.EnsureLoadBalancer(ctx, "k", svc, []*corev1.Node{n1, n2})
			sim.ClearFaults()
			if err == nil || !strings.Contains(err.Error(), update) || !strings.Contains(err.Error(), "injected task failure") {
				t.Fatalf("a FAILED update: %v, want its reason", err)
			}
			if kind == "nlb" && sim.Calls()["oci:nlb:ListWorkRequestErrors"]["OK"] == 0 {
				t.Error("ListWorkRequestErrors was not called")
			}
			if err := c.lb.EnsureLoadBalancerDeleted(ctx, "k", svc); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Item 14: a terminated instance stays visible as TERMINATED (OCI: "at
// least 12 hours"): the node is gone, from one GetInstance, without the
// 404 confirmation listing, and is not shut down. Once it is purged
// (retention over), GetInstance answers 404, and the listing confirms it.
func TestCloudsimTerminatedInstances(t *testing.T) {
	sim, c, _ := startSimWith(t, func(o *cloudsim.Options) { o.TerminatedLinger = 100 * time.Millisecond })
	added, err := sim.AddInstances(
		cloudsim.Instance{Name: "term-a", PrivateIP: "127.0.57.1", VpcID: simVCN, SubnetID: simSubnet, CompartmentID: simCompartment},
		cloudsim.Instance{Name: "term-b", PrivateIP: "127.0.57.2", VpcID: simVCN, SubnetID: simSubnet, CompartmentID: simCompartment},
	)
	if err != nil {
		t.Fatal(err)
	}
	c.instances.stateMaxAge = 0
	iv2, _ := c.InstancesV2()
	ctx := context.Background()
	for _, in := range added {
		if err := sim.SetInstanceState(in.ID, "TERMINATING"); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond) // past the fleet's linger: Tencent's view has dropped them
	if len(sim.Instances()) != 0 {
		t.Fatalf("the fleet still shows %d instances", len(sim.Instances()))
	}
	a := node("term-a", providerID("oci://"+added[0].OCID))
	sim.ResetCalls()
	if ok, err := iv2.InstanceExists(ctx, a); ok || err != nil {
		t.Fatalf("exists (TERMINATED) = %v, %v", ok, err)
	}
	if calls := sim.Calls(); calls["oci:ListInstances"]["OK"] != 0 || calls["oci:GetInstance"]["OK"] == 0 {
		t.Errorf("calls %v: TERMINATED needs one GetInstance, no confirmation listing", calls)
	}
	if down, err := iv2.InstanceShutdown(ctx, a); down || err != nil {
		t.Errorf("shutdown (TERMINATED) = %v, %v", down, err)
	}
	if _, err := iv2.InstanceMetadata(ctx, node("term-a")); err == nil {
		t.Error("metadata by name of a TERMINATED instance: no error")
	}

	// The 404 path: retention over.
	if err := sim.OCI().PurgeTerminated(added[1].OCID); err != nil {
		t.Fatal(err)
	}
	b := node("term-b", providerID("oci://"+added[1].OCID))
	sim.ResetCalls()
	if ok, err := iv2.InstanceExists(ctx, b); ok || err != nil {
		t.Fatalf("exists (404) = %v, %v", ok, err)
	}
	if calls := sim.Calls(); calls["oci:GetInstance"]["NotAuthorizedOrNotFound"] == 0 || calls["oci:ListInstances"]["OK"] == 0 {
		t.Errorf("calls %v: a 404 is confirmed by a listing", calls)
	}
}
