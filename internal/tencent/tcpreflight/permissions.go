package tcpreflight

import (
	"context"
	"fmt"
	"slices"
	"strings"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"
	tke "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/tke/v20180525"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	"github.com/ccmkit/ccm/deploy"
	"github.com/ccmkit/ccm/internal/cloudpolicy/cam"
	"github.com/ccmkit/ccm/internal/preflight"
	"github.com/ccmkit/ccm/internal/tencent/tcapi"
)

// The permission checks ask, for each action of the shipped CAM policy
// (deploy/policies/tencentcloud-cam-policy.json), whether the key may call
// it. A read answers that without changing anything: it is called with
// harmless parameters (Limit 1, or an id that names nothing), and only
// AuthFailure.UnauthorizedOperation counts as "lacks it" (CAM authorizes
// before the action looks at its parameters; any other answer means the
// call got past CAM). No write the CCM calls documents a dry run (no DryRun
// field in the cvm, clb, vpc or tke request models of the SDK versions
// used), so writes are listed as not checked.

// Placeholders that name nothing: a lookup of them is harmless.
const (
	noLB   = "lb-00000000"
	noSG   = "sg-00000000"
	noTask = "00000000-0000-0000-0000-000000000000"
)

// ReadAPI is every read of the shipped policy. The SDK clients
// satisfy it.
type ReadAPI struct {
	CVM interface {
		DescribeInstancesWithContext(context.Context, *cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error)
	}
	VPC interface {
		DescribeVpcsWithContext(context.Context, *vpc.DescribeVpcsRequest) (*vpc.DescribeVpcsResponse, error)
		DescribeRouteTablesWithContext(context.Context, *vpc.DescribeRouteTablesRequest) (*vpc.DescribeRouteTablesResponse, error)
		DescribeSecurityGroupsWithContext(context.Context, *vpc.DescribeSecurityGroupsRequest) (*vpc.DescribeSecurityGroupsResponse, error)
		DescribeSecurityGroupPoliciesWithContext(context.Context, *vpc.DescribeSecurityGroupPoliciesRequest) (*vpc.DescribeSecurityGroupPoliciesResponse, error)
	}
	TKE interface {
		DescribeClusterRouteTablesWithContext(context.Context, *tke.DescribeClusterRouteTablesRequest) (*tke.DescribeClusterRouteTablesResponse, error)
		DescribeClusterRoutesWithContext(context.Context, *tke.DescribeClusterRoutesRequest) (*tke.DescribeClusterRoutesResponse, error)
	}
	CLB interface {
		DescribeQuotaWithContext(context.Context, *clb.DescribeQuotaRequest) (*clb.DescribeQuotaResponse, error)
		DescribeLoadBalancersWithContext(context.Context, *clb.DescribeLoadBalancersRequest) (*clb.DescribeLoadBalancersResponse, error)
		DescribeListenersWithContext(context.Context, *clb.DescribeListenersRequest) (*clb.DescribeListenersResponse, error)
		DescribeTargetsWithContext(context.Context, *clb.DescribeTargetsRequest) (*clb.DescribeTargetsResponse, error)
		DescribeTaskStatusWithContext(context.Context, *clb.DescribeTaskStatusRequest) (*clb.DescribeTaskStatusResponse, error)
	}
}

