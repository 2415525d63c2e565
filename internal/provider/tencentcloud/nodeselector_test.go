package tencentcloud

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/internal/annotations"
)

// Managed TKE's qcloud-loadbalancer-backends-label selects the nodes as our
// node-selector does; both set must agree, else the Service is refused.
func TestTKEBackendsLabel(t *testing.T) {
	var (
		tke  = string(annotations.TKEBackendsLabel)
		ours = string(annotations.NodeSelector)
	)
	var nodes []*v1.Node
	for i, group := range []string{"access-layer", "access-layer", "batch"} {
		nodes = append(nodes, &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", i), Labels: map[string]string{"group": group, "zone": fmt.Sprint(i % 2)}},
			Spec:       v1.NodeSpec{ProviderID: fmt.Sprintf("tencentcloud:///ap-guangzhou-3/ins-0000000%d", i)},
		})
	}
	for _, tt := range []struct {
		name    string
		ann     map[string]string
		want    []string // backend node names
		wantErr []string // substrings of the error
	}{
		{"neither: every node", nil, []string{"node-0", "node-1", "node-2"}, nil},
		{"TKE's name alone", map[string]string{tke: "group=access-layer"}, []string{"node-0", "node-1"}, nil},
		{"ours alone", map[string]string{ours: "group=batch"}, []string{"node-2"}, nil},
		{"both, same selector written differently", map[string]string{tke: "zone=0, group=access-layer", ours: "group=access-layer,zone=0"},
			[]string{"node-0"}, nil},
		{"both, different", map[string]string{tke: "group=access-layer", ours: "group=batch"}, nil,
			[]string{tke, ours, "select different nodes", "left as it is"}},
		{"TKE's invalid", map[string]string{tke: "a=b=c"}, nil, []string{tke, `"a=b=c"`}},
		{"TKE's matches nothing: no targets, as on TKE", map[string]string{tke: "group=none"}, nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			svc := lbTestService(tt.ann)
			before := fmt.Sprint(svc.Annotations)
			d, _, err := (&clbTranslator{}).Desired("k8s", svc, nodes)
			if fmt.Sprint(svc.Annotations) != before {
				t.Errorf("the Service's annotations were changed: %v", svc.Annotations)
			}
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("accepted, want an error containing %q", tt.wantErr)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range d.Backends {
				got = append(got, b.NodeName)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("backends %v, want %v", got, tt.want)
			}
		})
	}
}
