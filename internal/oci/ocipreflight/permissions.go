package ocipreflight

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	"github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/deploy"
	"github.com/ccmkit/ccm/internal/cloudpolicy/ociiam"
	"github.com/ccmkit/ccm/internal/preflight"
)

// The OCI permission checks call one harmless read per permission of the
// shipped policy (deploy/policies/oci-policy.txt) that a read needs, and
// name what a 404 NotAuthorizedOrNotFound says is missing. OCI answers a
// missing compartment or resource with the same 404, so each row says so.
// No OCI operation the CCM calls has a dry run, so what only a write needs
// (update, create, delete, attach) is listed as not checked.

// ReadAPI is the reads of the permission checks. The SDK clients
// satisfy it.
type ReadAPI struct {
	Compute interface {
		ListInstances(context.Context, core.ListInstancesRequest) (core.ListInstancesResponse, error)
		ListVnicAttachments(context.Context, core.ListVnicAttachmentsRequest) (core.ListVnicAttachmentsResponse, error)
	}
	Network interface {
		GetVcn(context.Context, core.GetVcnRequest) (core.GetVcnResponse, error)
		GetSubnet(context.Context, core.GetSubnetRequest) (core.GetSubnetResponse, error)
		ListPrivateIps(context.Context, core.ListPrivateIpsRequest) (core.ListPrivateIpsResponse, error)
		ListPublicIps(context.Context, core.ListPublicIpsRequest) (core.ListPublicIpsResponse, error)
		ListIpv6s(context.Context, core.ListIpv6sRequest) (core.ListIpv6sResponse, error)
		ListSecurityLists(context.Context, core.ListSecurityListsRequest) (core.ListSecurityListsResponse, error)
		ListNetworkSecurityGroups(context.Context, core.ListNetworkSecurityGroupsRequest) (core.ListNetworkSecurityGroupsResponse, error)
	}
	LB interface {
		ListLoadBalancers(context.Context, loadbalancer.ListLoadBalancersRequest) (loadbalancer.ListLoadBalancersResponse, error)
	}
	NLB interface {
		ListNetworkLoadBalancers(context.Context, networkloadbalancer.ListNetworkLoadBalancersRequest) (networkloadbalancer.ListNetworkLoadBalancersResponse, error)
	}
}

type ociProbe struct {
	op    string // the permission table's operation name
	where string // what it reads, for messages
	call  func(context.Context) error
}

func ociProbes(api ReadAPI, t Target) []ociProbe {
	comp := common.String(t.Compartment)
	one := common.Int(1)
	in := "compartment " + t.Compartment
	probes := []ociProbe{
		{"ListInstances", in, func(ctx context.Context) error {
			_, err := api.Compute.ListInstances(ctx, core.ListInstancesRequest{CompartmentId: comp, Limit: one})
			return err
		}},
		{"ListVnicAttachments", in, func(ctx context.Context) error {
			_, err := api.Compute.ListVnicAttachments(ctx, core.ListVnicAttachmentsRequest{CompartmentId: comp, Limit: one})
			return err
		}},
		{"ListPublicIps", in + " (reserved)", func(ctx context.Context) error {
			_, err := api.Network.ListPublicIps(ctx, core.ListPublicIpsRequest{CompartmentId: comp, Scope: core.ListPublicIpsScopeRegion,
				Lifetime: core.ListPublicIpsLifetimeReserved, Limit: one})
			return err
		}},
		{"GetVcn", "VCN " + t.VCN, func(ctx context.Context) error {
			_, err := api.Network.GetVcn(ctx, core.GetVcnRequest{VcnId: common.String(t.VCN)})
			return err
		}},
		{"ListSecurityLists", in, func(ctx context.Context) error {
			_, err := api.Network.ListSecurityLists(ctx, core.ListSecurityListsRequest{CompartmentId: comp, VcnId: common.String(t.VCN), Limit: one})
			return err
		}},
		{"ListNetworkSecurityGroups", in, func(ctx context.Context) error {
			_, err := api.Network.ListNetworkSecurityGroups(ctx, core.ListNetworkSecurityGroupsRequest{CompartmentId: comp, Limit: one})
			return err
		}},
		{"ListLoadBalancers", in, func(ctx context.Context) error {
			_, err := api.LB.ListLoadBalancers(ctx, loadbalancer.ListLoadBalancersRequest{CompartmentId: comp, Limit: common.Int64(1)})
			return err
		}},
		{"nlb:ListNetworkLoadBalancers", in, func(ctx context.Context) error {
			_, err := api.NLB.ListNetworkLoadBalancers(ctx, networkloadbalancer.ListNetworkLoadBalancersRequest{CompartmentId: comp, Limit: one})
			return err
		}},
	}
	for _, s := range t.Subnets {
		if s == "" {
			continue
		}
		subnet := common.String(s)
		probes = append(probes,
			ociProbe{"GetSubnet", "subnet " + s, func(ctx context.Context) error {
				_, err := api.Network.GetSubnet(ctx, core.GetSubnetRequest{SubnetId: subnet})
				return err
			}},
			ociProbe{"ListPrivateIps", "subnet " + s, func(ctx context.Context) error {
				_, err := api.Network.ListPrivateIps(ctx, core.ListPrivateIpsRequest{SubnetId: subnet, Limit: one})
				return err
			}},
			ociProbe{"ListIpv6s", "subnet " + s, func(ctx context.Context) error {
				_, err := api.Network.ListIpv6s(ctx, core.ListIpv6sRequest{SubnetId: subnet, Limit: one})
				return err
			}})
		break // one subnet tells
	}
	return probes
}

