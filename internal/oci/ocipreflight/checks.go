// Package ocipreflight is the OCI provider's preflight checks (the
// cloud-controller-manager's preflight subcommand): the config, the
// credentials (API key or instance principal), the IAM permissions the
// CCM's operations need (internal/cloudpolicy/ociiam), the VCN and subnets
// the config names, and the load balancer quotas, each read with the
// official SDK. The
// framework (report, registration, the checks every cloud shares) is
// internal/preflight.
package ocipreflight

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"

	"github.com/ccmkit/ccm/internal/preflight"
)

// API is the read-only part of the OCI API that the checks call: the
// SDK clients satisfy it.
type API struct {
	Compute interface {
		ListInstances(context.Context, core.ListInstancesRequest) (core.ListInstancesResponse, error)
	}
	Network interface {
		GetVcn(context.Context, core.GetVcnRequest) (core.GetVcnResponse, error)
		GetSubnet(context.Context, core.GetSubnetRequest) (core.GetSubnetResponse, error)
	}
	// Reads are the permission checks' reads (permissions.go); zero:
	// those checks are skipped.
	Reads ReadAPI
}

// Target is what the cloud config names.
type Target struct {
	Region, Compartment, VCN string
	// Subnets are loadBalancer.subnet1 and subnet2 (either may be empty);
	// LBDisabled is loadBalancer.disabled.
	Subnets    []string
	LBDisabled bool
	// BackendsPerSet is the documented limit of backends in one backend set
	// (internal/oci/lbops), which bounds the nodes one load balancer binds.
	BackendsPerSet int
}

// OCI runs the OCI checks: credentials (one signed read in the compartment)
// and the clock, the VCN and the load balancer subnets, the pod network
// against the VCN, and backends per backend set against the node count.
// clock must wrap the clients' transport.
func Check(ctx context.Context, api API, t Target, clock *preflight.Clock, in preflight.Input, rep *preflight.Report) {
	credsOK, authenticated := ociCredentials(ctx, api, t, rep)
	if authenticated && api.Reads.Compute != nil {
		Permissions(ctx, api.Reads, t, rep)
	}
	if !preflight.AfterCredentials(rep, clock, "OCI", credsOK,
		"VCN", "subnets", "route table", "cluster CIDR", "backends per backend set") {
		return
	}
	nets := ociVCN(ctx, api, t, rep)
	ociSubnets(ctx, api, t, rep)
	rep.Skip("route table", "OCI has no route controller here: pods use VCN-native addresses or an overlay CNI")
	preflight.CheckClusterCIDR(rep, in.ClusterCIDR, nets)
	ociBackends(t, in, rep)
}

// ociCredentials reports whether the signed call succeeded, and whether
// the key was authenticated (a 404 is an authenticated caller's answer:
// OCI answers 401 to one it does not know).
func ociCredentials(ctx context.Context, api API, t Target, rep *preflight.Report) (ok, authenticated bool) {
	const check = "credentials"
	resp, err := api.Compute.ListInstances(ctx, core.ListInstancesRequest{CompartmentId: &t.Compartment, Limit: common.Int(1)})
	if err != nil {
		detail, fix := ociAuthHint(err, t)
		rep.Fail(check, "ListInstances in the compartment: "+detail, fix)
		se, isSE := common.IsServiceError(err)
		return false, isSE && se.GetHTTPStatusCode() == http.StatusNotFound
	}
	more := ""
	if resp.OpcNextPage != nil {
		more = " (and more)"
	}
	rep.Pass(check, fmt.Sprintf("a signed ListInstances in %s answered: %d instance(s)%s in compartment %s", t.Region, len(resp.Items), more, t.Compartment))
	return true, true
}

// ociAuthHint turns a failed first call into what to look at. OCI answers
// 401 NotAuthenticated for a key, fingerprint, user or tenancy that do not
// match, or a Date more than 5 minutes off, and 404 NotAuthorizedOrNotFound
// for a compartment that does not exist or that no policy opens to the user
// (OCI API errors, https://docs.oracle.com/en-us/iaas/Content/API/References/apierrors.htm).
func ociAuthHint(err error, t Target) (detail, fix string) {
	se, ok := common.IsServiceError(err)
	if !ok {
		return err.Error(), "check endpoint (or region " + t.Region + ") and that this machine reaches the OCI API"
	}
	detail = fmt.Sprintf("%d %s: %s", se.GetHTTPStatusCode(), se.GetCode(), se.GetMessage())
	switch se.GetHTTPStatusCode() {
	case http.StatusUnauthorized:
		return detail, "the API key is not accepted: check user, tenancy, fingerprint and key (the key's public half must be uploaded to that user), and the clock (see the clock check)"
	case http.StatusNotFound:
		return detail, "compartment " + t.Compartment + " does not exist, or no policy lets the user read it: check compartment and the CCM's IAM policy (deploy/policies/oci-policy.txt, docs/credentials.md)"
	case http.StatusForbidden:
		return detail, "the CCM's group needs the statements of deploy/policies/oci-policy.txt (docs/credentials.md)"
	}
	return detail, "see the error code in the OCI API reference"
}