// tencentProbes calls each read harmlessly, by CAM action.
func tencentProbes(api ReadAPI, t Target) map[string]func(context.Context) error {
	table := t.ClusterRouteTable
	if table == "" {
		table = "ccmkit-preflight-none"
	}
	return map[string]func(context.Context) error{
		"cvm:DescribeInstances": func(ctx context.Context) error {
			req := cvm.NewDescribeInstancesRequest()
			req.Limit = common.Int64Ptr(1)
			_, err := api.CVM.DescribeInstancesWithContext(ctx, req)
			return err
		},
		"vpc:DescribeVpcs": func(ctx context.Context) error {
			req := vpc.NewDescribeVpcsRequest()
			req.VpcIds = common.StringPtrs([]string{t.VpcID})
			_, err := api.VPC.DescribeVpcsWithContext(ctx, req)
			return err
		},
		"vpc:DescribeRouteTables": func(ctx context.Context) error {
			req := vpc.NewDescribeRouteTablesRequest()
			req.Limit = common.StringPtr("1")
			_, err := api.VPC.DescribeRouteTablesWithContext(ctx, req)
			return err
		},
		"vpc:DescribeSecurityGroups": func(ctx context.Context) error {
			req := vpc.NewDescribeSecurityGroupsRequest()
			req.Limit = common.StringPtr("1")
			_, err := api.VPC.DescribeSecurityGroupsWithContext(ctx, req)
			return err
		},
		"vpc:DescribeSecurityGroupPolicies": func(ctx context.Context) error {
			req := vpc.NewDescribeSecurityGroupPoliciesRequest()
			req.SecurityGroupId = common.StringPtr(noSG)
			_, err := api.VPC.DescribeSecurityGroupPoliciesWithContext(ctx, req)
			return err
		},
		"tke:DescribeClusterRouteTables": func(ctx context.Context) error {
			_, err := api.TKE.DescribeClusterRouteTablesWithContext(ctx, tke.NewDescribeClusterRouteTablesRequest())
			return err
		},
		"tke:DescribeClusterRoutes": func(ctx context.Context) error {
			req := tke.NewDescribeClusterRoutesRequest()
			req.RouteTableName = common.StringPtr(table)
			_, err := api.TKE.DescribeClusterRoutesWithContext(ctx, req)
			return err
		},
		"clb:DescribeQuota": func(ctx context.Context) error {
			_, err := api.CLB.DescribeQuotaWithContext(ctx, clb.NewDescribeQuotaRequest())
			return err
		},
		"clb:DescribeLoadBalancers": func(ctx context.Context) error {
			req := clb.NewDescribeLoadBalancersRequest()
			req.Limit = common.Int64Ptr(1)
			_, err := api.CLB.DescribeLoadBalancersWithContext(ctx, req)
			return err
		},
		"clb:DescribeListeners": func(ctx context.Context) error {
			req := clb.NewDescribeListenersRequest()
			req.LoadBalancerId = common.StringPtr(noLB)
			_, err := api.CLB.DescribeListenersWithContext(ctx, req)
			return err
		},
		"clb:DescribeTargets": func(ctx context.Context) error {
			req := clb.NewDescribeTargetsRequest()
			req.LoadBalancerId = common.StringPtr(noLB)
			_, err := api.CLB.DescribeTargetsWithContext(ctx, req)
			return err
		},
		"clb:DescribeTaskStatus": func(ctx context.Context) error {
			req := clb.NewDescribeTaskStatusRequest()
			req.TaskId = common.StringPtr(noTask)
			_, err := api.CLB.DescribeTaskStatusWithContext(ctx, req)
			return err
		},
	}
}

// isUnauthorized: CAM refused the call (Tencent Cloud API 3.0, "Common
// Error Codes": AuthFailure.UnauthorizedOperation; some services answer
// UnauthorizedOperation or UnauthorizedOperation.*).
func isUnauthorized(code string) bool {
	return code == "AuthFailure.UnauthorizedOperation" || code == "UnauthorizedOperation" || strings.HasPrefix(code, "UnauthorizedOperation.")
}

// Permissions reports one failed row per action of the shipped
// policy that the key lacks, as far as reads tell, and a row listing the
// actions that cannot be checked without a write.
func Permissions(ctx context.Context, api ReadAPI, t Target, rep *preflight.Report) {
	policy, err := cam.Parse(deploy.TencentCAMPolicy)
	if err != nil { // a unit test keeps the embedded policy valid
		rep.Fail("permissions", "the shipped CAM policy does not parse: "+err.Error(), "report this bug")
		return
	}
	probes := tencentProbes(api, t)
	const fix = "attach deploy/policies/tencentcloud-cam-policy.json (or the missing action) to the key's CAM user or role (docs/credentials.md, \"Cloud permissions\")"
	var granted, unchecked, unknown []string
	for _, action := range policy.Actions() {
		probe, ok := probes[action]
		if !ok {
			unchecked = append(unchecked, action)
			continue
		}
		err := probe(ctx)
		code := tcapi.Code(err)
		switch {
		case isUnauthorized(code):
			rep.Fail("permission "+action, fmt.Sprintf("lacks %s: a harmless %s answered %s", action, action, code), fix)
		case err != nil && code == "":
			unknown = append(unknown, fmt.Sprintf("%s (%v)", action, err))
		default:
			granted = append(granted, action)
		}
	}
	if len(unknown) > 0 {
		rep.Warn("permissions", "could not tell for "+strings.Join(unknown, "; "), "check api_endpoint and the network, then run preflight again")
	}
	if len(granted) > 0 {
		rep.Pass("permissions", fmt.Sprintf("%d reads of the shipped CAM policy are allowed", len(granted)))
	}
	slices.Sort(unchecked)
	rep.Skip("write permissions", fmt.Sprintf("not checked, as no write the CCM calls has a dry run: %s (%d actions; the e2e suite proves the shipped policy grants them)",
		strings.Join(unchecked, ", "), len(unchecked)))
}
