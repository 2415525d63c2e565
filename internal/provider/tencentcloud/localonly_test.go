package tencentcloud

import (
	"context"
	"fmt"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/annotations"
)

// local-svc-only-bind-node-with-pod binds only the nodes with a ready
// endpoint, and only for externalTrafficPolicy Local; without endpoints
// every node stays bound.
func TestLocalOnlyBindNodeWithPod(t *testing.T) {
	all := []string{"ins-sub00000", "ins-sub00001", "ins-sub00002", "ins-sub00003", "ins-sub00004"}
	for _, tt := range []struct {
		name      string
		ann       string // "" : not set
		policy    v1.ServiceExternalTrafficPolicy
		endpoints []int // nodes with a ready endpoint
		want      []string
	}{
		{"set, Local: the endpoint nodes", "true", v1.ServiceExternalTrafficPolicyLocal, []int{1, 3}, []string{"ins-sub00001", "ins-sub00003"}},
		{"not set, Local: every node (the health checks decide)", "", v1.ServiceExternalTrafficPolicyLocal, []int{1, 3}, all},
		{"false, Local: every node", "false", v1.ServiceExternalTrafficPolicyLocal, []int{1, 3}, all},
		{"set, Cluster: every node", "true", v1.ServiceExternalTrafficPolicyCluster, []int{1, 3}, all},
		{"set, Local, no ready endpoint: every node", "true", v1.ServiceExternalTrafficPolicyLocal, nil, all},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newSubsetEnv(t, 5)
			svc := subsetService("local", types.UID("uid-"+tt.name))
			svc.Spec.ExternalTrafficPolicy = tt.policy
			if tt.policy == v1.ServiceExternalTrafficPolicyLocal {
				svc.Spec.HealthCheckNodePort = 32000
			}
			if tt.ann != "" {
				svc.Annotations = map[string]string{annotations.TKELocalOnlyBindNodeWithPod.String(): tt.ann}
			}
			var eps []discoveryv1.Endpoint
			for _, i := range tt.endpoints {
				name, yes := e.nodes[i].Name, true
				eps = append(eps, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.244.%d.2", i)}, NodeName: &name,
					Conditions: discoveryv1.EndpointConditions{Ready: &yes}})
			}
			e.watchEndpoints(t, eps)
			if _, err := e.lb.EnsureLoadBalancer(context.Background(), "k8s", svc, e.nodes); err != nil {
				t.Fatal(err)
			}
			for _, listener := range []string{"TCP-80", "TCP-443"} {
				if got := e.targets(t, svc.UID)[listener]; !slices.Equal(got, tt.want) {
					t.Errorf("%s targets %v, want %v", listener, got, tt.want)
				}
			}
		})
	}
}
