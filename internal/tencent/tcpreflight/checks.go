// Package tcpreflight is the Tencent Cloud provider's preflight checks (the
// cloud-controller-manager's preflight subcommand): the config, the
// credentials, the CAM permissions the CCM's actions need
// (internal/cloudpolicy/cam), and the VPC, route table and CLB quotas the
// config names, each read with the official SDK. The framework (report,
// registration, the checks every cloud shares) is internal/preflight.
package tcpreflight

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"
	tke "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/tke/v20180525"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	"github.com/ccmkit/ccm/internal/callerr"
	"github.com/ccmkit/ccm/internal/preflight"
	"github.com/ccmkit/ccm/internal/tencent/tcapi"
)

// API is the read-only part of the Tencent Cloud API that the checks
// call: the SDK clients satisfy it.
type API struct {
	CVM interface {
		DescribeInstancesWithContext(context.Context, *cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error)
	}
	VPC interface {
		DescribeVpcsWithContext(context.Context, *vpc.DescribeVpcsRequest) (*vpc.DescribeVpcsResponse, error)
		DescribeRouteTablesWithContext(context.Context, *vpc.DescribeRouteTablesRequest) (*vpc.DescribeRouteTablesResponse, error)
	}
	TKE interface {
		DescribeClusterRouteTablesWithContext(context.Context, *tke.DescribeClusterRouteTablesRequest) (*tke.DescribeClusterRouteTablesResponse, error)
	}
	CLB interface {
		DescribeQuotaWithContext(context.Context, *clb.DescribeQuotaRequest) (*clb.DescribeQuotaResponse, error)
	}
	// Reads are every read of the shipped CAM policy, for the permission
	// checks (permissions.go); zero: those checks are skipped.
	Reads ReadAPI
}

// Target is what the cloud config names.
type Target struct {
	Region, VpcID string
	// RouteBackend is "tke" (ClusterRouteTable), "vpc" (RouteTableID), or
	// "" when routes are off.
	RouteBackend      string
	ClusterRouteTable string
	RouteTableID      string
	CreateRouteTable  bool         // create_cluster_route_table
	ClusterCIDR       netip.Prefix // cluster_cidr; --cluster-cidr wins
}

// Tencent runs the Tencent Cloud checks: credentials (one signed read) and
// the clock, the VPC, the route table, the pod network, and the CLB
// quotas. clock must wrap the clients' transport.
func Check(ctx context.Context, api API, t Target, clock *preflight.Clock, in preflight.Input, rep *preflight.Report) {
	credsOK, authenticated := tencentCredentials(ctx, api, t, rep)
	if authenticated && api.Reads.CVM != nil {
		Permissions(ctx, api.Reads, t, rep)
	}
	if !preflight.AfterCredentials(rep, clock, "Tencent Cloud", credsOK,
		"VPC", "route table", "cluster CIDR", "CLB quota", "targets per listener") {
		return
	}
	nets := tencentVPC(ctx, api, t, rep)
	nets = append(nets, tencentRouteTable(ctx, api, &t, in, rep)...)
	cidr := in.ClusterCIDR
	if !cidr.IsValid() {
		cidr = t.ClusterCIDR
	}
	preflight.CheckClusterCIDR(rep, cidr, nets)
	tencentQuotas(ctx, api, in, rep)
}

// tencentCredentials reports whether the signed call succeeded, and
// whether the key was authenticated (it was when CAM refused the call).
func tencentCredentials(ctx context.Context, api API, t Target, rep *preflight.Report) (ok, authenticated bool) {
	const check = "credentials"
	req := cvm.NewDescribeInstancesRequest()
	req.Limit = common.Int64Ptr(1)
	req.Filters = []*cvm.Filter{{Name: common.StringPtr("vpc-id"), Values: common.StringPtrs([]string{t.VpcID})}}
	resp, err := api.CVM.DescribeInstancesWithContext(ctx, req)
	if err != nil {
		detail, fix := tencentAuthHint(err)
		rep.Fail(check, "DescribeInstances in "+t.Region+": "+detail, fix)
		return false, isUnauthorized(tcapi.Code(err))
	}
	n := int64(0)
	if resp.Response != nil && resp.Response.TotalCount != nil {
		n = *resp.Response.TotalCount
	}
	rep.Pass(check, fmt.Sprintf("a signed DescribeInstances in %s answered: %d instances in %s", t.Region, n, t.VpcID))
	return true, true
}

