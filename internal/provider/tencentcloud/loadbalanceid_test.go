package tencentcloud

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ccmkit/ccm/internal/annotations"
)

// The CLB's id is shown on the Service once the CLB exists, written only
// when the Service does not show it already, a hand-set value overwritten,
// and removed when the Service stops being a LoadBalancer.
func TestLoadBalanceIDAnnotation(t *testing.T) {
	var key = string(annotations.TKELoadBalanceID)
	const theID = "<the CLB's id>" // replaced by the id cloudsim gave
	for _, tt := range []struct {
		name string
		// ann is the Service's annotation before the call ("" : absent).
		ann string
		// ports: the Service's port count (0: two); 51 fails the listener quota.
		ports int
		// call runs the provider: "ensure", "update", "delete", "delete-gone".
		call        string
		wantPatches int
		// want is the annotation afterwards ("" : absent).
		want string
	}{
		{name: "created: id written", call: "ensure", wantPatches: 1, want: theID},
		{name: "already shown: no write", ann: theID, call: "ensure", wantPatches: 0, want: theID},
		{name: "hand-set: overwritten", ann: "lb-handset1", call: "ensure", wantPatches: 1, want: theID},
		{name: "update repairs it", ann: "lb-handset1", call: "update", wantPatches: 1, want: theID},
		{name: "refused before any call: nothing written", ports: 51, call: "ensure", wantPatches: 0, want: ""},
		{name: "no longer a LoadBalancer: removed", ann: theID, call: "delete", wantPatches: 1, want: ""},
		{name: "Service being deleted: left alone", ann: theID, call: "delete-gone", wantPatches: 0, want: theID},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newSubsetEnv(t, 2)
			ctx := context.Background()
			svc := subsetService("web", types.UID("uid-"+t.Name()))
			for i := range tt.ports {
				svc.Spec.Ports = append(svc.Spec.Ports, v1.ServicePort{Protocol: v1.ProtocolTCP, Port: int32(1000 + i), NodePort: int32(31000 + i)})
			}
			// A CLB for the Service exists first when the test needs its id.
			id := ""
			if tt.ann == theID || tt.call != "ensure" {
				if _, err := e.lb.EnsureLoadBalancer(ctx, "k8s", svc, e.nodes); err != nil {
					t.Fatal(err)
				}
				id = e.sim.Tencent().CLB().LoadBalancers()[0].ID
			}
			switch tt.ann {
			case "":
			case theID:
				svc.Annotations = map[string]string{key: id}
			default:
				svc.Annotations = map[string]string{key: tt.ann}
			}
			if tt.call == "delete-gone" {
				svc.DeletionTimestamp = &metav1.Time{}
			}
			client := fake.NewClientset(svc.DeepCopy())
			kube := kubernetes.Interface(client)
			e.lb.UseKubeClient(kube)

			var err error
			switch tt.call {
			case "ensure":
				_, err = e.lb.EnsureLoadBalancer(ctx, "k8s", svc, e.nodes)
			case "update":
				err = e.lb.UpdateLoadBalancer(ctx, "k8s", svc, e.nodes)
			default:
				err = e.lb.EnsureLoadBalancerDeleted(ctx, "k8s", svc)
			}
			if (err != nil) != (tt.ports > 50) {
				t.Fatalf("%s: %v", tt.call, err)
			}
			if id == "" && len(e.sim.Tencent().CLB().LoadBalancers()) > 0 {
				id = e.sim.Tencent().CLB().LoadBalancers()[0].ID
			}
			patches := 0
			for _, a := range client.Actions() {
				if p, ok := a.(k8stesting.PatchAction); ok {
					patches++
					if p.GetSubresource() != "status" {
						t.Errorf("patched subresource %q, want status (the only Service write RBAC grants)", p.GetSubresource())
					}
				}
			}
			if patches != tt.wantPatches {
				t.Errorf("%d patches, want %d: %v", patches, tt.wantPatches, client.Actions())
			}
			got, err := client.CoreV1().Services(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want == theID {
				want = id
			}
			if v := got.Annotations[key]; v != want {
				t.Errorf("annotation %s = %q, want %q", key, v, want)
			}
		})
	}
}
