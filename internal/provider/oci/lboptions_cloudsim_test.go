package oci

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	ocicommon "github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/oci/ociapi"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// Issue 14 items 4 and 6 against cloudsim, for both kinds: the load
// balancer takes the reserved public IP spec.loadBalancerIP names, the
// status shows it with the ipMode asked for, traffic flows through it, the
// initial tags are on it; a policy change is one UpdateBackendSet, an
// unchanged resync writes nothing, a changed loadBalancerIP is an error
// naming both addresses, and the deletion returns the reserved IP.
func TestCloudsimReservedIPAndOptions(t *testing.T) {
	sim, c, cfg := startSimWith(t, nil)
	n, nodePort := simNode(t, sim, "opts-1", "127.0.58.1")
	cl, err := ociapi.New(clientOptions(cfg, mustCredentials(t, cfg)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	reserve := func() string {
		t.Helper()
		resp, err := cl.Network.CreatePublicIp(ctx, ocicore.CreatePublicIpRequest{CreatePublicIpDetails: ocicore.CreatePublicIpDetails{
			CompartmentId: ocicommon.String(cfg.Compartment), Lifetime: ocicore.CreatePublicIpDetailsLifetimeReserved}})
		if err != nil {
			t.Fatal(err)
		}
		return *resp.IpAddress
	}
	stateOf := func(ip string) ocicore.PublicIpLifecycleStateEnum {
		t.Helper()
		resp, err := cl.Network.GetPublicIpByIpAddress(ctx, ocicore.GetPublicIpByIpAddressRequest{
			GetPublicIpByIpAddressDetails: ocicore.GetPublicIpByIpAddressDetails{IpAddress: &ip}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.LifecycleState
	}
	writes := func() []string {
		var out []string
		for action := range sim.Calls() {
			if !strings.Contains(action, "Get") && !strings.Contains(action, "List") {
				out = append(out, action)
			}
		}
		return out
	}
	for _, tc := range []struct {
		kind                 string
		freeform, policy     annotations.Name
		policyA, policyB     string
		updateBackendSetCall string
	}{
		{"lb", annotations.OCIInitialFreeformTags, annotations.OCILBPolicy.Name, "LEAST_CONNECTIONS", "IP_HASH", "oci:UpdateBackendSet"},
		{"nlb", annotations.OCINLBInitialFreeformTags, annotations.OCINLBBackendPolicy.Name, "THREE_TUPLE", "TWO_TUPLE", "oci:nlb:UpdateBackendSet"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			ip := reserve()
			svc := lbService(map[string]string{
				annotations.OCILoadBalancerType.String(): tc.kind,
				annotations.OCIIngressIPMode.String():    "proxy",
				string(tc.freeform):                      `{"team":"web"}`,
				string(tc.policy):                        tc.policyA,
			}, corev1.ServicePort{Protocol: corev1.ProtocolTCP, Port: 8080, NodePort: int32(nodePort)})
			svc.UID = types.UID("uid-opts-" + tc.kind)
			svc.Spec.LoadBalancerIP = ip
			st, err := c.lb.EnsureLoadBalancer(ctx, "k", svc, []*corev1.Node{n})
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Ingress) != 1 || st.Ingress[0].IP != ip || st.Ingress[0].IPMode == nil || *st.Ingress[0].IPMode != corev1.LoadBalancerIPModeProxy {
				t.Fatalf("status %+v, want the reserved %s with ipMode Proxy", st.Ingress, ip)
			}
			if body, err := getUntil(ctx, fmt.Sprintf("http://%s:8080/", ip)); err != nil || body != "hello from opts-1" {
				t.Fatalf("through the reserved IP %s: %q, %v", ip, body, err)
			}
			if s := stateOf(ip); s != ocicore.PublicIpLifecycleStateAssigned {
				t.Errorf("reserved IP is %s, want ASSIGNED", s)
			}
			var found simoci.LoadBalancer
			for _, l := range sim.OCI().LoadBalancers() {
				if l.DisplayName == string(svc.UID) {
					found = l
				}
			}
			if found.FreeformTags["team"] != "web" || found.FreeformTags["ccmkit-service-uid"] != string(svc.UID) {
				t.Errorf("freeform tags %v: want the initial ones and ours", found.FreeformTags)
			}
			if got, exists, err := c.lb.GetLoadBalancer(ctx, "k", svc); err != nil || !exists || got.Ingress[0].IPMode == nil {
				t.Errorf("GetLoadBalancer: %+v %v %v, want the same ipMode", got, exists, err)
			}

			sim.ResetCalls()
			svc.Annotations[string(tc.policy)] = tc.policyB
			if _, err := c.lb.EnsureLoadBalancer(ctx, "k", svc, []*corev1.Node{n}); err != nil {
				t.Fatal(err)
			}
			// A tag change is not applied: initial means at creation.
			svc.Annotations[string(tc.freeform)] = `{"team":"other"}`
			if w := writes(); len(w) != 1 || w[0] != tc.updateBackendSetCall {
				t.Errorf("a policy change wrote %v, want one %s", w, tc.updateBackendSetCall)
			}
			sim.ResetCalls()
			if _, err := c.lb.EnsureLoadBalancer(ctx, "k", svc, []*corev1.Node{n}); err != nil {
				t.Fatal(err)
			}
			if w := writes(); len(w) != 0 {
				t.Errorf("an unchanged resync (tags edited) wrote %v", w)
			}

			other := reserve()
			svc.Spec.LoadBalancerIP = other
			if _, err := c.lb.EnsureLoadBalancer(ctx, "k", svc, []*corev1.Node{n}); err == nil ||
				!strings.Contains(err.Error(), ip) || !strings.Contains(err.Error(), other) {
				t.Errorf("changed loadBalancerIP: err = %v, want both addresses named", err)
			}
			if err := c.lb.EnsureLoadBalancerDeleted(ctx, "k", svc); err != nil {
				t.Fatal(err)
			}
			if s := stateOf(ip); s != ocicore.PublicIpLifecycleStateAvailable {
				t.Errorf("after the deletion the reserved IP is %s, want AVAILABLE", s)
			}
		})
	}
}