// tencentAuthHint turns a failed first call into what the operator should
// look at. Codes: the API's common error codes (Tencent Cloud API 3.0,
// "Common Error Codes").
func tencentAuthHint(err error) (detail, fix string) {
	code := tcapi.Code(err)
	if code == "" {
		return err.Error(), "check api_endpoint and that this machine reaches the Tencent Cloud API"
	}
	detail = callerr.Describe(err)
	switch {
	case code == "AuthFailure.SecretIdNotFound":
		return detail, "secret_id is not an API key of this account: copy the SecretId from the CAM console (API keys)"
	case code == "AuthFailure.SignatureFailure":
		return detail, "secret_key does not belong to secret_id: copy the pair again from the CAM console, without surrounding whitespace"
	case code == "AuthFailure.SignatureExpire":
		return detail, "this machine's clock is off by more than 5 minutes (see the clock check): run NTP"
	case strings.HasPrefix(code, "AuthFailure.UnauthorizedOperation"), strings.HasPrefix(code, "UnauthorizedOperation"):
		return detail, "the key is valid but may not call DescribeInstances: attach deploy/policies/tencentcloud-cam-policy.json to its CAM user or role (docs/credentials.md)"
	case code == "AuthFailure.InvalidSecretId":
		return detail, "secret_id is malformed: it starts with AKID"
	case code == "UnsupportedRegion", code == "InvalidParameterValue.InvalidRegion":
		return detail, "set region to a Tencent Cloud region the account uses, e.g. ap-guangzhou"
	case strings.HasPrefix(code, "ClientError.NetworkError"), strings.HasPrefix(code, "ClientError.HttpStatusCodeError"):
		return detail, "check api_endpoint and that this machine reaches the Tencent Cloud API"
	case strings.HasPrefix(code, "AuthFailure"):
		return detail, "check secret_id and secret_key"
	}
	return detail, "see the error code in the Tencent Cloud API reference"
}

// tencentVPC checks that the VPC exists, and returns its address ranges.
func tencentVPC(ctx context.Context, api API, t Target, rep *preflight.Report) []preflight.Network {
	const check = "VPC"
	req := vpc.NewDescribeVpcsRequest()
	req.VpcIds = common.StringPtrs([]string{t.VpcID})
	resp, err := api.VPC.DescribeVpcsWithContext(ctx, req)
	var set []*vpc.Vpc
	if err == nil && resp.Response != nil {
		set = resp.Response.VpcSet
	}
	fix := "set vpc_id to the VPC the nodes run in (VPC console, region " + t.Region + ")"
	switch {
	case err != nil && isNotFound(err):
		rep.Fail(check, fmt.Sprintf("VPC %s not found in %s: %v", t.VpcID, t.Region, err), fix)
		return nil
	case err != nil:
		rep.Fail(check, fmt.Sprintf("DescribeVpcs %s: %v", t.VpcID, err), "grant vpc:DescribeVpcs to the key (deploy/policies/tencentcloud-cam-policy.json)")
		return nil
	case len(set) == 0:
		rep.Fail(check, fmt.Sprintf("VPC %s not found in %s", t.VpcID, t.Region), fix)
		return nil
	}
	var nets []preflight.Network
	var cidrs []string
	add := func(s *string) {
		if p, err := preflight.ParsePrefix(deref(s)); err == nil {
			nets = append(nets, preflight.Network{Name: "VPC " + t.VpcID, CIDR: p})
			cidrs = append(cidrs, p.String())
		}
	}
	add(set[0].CidrBlock)
	for _, a := range set[0].AssistantCidrSet {
		if a != nil {
			add(a.CidrBlock)
		}
	}
	rep.Pass(check, fmt.Sprintf("VPC %s (%s) exists, %s", t.VpcID, deref(set[0].VpcName), strings.Join(cidrs, ", ")))
	return nets
}

