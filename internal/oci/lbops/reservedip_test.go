package lbops

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"
)

// reservePublicIP reserves a public IP in cloudsim and returns its address.
func (e *lbEnv) reservePublicIP() string {
	e.t.Helper()
	resp, err := e.api.Network.CreatePublicIp(context.Background(), core.CreatePublicIpRequest{CreatePublicIpDetails: core.CreatePublicIpDetails{
		CompartmentId: common.String(testCompartment), Lifetime: core.CreatePublicIpDetailsLifetimeReserved}})
	if err != nil {
		e.t.Fatal(err)
	}
	e.resetWrites()
	return *resp.IpAddress
}

func (e *lbEnv) publicIPState(ip string) core.PublicIpLifecycleStateEnum {
	e.t.Helper()
	resp, err := e.api.Network.GetPublicIpByIpAddress(context.Background(), core.GetPublicIpByIpAddressRequest{
		GetPublicIpByIpAddressDetails: core.GetPublicIpByIpAddressDetails{IpAddress: &ip}})
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.LifecycleState
}

// onlyLBWrites drops the public IP lookups (a POST) from the writes.
func onlyLBWrites(ws []string) []string {
	return slices.DeleteFunc(ws, func(w string) bool { return strings.Contains(w, "publicIps") || strings.HasPrefix(w, "Create ") })
}

// TestReservedIPAtCreation: the load balancer of either kind is created
// with the reserved IP spec.loadBalancerIP names, the status shows it, and
// an unchanged resync makes no write and no lookup.
func TestReservedIPAtCreation(t *testing.T) {
	for _, kind := range []Kind{KindLB, KindNLB} {
		t.Run(string(kind), func(t *testing.T) {
			env := newLBEnv(t)
			o := newTestOps(env)
			ip := env.reservePublicIP()
			d := desired(kind, "10.0.0.1")
			d.LoadBalancerIP = ip
			st, err := o.Ensure(context.Background(), d)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Ingress) != 1 || st.Ingress[0].IP != ip || env.only(kind).IPAddress != ip {
				t.Fatalf("status %+v, load balancer at %s; want the reserved %s", st, env.only(kind).IPAddress, ip)
			}
			if s := env.publicIPState(ip); s != core.PublicIpLifecycleStateAssigned {
				t.Errorf("reserved IP is %s, want ASSIGNED", s)
			}
			env.resetWrites()
			if _, err := o.Ensure(context.Background(), d); err != nil {
				t.Fatal(err)
			}
			if w := env.writesOf(); len(w) != 0 {
				t.Errorf("an unchanged resync wrote (or looked up): %v", w)
			}
		})
	}
}

// TestReservedIPRefused: an address that is no public IP, or one another
// load balancer holds, creates nothing and says which address and why; a
// changed loadBalancerIP after creation is reported, the rest reconciled.
func TestReservedIPRefused(t *testing.T) {
	env := newLBEnv(t)
	o := newTestOps(env)
	taken := env.reservePublicIP()
	other := desired(KindNLB, "10.0.0.9")
	other.Ref.UID, other.Name, other.LoadBalancerIP = "uid-other", "uid-other", taken
	if _, err := o.Ensure(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, ip string
		want     []string
	}{
		{"not a public IP", "203.0.113.7", []string{"spec.loadBalancerIP 203.0.113.7", "not a public IP"}},
		{"assigned elsewhere", taken, []string{"spec.loadBalancerIP " + taken, "ASSIGNED", "not AVAILABLE"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env.resetWrites()
			d := desired(KindLB, "10.0.0.1")
			d.LoadBalancerIP = tc.ip
			_, err := o.Ensure(context.Background(), d)
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Fatalf("err = %v, want it to say %q", err, w)
				}
			}
			if w := onlyLBWrites(env.writesOf()); len(w) != 0 || len(env.balancers(KindLB)) != 0 {
				t.Errorf("writes %v, %d load balancers: nothing may be created", w, len(env.balancers(KindLB)))
			}
		})
	}

	// Changed after creation: reported, backends still reconciled.
	fresh := env.reservePublicIP()
	other.LoadBalancerIP = fresh
	other.Backends = append(other.Backends, desired(KindNLB, "10.0.0.8").Backends...)
	env.resetWrites()
	_, err := o.Ensure(context.Background(), other)
	if err == nil || !strings.Contains(err.Error(), "reserved public IP is "+taken+" but spec.loadBalancerIP is "+fresh) {
		t.Fatalf("err = %v", err)
	}
	if w := env.writesOf(); !slices.Equal(w, []string{"UpdateBackendSet TCP-80"}) {
		t.Errorf("writes = %v: the backends must still be reconciled", w)
	}
	other.LoadBalancerIP = ""
	if _, err := o.Ensure(context.Background(), other); err == nil || !strings.Contains(err.Error(), "holds reserved public IP "+taken) {
		t.Fatalf("cleared loadBalancerIP: err = %v", err)
	}
}

func TestReservedIPDiff(t *testing.T) {
	a := func(ips ...ipModel) *actual { return &actual{IPs: ips} }
	for _, tc := range []struct {
		name string
		want string
		a    *actual
		diff string
	}{
		{"none asked, none held", "", a(ipModel{IP: "1.1.1.1", Public: true}), ""},
		{"same", "1.1.1.1", a(ipModel{IP: "1.1.1.1", Public: true, Reserved: true}), ""},
		{"asked, not held", "1.1.1.1", a(ipModel{IP: "1.1.1.1", Public: true}), "created without a reserved IP"},
		{"held, not asked", "", a(ipModel{IP: "2.2.2.2", Public: true, Reserved: true}), "holds reserved public IP 2.2.2.2"},
		{"other", "1.1.1.1", a(ipModel{IP: "10.0.0.3"}, ipModel{IP: "2.2.2.2", Public: true, Reserved: true}), "is 2.2.2.2 but spec.loadBalancerIP is 1.1.1.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &Desired{Settings: Settings{LoadBalancerIP: tc.want}}
			got := reservedIPDiff(d, tc.a)
			if (tc.diff == "") != (got == "") || !strings.Contains(got, tc.diff) {
				t.Errorf("reservedIPDiff = %q, want %q", got, tc.diff)
			}
		})
	}
}
