//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// httpGetFrom GETs url from the local address src: any 127.x address is
// the machine's own, so a client can pose as any source in 127.0.0.0/8,
// and cloudsim's CLB judges it by that address.
func httpGetFrom(src, url string) (string, error) {
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil,
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 2 * time.Second}).DialContext}}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// waitAdmits waits until GETs from each allowed source answer body and
// GETs from each denied source fail.
func waitAdmits(t *testing.T, url string, allowed, denied []string, body string, d time.Duration, why string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		var wrong []string
		for _, src := range allowed {
			if got, err := httpGetFrom(src, url); err != nil || got != body {
				wrong = append(wrong, fmt.Sprintf("%s refused (%v %q)", src, err, got))
			}
		}
		for _, src := range denied {
			if got, err := httpGetFrom(src, url); err == nil {
				wrong = append(wrong, fmt.Sprintf("%s admitted (%q)", src, got))
			}
		}
		if len(wrong) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: after %s: %s", why, d, strings.Join(wrong, "; "))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// managedGroups lists the security groups the CCM made for a Service (by
// the name it gives them; the tag is checked by the clbops tests).
func managedGroups(svc *corev1.Service) []string {
	var out []string
	for _, g := range suite.sim.Tencent().SecurityGroups().List() {
		if g.Name == "ccmkit-"+svc.Namespace+"-"+svc.Name {
			out = append(out, g.ID)
		}
	}
	return out
}

// TestTencentSourceRanges: spec.loadBalancerSourceRanges on a Tencent CLB.
// The CCM's security group on the CLB admits only the ranges: a client
// bound to an allowed 127.x address gets through the VIP, one bound to
// another does not; changing the ranges swaps that within the sync the
// change starts (one ModifySecurityGroupPolicies); removing them opens the
// CLB and deletes the group, and so does deleting the Service.
func TestTencentSourceRanges(t *testing.T) {
	const sel = "sourceranges"
	a, b := shardAddr("127.0.77.1"), shardAddr("127.0.77.2")
	n := lbNode(t, sel)
	spec := lbServiceSpec("sourceranges", sel, 8091)
	spec.Spec.LoadBalancerSourceRanges = []string{a + "/32"}
	serve(t, n.PrivateIP, nodePort(spec, 8091), 200, "node")
	svc := createService(t, spec)
	vip := waitIngress(t, svc, 60*time.Second)
	svc = getService(t, svc)
	url := fmt.Sprintf("http://%s:8091/", vip)
	waitAdmits(t, url, []string{a}, []string{b}, "node", 30*time.Second, "ranges "+a)

	lb := clbsOf(svc.UID)[0]
	groups := managedGroups(svc)
	if len(groups) != 1 || len(lb.SecurityGroups) != 1 || lb.SecurityGroups[0] != groups[0] {
		t.Fatalf("CLB %s bound to %v; the Service's groups are %v: want its one group bound", lb.ID, lb.SecurityGroups, groups)
	}
	waitLBSettled(t, svc, 30*time.Second)

	// Swap the ranges: one policy write, no new group, and the admitted
	// client changes as soon as that sync has run.
	modifies := total(suite.sim.Calls()["ModifySecurityGroupPolicies"])
	creates := total(suite.sim.Calls()["CreateSecurityGroup"])
	svc = updateService(t, svc, func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{b + "/32"} })
	waitAdmits(t, url, []string{b}, []string{a}, "node", 30*time.Second, "ranges changed to "+b)
	waitLBSettled(t, svc, 30*time.Second)
	if m, c := total(suite.sim.Calls()["ModifySecurityGroupPolicies"])-modifies, total(suite.sim.Calls()["CreateSecurityGroup"])-creates; m != 1 || c != 0 {
		t.Errorf("the range change made %d ModifySecurityGroupPolicies and %d CreateSecurityGroup calls, want 1 and 0", m, c)
	}

	// An unchanged resync (a label change starts one) writes no policy.
	modifies = total(suite.sim.Calls()["ModifySecurityGroupPolicies"])
	svc = updateService(t, svc, func(s *corev1.Service) { s.Labels = map[string]string{"resync": "1"} })
	waitLBSettled(t, svc, 30*time.Second)
	if m := total(suite.sim.Calls()["ModifySecurityGroupPolicies"]) - modifies; m != 0 {
		t.Errorf("an unchanged resync rewrote the policies %d times", m)
	}

	// Ranges removed: everyone gets through, the group is unbound and gone.
	svc = updateService(t, svc, func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = nil })
	waitAdmits(t, url, []string{a, b}, nil, "node", 30*time.Second, "ranges removed")
	waitCLB(t, lb.ID, "no security group", 30*time.Second, func(l tencent.CLBLoadBalancer) bool { return len(l.SecurityGroups) == 0 })
	waitGroups(t, svc, 0, 30*time.Second)

	// Back on, then the Service is deleted: its group goes with its CLB.
	svc = updateService(t, svc, func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{a + "/32"} })
	waitAdmits(t, url, []string{a}, []string{b}, "node", 30*time.Second, "ranges "+a+" again")
	waitGroups(t, svc, 1, 30*time.Second)
	deleteService(t, svc)
	waitGroups(t, svc, 0, 30*time.Second)
}

// waitGroups waits until the Service has n managed security groups.
func waitGroups(t *testing.T, svc *corev1.Service, n int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for len(managedGroups(svc)) != n {
		if time.Now().After(deadline) {
			t.Fatalf("Service %s has security groups %v after %s, want %d", svc.Name, managedGroups(svc), d, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