// tencentRouteTable checks the route table routes go into, and returns the
// other cluster route tables of the VPC, which the pod network must not
// overlap.
func tencentRouteTable(ctx context.Context, api API, t *Target, in preflight.Input, rep *preflight.Report) []preflight.Network {
	const check = "route table"
	switch t.RouteBackend {
	case "":
		rep.Skip(check, "routes are off (no cluster_route_table or route_table_id)")
		return nil
	case "vpc":
		req := vpc.NewDescribeRouteTablesRequest()
		req.RouteTableIds = common.StringPtrs([]string{t.RouteTableID})
		resp, err := api.VPC.DescribeRouteTablesWithContext(ctx, req)
		fix := "set route_table_id to a route table of " + t.VpcID + " (VPC console, Route tables)"
		switch {
		case err != nil && isNotFound(err):
			rep.Fail(check, fmt.Sprintf("VPC route table %s not found: %v", t.RouteTableID, err), fix)
		case err != nil:
			rep.Fail(check, fmt.Sprintf("DescribeRouteTables %s: %v", t.RouteTableID, err), "grant vpc:DescribeRouteTables to the key (deploy/policies/tencentcloud-cam-policy.json)")
		case resp.Response == nil || len(resp.Response.RouteTableSet) == 0:
			rep.Fail(check, fmt.Sprintf("VPC route table %s not found", t.RouteTableID), fix)
		case deref(resp.Response.RouteTableSet[0].VpcId) != t.VpcID:
			rep.Fail(check, fmt.Sprintf("route table %s belongs to %s, not %s", t.RouteTableID, deref(resp.Response.RouteTableSet[0].VpcId), t.VpcID), fix)
		default:
			rep.Pass(check, fmt.Sprintf("VPC route table %s of %s", t.RouteTableID, t.VpcID))
		}
		return nil
	}

	resp, err := api.TKE.DescribeClusterRouteTablesWithContext(ctx, tke.NewDescribeClusterRouteTablesRequest())
	if err != nil {
		rep.Fail(check, fmt.Sprintf("DescribeClusterRouteTables: %v", err), "grant tke:DescribeClusterRouteTables to the key (deploy/policies/tencentcloud-cam-policy.json)")
		return nil
	}
	var others []preflight.Network
	var ours *tke.RouteTableInfo
	if resp.Response != nil {
		for _, rt := range resp.Response.RouteTableSet {
			if rt == nil {
				continue
			}
			if deref(rt.RouteTableName) == t.ClusterRouteTable {
				ours = rt
				continue
			}
			if p, err := preflight.ParsePrefix(deref(rt.RouteTableCidrBlock)); err == nil && deref(rt.VpcId) == t.VpcID {
				others = append(others, preflight.Network{Name: "route table " + deref(rt.RouteTableName), CIDR: p})
			}
		}
	}
	switch {
	case ours == nil && t.CreateRouteTable:
		rep.Pass(check, fmt.Sprintf("TKE cluster route table %q does not exist yet; the CCM will create it (create_cluster_route_table)", t.ClusterRouteTable))
	case ours == nil:
		rep.Fail(check, fmt.Sprintf("TKE cluster route table %q not found in %s", t.ClusterRouteTable, t.Region),
			"create it (tke CreateClusterRouteTable, with the pod network as its CIDR) or set create_cluster_route_table: true")
	case deref(ours.VpcId) != t.VpcID:
		rep.Fail(check, fmt.Sprintf("TKE cluster route table %q belongs to %s, not %s", t.ClusterRouteTable, deref(ours.VpcId), t.VpcID),
			"name a route table of vpc_id in cluster_route_table")
	default:
		tableCIDR, _ := preflight.ParsePrefix(deref(ours.RouteTableCidrBlock))
		cidr := in.ClusterCIDR
		if !cidr.IsValid() {
			cidr = t.ClusterCIDR
		}
		if tableCIDR.IsValid() && cidr.IsValid() && !preflight.Within(cidr, tableCIDR) {
			rep.Fail(check, fmt.Sprintf("the cluster CIDR %s is not inside route table %q's CIDR %s", cidr, t.ClusterRouteTable, tableCIDR),
				"set --cluster-cidr (and cluster_cidr) to the table's CIDR or a range inside it")
		} else {
			rep.Pass(check, fmt.Sprintf("TKE cluster route table %q (%s) in %s", t.ClusterRouteTable, tableCIDR, t.VpcID))
			if !cidr.IsValid() {
				t.ClusterCIDR = tableCIDR // the provider's default: the table's CIDR
			}
		}
	}
	return others
}