func ociVCN(ctx context.Context, api API, t Target, rep *preflight.Report) []preflight.Network {
	const check = "VCN"
	resp, err := api.Network.GetVcn(ctx, core.GetVcnRequest{VcnId: &t.VCN})
	if err != nil {
		rep.Fail(check, fmt.Sprintf("GetVcn %s: %s", t.VCN, ociErr(err)),
			"set vcn to the OCID of the VCN the nodes run in (Networking, Virtual cloud networks)")
		return nil
	}
	var nets []preflight.Network
	var cidrs []string
	blocks := resp.CidrBlocks
	if len(blocks) == 0 && resp.CidrBlock != nil {
		blocks = []string{*resp.CidrBlock}
	}
	for _, b := range blocks {
		if p, err := preflight.ParsePrefix(b); err == nil {
			nets = append(nets, preflight.Network{Name: "VCN " + deref(resp.DisplayName), CIDR: p})
			cidrs = append(cidrs, p.String())
		}
	}
	rep.Pass(check, fmt.Sprintf("VCN %s (%s) exists, %s", t.VCN, deref(resp.DisplayName), strings.Join(cidrs, ", ")))
	return nets
}

func ociSubnets(ctx context.Context, api API, t Target, rep *preflight.Report) {
	const check = "subnets"
	var ids []string
	for _, s := range t.Subnets {
		if s != "" {
			ids = append(ids, s)
		}
	}
	switch {
	case t.LBDisabled:
		rep.Skip(check, "load balancers are off (loadBalancer.disabled)")
		return
	case len(ids) == 0:
		rep.Warn(check, "no loadBalancer.subnet1 or subnet2: every LoadBalancer Service must name its subnet in an annotation",
			"set loadBalancer.subnet1 (and subnet2 for a non-regional subnet pair)")
		return
	}
	var bad, good []string
	for _, id := range ids {
		resp, err := api.Network.GetSubnet(ctx, core.GetSubnetRequest{SubnetId: common.String(id)})
		switch {
		case err != nil:
			bad = append(bad, fmt.Sprintf("%s: %s", id, ociErr(err)))
		case deref(resp.VcnId) != t.VCN:
			bad = append(bad, fmt.Sprintf("%s is in VCN %s, not %s", id, deref(resp.VcnId), t.VCN))
		default:
			good = append(good, fmt.Sprintf("%s (%s)", deref(resp.DisplayName), deref(resp.CidrBlock)))
		}
	}
	if len(bad) > 0 {
		rep.Fail(check, strings.Join(bad, "; "), "set loadBalancer.subnet1/subnet2 to subnets of the cluster's VCN")
		return
	}
	rep.Pass(check, "load balancer subnets "+strings.Join(good, ", ")+" in the VCN")
}

func ociBackends(t Target, in preflight.Input, rep *preflight.Report) {
	const check = "backends per backend set"
	switch {
	case in.Nodes < 0:
		rep.Skip(check, fmt.Sprintf("%d per backend set; the node count is unknown (no Kubernetes access)", t.BackendsPerSet))
	case in.Nodes > t.BackendsPerSet:
		rep.Warn(check, fmt.Sprintf("%d nodes, %d backends per backend set: each load balancer binds a subset of %d nodes", in.Nodes, t.BackendsPerSet, t.BackendsPerSet),
			"nothing to fix if a subset is enough (docs/loadbalancers.md)")
	default:
		rep.Pass(check, fmt.Sprintf("%d nodes fit in %d backends per backend set", in.Nodes, t.BackendsPerSet))
	}
	rep.Skip("load balancer quota", "OCI service limits are not read (no Limits API client): see Governance, Limits, Quotas and Usage in the console")
}

// ociErr is an OCI error without the SDK's multi-line troubleshooting text.
func ociErr(err error) string {
	if se, ok := common.IsServiceError(err); ok {
		return fmt.Sprintf("%d %s: %s", se.GetHTTPStatusCode(), se.GetCode(), se.GetMessage())
	}
	return err.Error()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
