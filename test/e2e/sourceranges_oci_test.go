//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/annotations"
)

// Clients of the source range scenarios: loopback addresses outside the
// suite's VCN (127.0.0.0/16), so that only the load balancer's ingress
// rules decide, as for clients on the internet (and outside the
// 127.1.x.y public addresses of the instances).
const (
	srcClientA = "127.3.0.10"
	srcClientB = "127.4.0.10"
	srcRangeA  = "127.3.0.0/24"
	srcRangeB  = "127.4.0.0/24"
)

// waitReach waits until a GET of url from src answers want (reach) or
// fails (!reach), and returns how long that took.
func waitReach(t *testing.T, src, url string, reach bool, want string, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		body, err := httpGetFrom(src, url)
		if reach && err == nil && body != want {
			t.Fatalf("GET %s from %s answered %q, want %q", url, src, body, want)
		}
		if (err == nil) == reach {
			return time.Since(start)
		}
		if time.Since(start) > d {
			t.Fatalf("GET %s from %s: reachable=%v after %s, want %v (last error %v)", url, src, !reach, d, reach, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// assertReach checks that GETs of url from src keep answering (or failing)
// for a while: a denied client stays denied, not only once.
func assertReach(t *testing.T, src, url string, reach bool) {
	t.Helper()
	for range 5 {
		_, err := httpGetFrom(src, url)
		if (err == nil) != reach {
			t.Fatalf("GET %s from %s: error %v, want reachable=%v", url, src, err, reach)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestOCISourceRanges: spec.loadBalancerSourceRanges on an OCI Load
// Balancer and a Network Load Balancer in security list mode Frontend. The
// load balancer subnet's list (ociFrontendLBList) starts with no listener
// rule, so a client gets through the VIP only by the rule the CCM writes
// for its range: a client bound to an allowed address answers, one bound to
// another is refused; changing the ranges swaps them with one write of the
// list, and no ranges admit everyone (0.0.0.0/0).
func TestOCISourceRanges(t *testing.T) {
	startOCIServiceController(t)
	seedOCIFirewallSubnets(t)
	for _, tc := range []struct {
		kind                        string
		typ, mode, subnet           annotations.Name
		hcInterval, hcTimeout, hcRe annotations.Name
	}{
		{"lb", "", annotations.OCILBSecurityListManagementMode.Name, annotations.OCILBSubnet1,
			annotations.OCILBHealthCheckInterval.Name, annotations.OCILBHealthCheckTimeout.Name, annotations.OCILBHealthCheckRetries.Name},
		{"nlb", annotations.OCILoadBalancerType.Name, annotations.OCINLBSecurityListManagementMode.Name, annotations.OCINLBSubnet,
			annotations.OCINLBHealthCheckInterval.Name, annotations.OCINLBHealthCheckTimeout.Name, annotations.OCINLBHealthCheckRetries.Name},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			sel := "oci-src-" + tc.kind
			n := ociLBNode(t, sel)
			spec := lbServiceSpec("oci-src-"+tc.kind, sel, 8086)
			if tc.typ != "" {
				spec.Annotations[string(tc.typ)] = tc.kind
			}
			spec.Annotations[string(tc.mode)] = "Frontend"
			spec.Annotations[string(tc.subnet)] = ociFrontendLBSubnet
			spec.Annotations[string(tc.hcInterval)] = "1000"
			spec.Annotations[string(tc.hcTimeout)] = "500"
			spec.Annotations[string(tc.hcRe)] = "1"
			spec.Spec.LoadBalancerSourceRanges = []string{srcRangeA}
			np := nodePort(spec, 8086)
			serve(t, n.PrivateIP, np, 200, "node")
			svc := createService(t, spec)
			url := fmt.Sprintf("http://%s:8086/", waitIngress(t, svc, 90*time.Second))
			svc = getService(t, svc)
			uid := string(svc.UID)

			waitReach(t, srcClientA, url, true, "node", 30*time.Second)
			assertReach(t, srcClientB, url, false)
			if ours, _ := securityList(t, ociFrontendLBList, uid); !slices.Equal(ours, []string{"in " + srcRangeA + " 6 8086-8086"}) {
				t.Errorf("rules for range A = %v", ours)
			}

			// The ranges changed: the next sync rewrites the list once, and
			// the clients swap.
			for _, step := range []struct {
				ranges []string
				rule   string
				a, b   bool
			}{
				{[]string{srcRangeB}, srcRangeB, false, true},
				{nil, "0.0.0.0/0", true, true},
			} {
				before := ociCalls("UpdateSecurityList")
				svc = updateService(t, svc, func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = step.ranges })
				took := waitReach(t, srcClientB, url, step.b, "node", 30*time.Second)
				took = max(took, waitReach(t, srcClientA, url, step.a, "node", 30*time.Second))
				assertReach(t, srcClientA, url, step.a)
				assertReach(t, srcClientB, url, step.b)
				t.Logf("ranges %v: clients swapped within %s", step.ranges, took.Round(time.Millisecond))
				if ours, _ := securityList(t, ociFrontendLBList, uid); !slices.Equal(ours, []string{"in " + step.rule + " 6 8086-8086"}) {
					t.Errorf("ranges %v: rules %v", step.ranges, ours)
				}
				if w := ociCalls("UpdateSecurityList") - before; w != 1 {
					t.Errorf("ranges %v: %d UpdateSecurityList calls, want 1 (one sync)", step.ranges, w)
				}
			}

			deleteService(t, svc)
			if ours, _ := securityList(t, ociFrontendLBList, uid); len(ours) != 0 {
				t.Errorf("rules left after the Service was deleted: %v", ours)
			}
		})
	}
}