// Permissions reports one failed row per shipped-policy permission a
// read shows missing, and a row naming what no read can check.
func Permissions(ctx context.Context, api ReadAPI, t Target, rep *preflight.Report) {
	ociPermissionsWith(ctx, ociProbes(api, t), rep)
}

func ociPermissionsWith(ctx context.Context, probes []ociProbe, rep *preflight.Report) {
	statements, err := ociiam.Parse(deploy.OCIPolicyFor("group", "ccm", "c"))
	if err != nil { // a unit test keeps the embedded policy valid
		rep.Fail("permissions", "the shipped OCI policy does not parse: "+err.Error(), "report this bug")
		return
	}
	const fix = "add the statements of deploy/policies/oci-policy.txt to the policy of the CCM's group or dynamic group, in its compartment (docs/credentials.md, \"Cloud permissions\"); if they are there, check that the compartment or resource exists"
	// statementOf names the shipped statement that grants perm.
	statementOf := func(perm string) string {
		for _, st := range statements {
			if st.Grants(perm) {
				return st.Verb.String() + " " + st.ResourceType
			}
		}
		rt, v, _ := ociiam.Least(perm)
		return v.String() + " " + rt
	}
	type failure struct {
		probe      ociProbe
		code       string
		candidates []string // statements that may be missing
	}
	probed, granted := map[string]bool{}, map[string]bool{}
	var failures []failure
	var allowed int
	for _, p := range probes {
		op, ok := ociiam.LookupOperation(p.op)
		if !ok {
			continue // a unit test keeps every probe in the table
		}
		need := op.For(func(string) string { return "" })
		if p.op == "ListPublicIps" {
			need = []string{"PUBLIC_IP_READ"} // scope REGION
		}
		for _, perm := range need {
			probed[perm] = true
		}
		err := p.call(ctx)
		se, isSE := common.IsServiceError(err)
		switch {
		case err == nil, isSE && se.GetHTTPStatusCode() != http.StatusNotFound:
			// Past IAM (another error is another check's business).
			allowed++
			for _, perm := range need {
				granted[perm] = true
			}
		case isSE:
			f := failure{probe: p, code: se.GetCode()}
			for _, perm := range need {
				if st := statementOf(perm); !slices.Contains(f.candidates, st) {
					f.candidates = append(f.candidates, st)
				}
			}
			failures = append(failures, f)
		default:
			rep.Warn("permissions", fmt.Sprintf("%s of %s: %v", p.op, p.where, err), "check endpoint and the network, then run preflight again")
		}
	}
	// A read needing several statements blames only those no successful
	// read proved, and none when one of them is blamed already.
	proven := map[string]bool{}
	for perm := range granted {
		proven[statementOf(perm)] = true
	}
	unproven := func(f failure) []string {
		return slices.DeleteFunc(slices.Clone(f.candidates), func(st string) bool { return proven[st] })
	}
	blamed := map[string]bool{}
	report := func(f failure, st string) {
		blamed[st] = true
		rep.Fail("permission "+st, fmt.Sprintf("%s of %s answered 404 %s: the policy lacks %s, or %s does not exist",
			strings.TrimPrefix(f.probe.op, "nlb:"), f.probe.where, f.code, st, f.probe.where), fix)
	}
	for _, f := range failures {
		if c := unproven(f); len(c) == 1 {
			report(f, c[0])
		}
	}
	for _, f := range failures {
		c := unproven(f)
		if len(c) < 2 || slices.ContainsFunc(c, func(st string) bool { return blamed[st] }) {
			continue
		}
		for _, st := range c {
			report(f, st)
		}
	}
	if allowed > 0 {
		rep.Pass("permissions", fmt.Sprintf("%d reads of the shipped OCI policy are allowed", allowed))
	}
	var unchecked []string
	for _, st := range statements {
		var perms []string
		for _, perm := range ociiam.VerbPermissions(st.ResourceType, st.Verb) {
			if st.Grants(perm) && !probed[perm] {
				perms = append(perms, perm)
			}
		}
		if len(perms) > 0 {
			unchecked = append(unchecked, fmt.Sprintf("%s %s (%s)", st.Verb, st.ResourceType, strings.Join(perms, ", ")))
		}
	}
	slices.Sort(unchecked)
	rep.Skip("write permissions", "not checked, as no OCI operation the CCM calls has a dry run: "+strings.Join(unchecked, "; ")+
		" (the e2e suite proves the shipped policy grants them)")
}
