package tencentcloud

import (
	"context"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

func TestSecurityGroupsAnnotation(t *testing.T) {
	tests := []struct {
		name    string
		ann     map[string]string
		want    []string
		wantErr string
	}{
		{"absent: groups bound by hand are kept", nil, nil, ""},
		{"empty: unbind them", map[string]string{string(annotations.TKESecurityGroups): ""}, []string{}, ""},
		{"ids in order, spaces ignored", map[string]string{string(annotations.TKESecurityGroups): "sg-bbbbbbbb, sg-aaaaaaaa"}, []string{"sg-bbbbbbbb", "sg-aaaaaaaa"}, ""},
		{"malformed id", map[string]string{string(annotations.TKESecurityGroups): "sg-aaaaaaaa,default"}, nil, `"default" is not a security group id`},
		{"listed twice", map[string]string{string(annotations.TKESecurityGroups): "sg-aaaaaaaa,sg-aaaaaaaa"}, nil, "sg-aaaaaaaa is listed twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &v1.Service{}
			svc.Annotations = tt.ann
			got, err := readSettings(svc, false)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got.SecurityGroups == nil) != (tt.want == nil) || !slices.Equal(got.SecurityGroups, tt.want) {
				t.Fatalf("SecurityGroups = %#v, want %#v", got.SecurityGroups, tt.want)
			}
		})
	}
}

// Through the provider, against cloudsim: source ranges and the annotation
// bind the CCM's group and the user's; an unknown id is named; an unchanged
// resync writes nothing; deleting the Service deletes only the CCM's group.
func TestSourceRangesThroughProvider(t *testing.T) {
	e := newSubsetEnv(t, 2)
	ctx := context.Background()
	user, err := e.sim.Tencent().SecurityGroups().Create(tencent.SecurityGroup{Name: "user"})
	if err != nil {
		t.Fatal(err)
	}
	svc := subsetService("web", types.UID("uid-sg-1"))
	svc.Spec.LoadBalancerSourceRanges = []string{"192.0.2.0/24"}
	svc.Annotations = map[string]string{string(annotations.TKESecurityGroups): user.ID}
	if _, err := e.lb.EnsureLoadBalancer(ctx, "k8s", svc, e.nodes); err != nil {
		t.Fatal(err)
	}
	clb := e.sim.Tencent().CLB().LoadBalancers()[0]
	if len(clb.SecurityGroups) != 2 || clb.SecurityGroups[1] != user.ID {
		t.Fatalf("CLB bound to %v, want [ours %s]", clb.SecurityGroups, user.ID)
	}
	ours, err := e.sim.Tencent().SecurityGroups().Get(clb.SecurityGroups[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(ours.Ingress) != 3 || *ours.Ingress[0].CidrBlock != "192.0.2.0/24" || *ours.Ingress[0].Port != "80,443" || *ours.Ingress[0].Action != "ACCEPT" {
		t.Fatalf("our group's ingress = %v", ours.Ingress)
	}

	e.sim.ResetCalls()
	if _, err := e.lb.EnsureLoadBalancer(ctx, "k8s", svc, e.nodes); err != nil {
		t.Fatal(err)
	}
	for action, byCode := range e.sim.Calls() {
		if !strings.HasPrefix(action, "Describe") && len(byCode) > 0 {
			t.Errorf("unchanged resync called %s %v", action, byCode)
		}
	}

	bad := svc.DeepCopy()
	bad.Annotations[string(annotations.TKESecurityGroups)] = user.ID + ",sg-nothere1"
	if _, err := e.lb.EnsureLoadBalancer(ctx, "k8s", bad, e.nodes); err == nil || !strings.Contains(err.Error(), "sg-nothere1") {
		t.Fatalf("err = %v, want one naming sg-nothere1", err)
	}

	if err := e.lb.EnsureLoadBalancerDeleted(ctx, "k8s", svc); err != nil {
		t.Fatal(err)
	}
	left := e.sim.Tencent().SecurityGroups().List()
	if len(left) != 1 || left[0].ID != user.ID {
		t.Fatalf("groups after deletion = %v, want only the user's %s", left, user.ID)
	}
}
