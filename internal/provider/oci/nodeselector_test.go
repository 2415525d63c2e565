package oci

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/ccmkit/ccm/internal/annotations"
)

// The public OCI CCM's node-label-selector annotations are our node
// selector under its names, each read by its own kind only; when ours
// is set too and selects otherwise, ours wins with a Warning Event.
func TestNodeLabelSelectorAliases(t *testing.T) {
	lbSel, nlbSel, ours := string(annotations.OCINodeLabelSelector), string(annotations.OCINLBNodeLabelSelector), string(annotations.NodeSelector)
	nlb := map[string]string{annotations.OCILoadBalancerType.String(): "nlb"}
	with := func(base map[string]string, kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name      string
		ann       map[string]string
		want      []string // backend node names
		wantEvent string   // "" no event
		wantErr   string
	}{
		{name: "none", ann: nil, want: []string{"edge-1", "edge-22", "web"}},
		{name: "lb alias", ann: with(nil, lbSel, "pool=edge"), want: []string{"edge-1", "edge-22"}},
		{name: "lb alias ignores the nlb name", ann: with(nil, nlbSel, "pool=edge"), want: []string{"edge-1", "edge-22", "web"}},
		{name: "nlb alias", ann: with(nlb, nlbSel, "pool=web"), want: []string{"web"}},
		{name: "nlb ignores the lb name", ann: with(nlb, lbSel, "pool=web"), want: []string{"edge-1", "edge-22", "web"}},
		{name: "set alike", ann: with(nil, lbSel, "zone=a,pool=edge", ours, "pool=edge, zone=a"), want: []string{"edge-1"}},
		{name: "disagree: ours wins", ann: with(nil, lbSel, "pool=web", ours, "pool=edge"), want: []string{"edge-1", "edge-22"},
			wantEvent: `Warning NodeSelectorAnnotationsDisagree annotations lb.ccmkit.io/node-selector ("pool=edge") and oci.oraclecloud.com/node-label-selector ("pool=web") select different nodes: lb.ccmkit.io/node-selector is used`},
		{name: "nlb disagree", ann: with(nlb, nlbSel, "pool=web", ours, "pool=edge"), want: []string{"edge-1", "edge-22"},
			wantEvent: "Warning NodeSelectorAnnotationsDisagree annotations lb.ccmkit.io/node-selector (\"pool=edge\") and oci-network-load-balancer.oraclecloud.com/node-label-selector"},
		{name: "bad alias", ann: with(nil, lbSel, "pool in edge"), wantErr: `annotation oci.oraclecloud.com/node-label-selector: invalid value "pool in edge"`},
	}
	// Names of different lengths: lbNode derives the instance OCID from it.
	nodes := []*corev1.Node{lbNode("edge-1", "10.0.0.1", true), lbNode("edge-22", "10.0.0.2", true), lbNode("web", "10.0.0.3", true)}
	nodes[0].Labels = map[string]string{"pool": "edge", "zone": "a"}
	nodes[1].Labels = map[string]string{"pool": "edge", "zone": "b"}
	nodes[2].Labels = map[string]string{"pool": "web", "zone": "a"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lb, f := testLB(lbCfg)
			events := record.NewFakeRecorder(10)
			lb.UseRecorder(events)
			_, err := lb.EnsureLoadBalancer(context.Background(), "k", lbService(tt.ann), nodes)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range f.ensured[0].Backends {
				got = append(got, b.NodeName)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("backends %v, want %v", got, tt.want)
			}
			var event string
			if len(events.Events) > 0 {
				event = <-events.Events
			}
			if (tt.wantEvent == "") != (event == "") || !strings.HasPrefix(event, tt.wantEvent) {
				t.Errorf("event %q, want %q", event, tt.wantEvent)
			}
		})
	}
}
