package lbops

import (
	"context"
	"maps"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/networkloadbalancer"
	corev1 "k8s.io/api/core/v1"
)

// TestCreateOptions: an NLB is created with its assigned private address
// and the initial tags (ours added), and the status carries the ipMode;
// neither tags nor the private address are compared afterwards, so an
// unchanged (or tag-edited) resync writes nothing.
func TestCreateOptions(t *testing.T) {
	env := newLBEnv(t)
	o := newTestOps(env)
	d := desired(KindNLB, "10.0.0.1")
	d.PublishPrivate = true
	d.AssignedPrivateIPv4 = "10.0.100.20"
	d.InitialFreeformTags = map[string]string{"team": "web", TagServiceUID: "not ours"}
	d.InitialDefinedTags = map[string]map[string]interface{}{"Ops": {"CostCenter": "42"}}
	d.IngressIPMode = corev1.LoadBalancerIPModeProxy
	st, err := o.Ensure(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Ingress) != 2 || st.Ingress[1].IP != "10.0.100.20" {
		t.Errorf("status %+v, want the public address, then the assigned private one", st.Ingress)
	}
	for _, in := range st.Ingress {
		if in.IPMode == nil || *in.IPMode != corev1.LoadBalancerIPModeProxy {
			t.Errorf("ingress %s has ipMode %v, want Proxy", in.IP, in.IPMode)
		}
	}
	id := env.only(KindNLB).ID
	got, err := env.api.NLB.GetNetworkLoadBalancer(context.Background(), networkloadbalancer.GetNetworkLoadBalancerRequest{NetworkLoadBalancerId: &id})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"team": "web", TagServiceUID: "uid-1", TagService: "default/web"}
	if !maps.Equal(got.FreeformTags, want) || got.DefinedTags["Ops"]["CostCenter"] != "42" {
		t.Errorf("tags %v %v, want freeform %v and the defined ones", got.FreeformTags, got.DefinedTags, want)
	}
	env.resetWrites()
	d.InitialFreeformTags = map[string]string{"team": "other"}
	if _, err := o.Ensure(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if w := env.writesOf(); len(w) != 0 {
		t.Errorf("a resync with edited initial tags wrote %v", w)
	}
}
