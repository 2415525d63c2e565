//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// TestOCIFidelity runs, through the CCM binary and a real apiserver, what
// cloudsim now plays as the real OCI does (issue 11): a public NLB lists its
// private address too, a tenancy refuses fixed LB shapes, and a FAILED work
// request says why.
func TestOCIFidelity(t *testing.T) {
	startOCIServiceController(t)

	// Item 5: the Service status of a public NLB shows only its public
	// address, and traffic flows through it; with external-ip-only false
	// the private one follows.
	t.Run("public NLB shows only its public address", func(t *testing.T) {
		sel := "oci-nlb-ips"
		n1 := ociLBNode(t, sel)
		for _, externalOnly := range []string{"", "false"} {
			spec := lbServiceSpec("oci-nlb-ips", sel, 8080)
			spec.Annotations[annotations.OCILoadBalancerType.String()] = "nlb"
			want := 1
			if externalOnly != "" {
				spec.Annotations[annotations.OCINLBExternalIPOnly.String()] = externalOnly
				want = 2
			}
			np := nodePort(spec, 8080)
			serve(t, n1.PrivateIP, np, 200, "node-1")
			svc := createService(t, spec)
			vip := waitIngress(t, svc, 90*time.Second)
			svc = getService(t, svc)
			lbs := ociLBsOf(svc.UID)
			if len(lbs) != 1 || lbs[0].IPAddress != vip {
				t.Fatalf("the first ingress IP %s is not the NLB's public address: %+v", vip, lbs)
			}
			ing := svc.Status.LoadBalancer.Ingress
			if len(ing) != want || ing[0].IP != vip {
				t.Fatalf("external-ip-only %q: ingress %+v, want %d address(es), the public %s first", externalOnly, ing, want, vip)
			}
			if want == 2 && (ing[1].IP == vip || ing[1].IP == "") {
				t.Errorf("the private address: %+v", ing)
			}
			waitAnswers(t, fmt.Sprintf("http://%s:8080/", vip), 30*time.Second, "node-1")
		}
	})

	// Item 2: cloudsim refuses fixed shapes (a tenancy created after May
	// 2023); the CCM creates flexible 100-100 Mbps and says so.
	t.Run("fixed shape", func(t *testing.T) {
		sel := "oci-fixed"
		n1 := ociLBNode(t, sel)
		spec := lbServiceSpec("oci-fixed", sel, 8080)
		spec.Annotations[string(annotations.OCILBShape)] = "100Mbps"
		np := nodePort(spec, 8080)
		serve(t, n1.PrivateIP, np, 200, "node-1")
		svc := createService(t, spec)
		vip := waitIngress(t, svc, 90*time.Second)
		svc = getService(t, svc)
		lb := waitOCILB(t, svc.UID, "flexible 100-100", 30*time.Second, func(lb simoci.LoadBalancer) bool {
			return lb.Shape == "flexible" && lb.MinMbps == 100 && lb.MaxMbps == 100
		})
		if lb.IPAddress != vip {
			t.Errorf("VIP %s, ingress %s", lb.IPAddress, vip)
		}
		waitEvent(t, svc, "FixedShapeIsFlexible", []string{"100Mbps is a fixed shape", "100-100 Mbps"}, 30*time.Second)
		waitAnswers(t, fmt.Sprintf("http://%s:8080/", vip), 30*time.Second, "node-1")
	})

	// Items 12 and 13: every NLB creation fails for a while: the Service's
	// Event says why (ListWorkRequestErrors), after a second try with the
	// derived retry token; once OCI works again the Service gets its NLB.
	t.Run("FAILED creation", func(t *testing.T) {
		sel := "oci-failing"
		n1 := ociLBNode(t, sel)
		spec := lbServiceSpec("oci-failing", sel, 8080)
		spec.Annotations[annotations.OCILoadBalancerType.String()] = "nlb"
		np := nodePort(spec, 8080)
		serve(t, n1.PrivateIP, np, 200, "node-1")
		suite.sim.SetFault(cloudsim.Fault{Action: "oci:nlb:CreateNetworkLoadBalancer", ErrorRate: 1, FailTask: true})
		defer suite.sim.ClearFaults()
		svc := createService(t, spec)
		waitEvent(t, svc, "SyncLoadBalancerFailed", []string{"CREATE_NETWORK_LOAD_BALANCER of networkloadbalancer",
			"an internal error occurred", "an earlier creation failed too"}, 90*time.Second)
		suite.sim.ClearFaults()
		vip := waitIngress(t, svc, 120*time.Second)
		waitAnswers(t, fmt.Sprintf("http://%s:8080/", vip), 30*time.Second, "node-1")
		if lbs := ociLBsOf(getService(t, svc).UID); len(lbs) != 1 {
			t.Errorf("live NLBs of the Service: %+v, want 1", lbs)
		}
	})
}
