package cloudsim_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// TestSecurityGroupAdmin drives the security group admin endpoints through
// AdminClient: seeding groups, binding an instance and a CLB, and the
// refusals of a group in use or unknown.
func TestSecurityGroupAdmin(t *testing.T) {
	_, url := start(t, cloudsim.Options{VIPRange: simVIPs, DisableDataPlane: true,
		Tencent: cloudsim.TencentOptions{
			TaskLatency:    -1,
			SecurityGroups: []tencent.SecurityGroup{{ID: "sg-seeded01", Name: "seeded"}},
		},
	})
	ctx := context.Background()
	admin := &cloudsim.AdminClient{BaseURL: url}
	sg, err := admin.CreateSecurityGroup(ctx, tencent.SecurityGroup{Name: "nodes", Ingress: []*vpc.SecurityGroupPolicy{
		{Protocol: common.StringPtr("TCP"), Port: common.StringPtr("30000-32767"), CidrBlock: common.StringPtr("0.0.0.0/0"), Action: common.StringPtr("ACCEPT")},
	}})
	if err != nil || len(sg.Ingress) != 1 || *sg.Ingress[0].PolicyIndex != 0 {
		t.Fatalf("create: %+v %v", sg, err)
	}
	var ae *cloudsim.AdminError
	if _, err := admin.CreateSecurityGroup(ctx, tencent.SecurityGroup{Ingress: []*vpc.SecurityGroupPolicy{{Protocol: common.StringPtr("TCP")}}}); !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest {
		t.Fatalf("a policy without a source: %v", err)
	}
	in, err := admin.AddInstances(ctx, cloudsim.Instance{PrivateIP: "10.9.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := admin.SetInstanceSecurityGroups(ctx, in[0].ID, sg.ID, "sg-seeded01"); err != nil || len(got.SecurityGroupIDs) != 2 {
		t.Fatalf("bind instance: %+v %v", got, err)
	}
	if _, err := admin.SetInstanceSecurityGroups(ctx, in[0].ID, "sg-nothere1"); !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest {
		t.Fatalf("an unknown group: %v", err)
	}
	lb, err := admin.CreateCLB(ctx, tencent.CLBSpec{Name: "bound", SecurityGroups: []string{"sg-seeded01"}, PassToTarget: true})
	if err != nil || !lb.PassToTarget || len(lb.SecurityGroups) != 1 {
		t.Fatalf("create CLB: %+v %v", lb, err)
	}
	if err := admin.DeleteSecurityGroup(ctx, sg.ID); !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest {
		t.Fatalf("delete a group in use: %v", err)
	}
	if lb, err = admin.SetCLBSecurityGroups(ctx, lb.ID); err != nil || len(lb.SecurityGroups) != 0 {
		t.Fatalf("unbind CLB: %+v %v", lb, err)
	}
	if _, err := admin.SetInstanceSecurityGroups(ctx, in[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := admin.DeleteSecurityGroup(ctx, sg.ID); err != nil {
		t.Fatal(err)
	}
	groups, err := admin.SecurityGroups(ctx)
	if err != nil || len(groups) != 1 || groups[0].ID != "sg-seeded01" {
		t.Fatalf("groups: %+v %v", groups, err)
	}
}