// Quota ids (clb Quota model comment, clb@v1.3.105).
const (
	quotaOpenCLB    = "TOTAL_OPEN_CLB_QUOTA"
	quotaTargetBind = "TOTAL_TARGET_BIND_QUOTA"
	quotaListener   = "TOTAL_LISTENER_QUOTA"
)

// tencentQuotas checks the CLB quotas: room for more public CLBs, and
// targets per listener against the node count.
func tencentQuotas(ctx context.Context, api API, in preflight.Input, rep *preflight.Report) {
	resp, err := api.CLB.DescribeQuotaWithContext(ctx, clb.NewDescribeQuotaRequest())
	if err != nil {
		rep.Fail("CLB quota", fmt.Sprintf("DescribeQuota: %v", err), "grant clb:DescribeQuota to the key (deploy/policies/tencentcloud-cam-policy.json)")
		rep.Skip("targets per listener", "DescribeQuota failed")
		return
	}
	quota := map[string]*clb.Quota{}
	if resp.Response != nil {
		for _, q := range resp.Response.QuotaSet {
			if q != nil {
				quota[deref(q.QuotaId)] = q
			}
		}
	}
	listeners := "listeners per CLB: unknown"
	if q := quota[quotaListener]; q != nil && q.QuotaLimit != nil {
		listeners = fmt.Sprintf("%d listeners per CLB", *q.QuotaLimit)
	}
	if q := quota[quotaOpenCLB]; q == nil || q.QuotaLimit == nil {
		rep.Warn("CLB quota", "DescribeQuota has no "+quotaOpenCLB+"; "+listeners, "nothing to fix, unless LoadBalancer Services fail with LimitExceeded")
	} else {
		used, limit := int64(0), *q.QuotaLimit
		if q.QuotaCurrent != nil {
			used = *q.QuotaCurrent
		}
		detail := fmt.Sprintf("%d of %d public CLBs in use; %s", used, limit, listeners)
		fix := "delete unused CLBs or raise " + quotaOpenCLB + " by ticket"
		switch {
		case used >= limit:
			rep.Fail("CLB quota", detail+": no LoadBalancer Service can get a CLB", fix)
		case used*10 >= limit*8:
			rep.Warn("CLB quota", detail+": fewer than 20% left", fix)
		default:
			rep.Pass("CLB quota", detail)
		}
	}
	targetsPerListener(rep, quota[quotaTargetBind], in.Nodes)
}

func targetsPerListener(rep *preflight.Report, q *clb.Quota, nodes int) {
	const check = "targets per listener"
	if q == nil || q.QuotaLimit == nil {
		rep.Warn(check, "DescribeQuota has no "+quotaTargetBind+"; the CCM assumes the documented 100", "nothing to fix")
		return
	}
	limit := int(*q.QuotaLimit)
	switch {
	case nodes < 0:
		rep.Skip(check, fmt.Sprintf("%d per listener; the node count is unknown (no Kubernetes access)", limit))
	case nodes > limit:
		rep.Warn(check, fmt.Sprintf("%d nodes, %d targets per listener: each CLB binds a subset of %d nodes", nodes, limit, limit),
			"nothing to fix if a subset is enough (docs/loadbalancers.md); to bind every node, raise "+quotaTargetBind+" by ticket")
	default:
		rep.Pass(check, fmt.Sprintf("%d nodes fit in %d targets per listener", nodes, limit))
	}
}

// isNotFound: the VPC API's ResourceNotFound and InvalidParameterValue.*NotFound.
func isNotFound(err error) bool {
	return strings.Contains(tcapi.Code(err), "NotFound")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
