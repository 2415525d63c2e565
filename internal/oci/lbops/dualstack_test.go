package lbops

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// dualStackEnv is an lbEnv whose subnet A has an IPv6 prefix.
func dualStackEnv(t *testing.T) *lbEnv {
	return newLBEnvWith(t, func(o *cloudsim.Options) {
		for i := range o.OCI.Network.Subnets {
			if o.OCI.Network.Subnets[i].ID == subnetA {
				o.OCI.Network.Subnets[i].IPv6CIDRBlocks = []string{"fd00:a::/64"}
			}
		}
	})
}

// dualDesired is desired(KindNLB) of IP version v, the nodes' IPv6
// addresses being fd00:1::<last IPv4 byte>; "10.0.0.3" has none.
func dualDesired(v string, ips ...string) *Desired {
	d := desired(KindNLB, ips...)
	d.IPVersion = v
	for i := range d.Backends {
		if b := &d.Backends[i]; b.Address != "10.0.0.3" {
			b.AddressV6 = "fd00:1::" + b.Address[strings.LastIndex(b.Address, ".")+1:]
		}
	}
	return d
}

// TestDualStackNLB: a dual-stack Service's NLB is IPV4_AND_IPV6 with an
// IPv4 and an IPv6 listener and backend set per port (the IPv6 set holding
// the nodes' IPv6 addresses, none for a node without one), and both
// addresses in the status, IPv4 first; an unchanged resync writes nothing;
// a node's change reaches both sets.
func TestDualStackNLB(t *testing.T) {
	env := dualStackEnv(t)
	o := newTestOps(env)
	d := dualDesired(IPVersionDual, "10.0.0.1", "10.0.0.2", "10.0.0.3")
	d.AssignedIPv6 = "fd00:a::77"
	st, err := o.Ensure(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	lb := env.only(KindNLB)
	if len(st.Ingress) != 2 || st.Ingress[0].IP != lb.IPAddress || st.Ingress[1].IP != "fd00:a::77" {
		t.Errorf("status = %+v, want %s then fd00:a::77", st.Ingress, lb.IPAddress)
	}
	got, err := env.api.NLB.GetNetworkLoadBalancer(context.Background(), networkloadbalancer.GetNetworkLoadBalancerRequest{NetworkLoadBalancerId: &lb.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got.NlbIpVersion != networkloadbalancer.NlbIpVersionIpv4AndIpv6 {
		t.Errorf("nlbIpVersion = %s", got.NlbIpVersion)
	}
	sets := map[string]string{}
	for name, bs := range got.BackendSets {
		var bes []string
		for _, b := range bs.Backends {
			bes = append(bes, fmt.Sprintf("%s:%d", *b.IpAddress, *b.Port))
		}
		slices.Sort(bes)
		sets[name] = fmt.Sprintf("%s %v", bs.IpVersion, bes)
	}
	want := map[string]string{
		"TCP-80":      "IPV4 [10.0.0.1:30080 10.0.0.2:30080 10.0.0.3:30080]",
		"TCP-80-IPv6": "IPV6 [fd00:1::1:30080 fd00:1::2:30080]",
	}
	if fmt.Sprint(sets) != fmt.Sprint(want) {
		t.Errorf("backend sets = %v, want %v", sets, want)
	}
	for name, l := range got.Listeners {
		if wantV := map[string]string{"TCP-80": "IPV4", "TCP-80-IPv6": "IPV6"}[name]; string(l.IpVersion) != wantV || *l.DefaultBackendSetName != name {
			t.Errorf("listener %s: ipVersion %s backend set %s", name, l.IpVersion, *l.DefaultBackendSetName)
		}
	}

	env.resetWrites()
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if w := env.writesOf(); len(w) != 0 {
		t.Errorf("an unchanged dual-stack resync wrote: %v", w)
	}

	d2 := dualDesired(IPVersionDual, "10.0.0.1", "10.0.0.4")
	d2.AssignedIPv6 = d.AssignedIPv6
	if _, err := o.Ensure(context.Background(), d2); err != nil {
		t.Fatal(err)
	}
	if w := env.writesOf(); len(w) != 2 {
		t.Errorf("a node change wrote %v, want the two backend sets updated", w)
	}
}

// TestIPv6OnlyAndRefusals: an IPv6-only Service gets an IPV6 NLB with
// only the IPv6 pair and address; an assigned IPv6 address outside the
// subnet's prefixes, or a subnet without IPv6, is refused before any write.
func TestIPv6OnlyAndRefusals(t *testing.T) {
	env := dualStackEnv(t)
	o := newTestOps(env)
	st, err := o.Ensure(context.Background(), dualDesired(IPVersion6, "10.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	lb := env.only(KindNLB)
	if len(st.Ingress) != 1 || !strings.HasPrefix(st.Ingress[0].IP, "fd00:a::") {
		t.Errorf("status = %+v, want one address in fd00:a::/64", st.Ingress)
	}
	if len(lb.Listeners) != 1 || lb.Listeners[0].Name != "TCP-80-IPv6" || len(lb.BackendSets) != 1 || lb.BackendSets[0].Backends[0].IPAddress != "fd00:1::1" {
		t.Errorf("listeners %+v backend sets %+v, want TCP-80-IPv6 to fd00:1::1", lb.Listeners, lb.BackendSets)
	}

	for _, tc := range []struct {
		name, subnet, assigned, want string
	}{
		{"outside the prefix", subnetA, "fd00:b::1", "not in subnet"},
		{"subnet without IPv6", subnetB, "fd00:b::1", "has no IPv6 prefix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env.resetWrites()
			d := dualDesired(IPVersionDual, "10.0.0.1")
			d.Ref.UID, d.Name, d.Subnets, d.AssignedIPv6 = "uid-refused", "uid-refused", []string{tc.subnet}, tc.assigned
			_, err := o.Ensure(context.Background(), d)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.assigned) {
				t.Errorf("err = %v, want one naming %s and saying %q", err, tc.assigned, tc.want)
			}
			if w := env.writesOf(); len(w) != 0 {
				t.Errorf("writes %v", w)
			}
		})
	}
}

func TestCompareIPAndOwnedIPv6Names(t *testing.T) {
	ips := []string{"fd00::1", "2001:db8::1", "203.0.113.1", "10.0.0.9"}
	slices.SortFunc(ips, compareIP)
	if want := []string{"10.0.0.9", "203.0.113.1", "2001:db8::1", "fd00::1"}; !slices.Equal(ips, want) {
		t.Errorf("sorted %v, want %v", ips, want)
	}
	for name, want := range map[string]bool{"TCP-80-IPv6": true, "UDP-53-IPv6": true, "TCP-80-IPv6-IPv6": false, "foo-IPv6": false} {
		if got := ownedName(name); got != want {
			t.Errorf("ownedName(%s) = %v, want %v", name, got, want)
		}
	}
}
