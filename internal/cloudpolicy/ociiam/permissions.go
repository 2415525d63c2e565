package ociiam

import (
	"maps"
	"slices"
	"strings"
)

// The permission tables below come from the OCI policy reference, read on
// the pages' 2024 revisions:
//
//	[core] "Details for the Core Services"
//	       https://docs.oracle.com/en-us/iaas/Content/Identity/Reference/corepolicyreference.htm
//	       sections "Details for Verb + Resource-Type Combinations" (what each
//	       verb grants) and "Permissions Required for Each API Operation"
//	[lb]   "Details for Load Balancing"
//	       https://docs.oracle.com/en-us/iaas/Content/Identity/Reference/lbpolicyreference.htm
//	[nlb]  "Details for Network Load Balancer"
//	       https://docs.oracle.com/en-us/iaas/Content/Identity/Reference/nlbpolicyreference.htm
//	[iam]  "Details for IAM without Identity Domains" (compartments)
//	       https://docs.oracle.com/en-us/iaas/Content/Identity/Reference/iampolicyreference.htm
//	[common] "Common Policies", "Let network admins manage load balancers"
//	       https://docs.oracle.com/en-us/iaas/Content/Identity/Concepts/commonpolicies.htm
//
// Only the resource types whose operations cloudsim serves are listed.

// verbTable is, per individual resource type, the permissions each verb
// adds to the one below it (the tables' "+" cells).
var verbTable = map[string][4][]string{
	// [core] instance-family: instances.
	"instances": {
		{"INSTANCE_INSPECT"},
		{"INSTANCE_READ"},
		{"INSTANCE_UPDATE", "INSTANCE_CREATE_IMAGE", "INSTANCE_POWER_ACTIONS", "INSTANCE_ATTACH_VOLUME", "INSTANCE_DETACH_VOLUME"},
		{"INSTANCE_CREATE", "INSTANCE_DELETE", "INSTANCE_ATTACH_SECONDARY_VNIC", "INSTANCE_DETACH_SECONDARY_VNIC", "INSTANCE_MOVE"},
	},
	// [core] virtual-network-family.
	"vnic-attachments": {{"VNIC_ATTACHMENT_READ"}, nil, nil, nil},
	"vnics": {
		{"VNIC_READ"}, nil,
		{"VNIC_ATTACH", "VNIC_DETACH", "VNIC_CREATE", "VNIC_DELETE", "VNIC_UPDATE", "VNIC_ASSOCIATE_NETWORK_SECURITY_GROUP", "VNIC_DISASSOCIATE_NETWORK_SECURITY_GROUP"},
		nil,
	},
	"private-ips": {
		{"PRIVATE_IP_READ"}, nil,
		{"PRIVATE_IP_UPDATE", "PRIVATE_IP_ASSIGN", "PRIVATE_IP_UNASSIGN", "PRIVATE_IP_CREATE", "PRIVATE_IP_DELETE", "PRIVATE_IP_ASSIGN_PUBLIC_IP", "PRIVATE_IP_UNASSIGN_PUBLIC_IP"},
		{"PRIVATE_IP_ROUTE_TABLE_ATTACH", "PRIVATE_IP_ROUTE_TABLE_DETACH"},
	},
	"public-ips": {
		nil,
		{"PUBLIC_IP_READ"},
		{"PUBLIC_IP_ASSIGN_PRIVATE_IP", "PUBLIC_IP_UNASSIGN_PRIVATE_IP"},
		{"PUBLIC_IP_UPDATE", "PUBLIC_IP_CREATE", "PUBLIC_IP_DELETE"},
	},
	"ipv6s": {nil, {"IPV6_READ"}, nil, {"IPV6_UPDATE", "IPV6_CREATE", "IPV6_DELETE"}},
	"vcns": {
		{"VCN_READ"}, nil, nil,
		{"VCN_ATTACH", "VCN_DETACH", "VCN_UPDATE", "VCN_CREATE", "VCN_DELETE", "VCN_MOVE"},
	},
	"subnets": {
		{"SUBNET_READ"}, nil,
		{"SUBNET_ATTACH", "SUBNET_DETACH"},
		{"SUBNET_CREATE", "SUBNET_UPDATE", "SUBNET_DELETE", "SUBNET_MOVE"},
	},
	// [core]: "Ability to update a security list is available only with
	// the manage verb, not the use verb."
	"security-lists": {
		{"SECURITY_LIST_READ"}, nil, nil,
		{"SECURITY_LIST_ATTACH", "SECURITY_LIST_DETACH", "SECURITY_LIST_UPDATE", "SECURITY_LIST_CREATE", "SECURITY_LIST_DELETE", "SECURITY_LIST_MOVE"},
	},
	"network-security-groups": {
		{"NETWORK_SECURITY_GROUP_INSPECT"},
		{"NETWORK_SECURITY_GROUP_READ"},
		{"NETWORK_SECURITY_GROUP_LIST_SECURITY_RULES", "NETWORK_SECURITY_GROUP_LIST_MEMBERS", "NETWORK_SECURITY_GROUP_UPDATE_MEMBERS"},
		{"NETWORK_SECURITY_GROUP_UPDATE", "NETWORK_SECURITY_GROUP_CREATE", "NETWORK_SECURITY_GROUP_DELETE", "NETWORK_SECURITY_GROUP_MOVE", "NETWORK_SECURITY_GROUP_UPDATE_SECURITY_RULES"},
	},
	// [lb]
	"load-balancers": {
		{"LOAD_BALANCER_INSPECT"},
		{"LOAD_BALANCER_READ"},
		{"LOAD_BALANCER_UPDATE", "LOAD_BALANCER_MOVE"},
		{"LOAD_BALANCER_CREATE", "LOAD_BALANCER_DELETE"},
	},
	// [nlb]
	"network-load-balancers": {
		{"NETWORK_LOAD_BALANCER_INSPECT"},
		{"NETWORK_LOAD_BALANCER_READ"},
		{"NETWORK_LOAD_BALANCER_UPDATE"},
		{"NETWORK_LOAD_BALANCER_CREATE", "NETWORK_LOAD_BALANCER_DELETE", "NETWORK_LOAD_BALANCER_MOVE"},
	},
	// [iam]
	"compartments": {{"COMPARTMENT_INSPECT"}, nil, {"COMPARTMENT_UPDATE"}, {"COMPARTMENT_CREATE", "COMPARTMENT_DELETE", "COMPARTMENT_RECOVER"}},
}

// families are the aggregate resource types ([core] "Resource-Types"),
// restricted to the individual types above. all-resources covers every
// type ("Policy Syntax").
var families = map[string][]string{
	"instance-family": {"instances"},
	"virtual-network-family": {"vnic-attachments", "vnics", "private-ips", "public-ips", "ipv6s", "vcns", "subnets",
		"security-lists", "network-security-groups"},
}

// VerbPermissions lists what verb grants on a resource type (individual,
// family or all-resources), cumulatively.
func VerbPermissions(resourceType string, v Verb) []string {
	types := []string{resourceType}
	if f, ok := families[resourceType]; ok {
		types = f
	} else if resourceType == "all-resources" {
		types = slices.Sorted(maps.Keys(verbTable))
	}
	var out []string
	for _, t := range types {
		levels := verbTable[t]
		for i := 0; i < int(v) && i < len(levels); i++ {
			out = append(out, levels[i]...)
		}
	}
	return out
}

// KnownResourceType reports whether the table knows the resource type.
func KnownResourceType(t string) bool {
	_, ok := verbTable[t]
	_, fam := families[t]
	return ok || fam || t == "all-resources"
}

// ResourceTypes lists the known resource types, families last.
func ResourceTypes() []string {
	return append(slices.Sorted(maps.Keys(verbTable)), append(slices.Sorted(maps.Keys(families)), "all-resources")...)
}

// KnownPermission reports whether some resource type's verb grants perm.
func KnownPermission(perm string) bool {
	_, _, ok := Least(perm)
	return ok
}

// Least is the individual resource type and the least verb that grant
// perm.
func Least(perm string) (resourceType string, v Verb, ok bool) {
	for _, t := range slices.Sorted(maps.Keys(verbTable)) {
		for i, level := range verbTable[t] {
			if slices.Contains(level, perm) {
				return t, Verb(i + 1), true
			}
		}
	}
	return "", 0, false
}

// Operation is one API operation and the permissions it needs.
type Operation struct {
	// Name is the operation as cloudsim names it: the API's operation
	// name ("ListInstances"), with "nlb:" before Network Load Balancing's,
	// whose names repeat Load Balancing's.
	Name string
	// Permissions are always needed.
	Permissions []string
	// When adds permissions needed only for some requests, keyed by a
	// query parameter: "param=value" (a value) or "param" (present).
	When map[string][]string
	// Source cites the reference; "cloudsim's choice" marks a reading of
	// ours where the reference is silent.
	Source string
}

// All lists every permission the operation may need (any request).
func (o Operation) All() []string {
	out := slices.Clone(o.Permissions)
	for _, k := range slices.Sorted(maps.Keys(o.When)) {
		for _, p := range o.When[k] {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// For lists the permissions one request needs; query returns a query
// parameter's value ("" when absent).
func (o Operation) For(query func(string) string) []string {
	out := slices.Clone(o.Permissions)
	for _, k := range slices.Sorted(maps.Keys(o.When)) {
		param, value, byValue := strings.Cut(k, "=")
		got := query(param)
		if (byValue && strings.EqualFold(got, value)) || (!byValue && got != "") {
			out = append(out, o.When[k]...)
		}
	}
	return out
}

const (
	srcCore   = "[core] Permissions Required for Each API Operation"
	srcLB     = "[lb] Permissions Required for Each API Operation"
	srcNLB    = "[nlb] Permissions Required for Each API Operation"
	srcLBNet  = "; the subnet (and NSG) permissions are cloudsim's reading of [common]: \"additional policies to use the associated networking resources are required\""
	srcChoice = "cloudsim's choice: not in the reference; "
)

// operations is the table: every operation cloudsim serves.
var operations = []Operation{
	// Compute.
	{Name: "ListInstances", Permissions: []string{"INSTANCE_READ"}, Source: srcCore},
	{Name: "GetInstance", Permissions: []string{"INSTANCE_READ"}, Source: srcCore},
	{Name: "ListVnicAttachments", Permissions: []string{"VNIC_ATTACHMENT_READ", "INSTANCE_INSPECT"}, Source: srcCore},
	// Identity.
	{Name: "ListAvailabilityDomains", Permissions: []string{"COMPARTMENT_INSPECT"}, Source: "[iam] Permissions Required for Each API Operation"},
	// VirtualNetwork.
	{Name: "GetVnic", Permissions: []string{"VNIC_READ"}, Source: srcCore},
	{Name: "UpdateVnic", Permissions: []string{"VNIC_UPDATE"}, Source: srcCore +
		" (adding or removing NSGs also needs NETWORK_SECURITY_GROUP_UPDATE_MEMBERS and VNIC_ASSOCIATE_NETWORK_SECURITY_GROUP, which cloudsim does not require: cloudsim's choice)"},
	{Name: "ListPrivateIps", Permissions: []string{"PRIVATE_IP_READ"}, Source: srcCore},
	{Name: "ListPublicIps", When: map[string][]string{"scope=REGION": {"PUBLIC_IP_READ"}, "scope=AVAILABILITY_DOMAIN": {"PRIVATE_IP_READ"}},
		Source: srcCore + ": ephemeral public IPs (scope AVAILABILITY_DOMAIN) need PRIVATE_IP_READ, reserved ones (scope REGION) PUBLIC_IP_READ"},
	{Name: "GetPublicIpByIpAddress", Permissions: []string{"PUBLIC_IP_READ"},
		Source: srcCore + " (for reserved public IPs; cloudsim judges every lookup as one, the CCM's use)"},
	{Name: "GetPublicIp", Permissions: []string{"PUBLIC_IP_READ"}, Source: srcCore + " (for reserved public IPs, the ones cloudsim creates)"},
	{Name: "CreatePublicIp", Permissions: []string{"PUBLIC_IP_CREATE", "PUBLIC_IP_ASSIGN_PRIVATE_IP", "PRIVATE_IP_ASSIGN_PUBLIC_IP"}, Source: srcCore + " (reserved public IPs)"},
	{Name: "DeletePublicIp", Permissions: []string{"PUBLIC_IP_DELETE", "PUBLIC_IP_UNASSIGN_PRIVATE_IP", "PRIVATE_IP_UNASSIGN_PUBLIC_IP"}, Source: srcCore + " (reserved public IPs)"},
	{Name: "ListIpv6s", Permissions: []string{"IPV6_READ"}, When: map[string][]string{"subnetId": {"SUBNET_READ"}, "vnicId": {"VNIC_READ"}},
		Source: srcCore + ": \"IPV6_READ and SUBNET_READ (if listing by subnet) and VNIC_READ (if listing by VNIC)\""},
	{Name: "GetVcn", Permissions: []string{"VCN_READ"}, Source: srcCore},
	{Name: "ListVcns", Permissions: []string{"VCN_READ"}, Source: srcCore},
	{Name: "GetSubnet", Permissions: []string{"SUBNET_READ"}, Source: srcCore},
	{Name: "ListSubnets", Permissions: []string{"SUBNET_READ"}, Source: srcCore},
	{Name: "GetSecurityList", Permissions: []string{"SECURITY_LIST_READ"}, Source: srcCore},
	{Name: "ListSecurityLists", Permissions: []string{"SECURITY_LIST_READ"}, Source: srcCore},
	{Name: "UpdateSecurityList", Permissions: []string{"SECURITY_LIST_UPDATE"}, Source: srcCore},
	{Name: "ListNetworkSecurityGroups", Permissions: []string{"NETWORK_SECURITY_GROUP_READ"}, Source: srcCore},
	{Name: "GetNetworkSecurityGroup", Permissions: []string{"NETWORK_SECURITY_GROUP_READ"}, Source: srcCore},
	{Name: "CreateNetworkSecurityGroup", Permissions: []string{"NETWORK_SECURITY_GROUP_CREATE", "VCN_ATTACH"}, Source: srcCore},
	{Name: "UpdateNetworkSecurityGroup", Permissions: []string{"NETWORK_SECURITY_GROUP_UPDATE"}, Source: srcCore},
	{Name: "DeleteNetworkSecurityGroup", Permissions: []string{"NETWORK_SECURITY_GROUP_DELETE", "VCN_DETACH"}, Source: srcCore},
	{Name: "ListNetworkSecurityGroupSecurityRules", Permissions: []string{"NETWORK_SECURITY_GROUP_LIST_SECURITY_RULES"}, Source: srcCore},
	{Name: "ListNetworkSecurityGroupVnics", Permissions: []string{"NETWORK_SECURITY_GROUP_LIST_MEMBERS"},
		Source: "[core] network-security-groups verb table: use covers ListNetworkSecurityGroupVnics (NETWORK_SECURITY_GROUP_LIST_MEMBERS)"},
	{Name: "AddNetworkSecurityGroupSecurityRules", Permissions: []string{"NETWORK_SECURITY_GROUP_UPDATE_SECURITY_RULES"}, Source: srcCore +
		" (a rule naming another NSG also needs NETWORK_SECURITY_GROUP_INSPECT; cloudsim does not require it: cloudsim's choice)"},
	{Name: "UpdateNetworkSecurityGroupSecurityRules", Permissions: []string{"NETWORK_SECURITY_GROUP_UPDATE_SECURITY_RULES"}, Source: srcCore},
	{Name: "RemoveNetworkSecurityGroupSecurityRules", Permissions: []string{"NETWORK_SECURITY_GROUP_UPDATE_SECURITY_RULES"}, Source: srcCore},

	// Load Balancing.
	{Name: "CreateLoadBalancer", Permissions: []string{"LOAD_BALANCER_CREATE", "SUBNET_ATTACH"}, Source: srcLB + srcLBNet},
	{Name: "ListLoadBalancers", Permissions: []string{"LOAD_BALANCER_INSPECT"}, Source: srcLB},
	{Name: "GetLoadBalancer", Permissions: []string{"LOAD_BALANCER_READ"}, Source: srcLB},
	{Name: "UpdateLoadBalancer", Permissions: []string{"LOAD_BALANCER_UPDATE"}, Source: srcLB},
	{Name: "DeleteLoadBalancer", Permissions: []string{"LOAD_BALANCER_DELETE", "SUBNET_DETACH"}, Source: srcLB + srcLBNet},
	{Name: "UpdateLoadBalancerShape", Permissions: []string{"LOAD_BALANCER_UPDATE"}, Source: srcChoice + "an update of the load balancer, as UpdateLoadBalancer"},
	{Name: "UpdateNetworkSecurityGroups", Permissions: []string{"LOAD_BALANCER_UPDATE", "NETWORK_SECURITY_GROUP_UPDATE_MEMBERS"},
		Source: srcChoice + "an update of the load balancer, as UpdateLoadBalancer" + srcLBNet},
	{Name: "CreateBackendSet", Permissions: []string{"LOAD_BALANCER_UPDATE"}, Source: srcLB},
	{Name: "ListBackendSets", Permissions: []string{"LOAD_BALANCER_READ"}, Source: srcLB},
	{Name: "GetBackendSet", Permissions: []string{"LOAD_BALANCER_READ"}, Source: srcLB},
	{Name: "UpdateBackendSet", Permissions: []string{"LOAD_BALANCER_UPDATE"}, Source: srcLB},
	{Name: "DeleteBackendSet", Permissions: []string{"LOAD_BALANCER_UPDATE"}, Source: srcLB},
	{Name: "GetBackendSetHealth", Permissions: []string{"LOAD_BALANCER_READ"}, Source: srcChoice + "a read, as GetHealthChecker"},
	{Name: "CreateListener", Permissions: []string{"LOAD_BALANCER_UPDATE"}, Source: srcLB},
	{Name: "UpdateListener", Permissions: []string{"LOAD_BALANCER_UPDATE"}, Source: srcLB},
	{Name: "DeleteListener", Permissions: []string{"LOAD_BALANCER_UPDATE"}, Source: srcLB},
	{Name: "CreateCertificate", Permissions: []string{"LOAD_BALANCER_UPDATE"}, Source: srcLB},
	{Name: "ListCertificates", Permissions: []string{"LOAD_BALANCER_READ"}, Source: srcLB},
	{Name: "DeleteCertificate", Permissions: []string{"LOAD_BALANCER_UPDATE"}, Source: srcLB},
	{Name: "CreateRuleSet", Permissions: []string{"LOAD_BALANCER_UPDATE"}, Source: srcChoice + "a change of the load balancer's configuration, as CreateListener"},
	{Name: "ListRuleSets", Permissions: []string{"LOAD_BALANCER_READ"}, Source: srcChoice + "a read, as ListBackendSets"},
	{Name: "GetRuleSet", Permissions: []string{"LOAD_BALANCER_READ"}, Source: srcChoice + "a read, as GetBackendSet"},
	{Name: "UpdateRuleSet", Permissions: []string{"LOAD_BALANCER_UPDATE"}, Source: srcChoice + "a change, as UpdateListener"},
	{Name: "DeleteRuleSet", Permissions: []string{"LOAD_BALANCER_UPDATE"}, Source: srcChoice + "a change, as DeleteListener"},
	{Name: "ListWorkRequests", Permissions: []string{"LOAD_BALANCER_READ"}, Source: srcLB},
	{Name: "GetWorkRequest", Permissions: []string{"LOAD_BALANCER_READ"}, Source: srcLB},
	{Name: "ListShapes", Permissions: []string{"LOAD_BALANCER_INSPECT"}, Source: srcLB},

	// Network Load Balancing. Its verb table puts Create/Delete of
	// listeners and backend sets under manage, while its per-operation
	// table says NETWORK_LOAD_BALANCER_UPDATE (use); the permission is
	// what IAM checks, so the per-operation table is followed.
	{Name: "nlb:CreateNetworkLoadBalancer", Permissions: []string{"NETWORK_LOAD_BALANCER_CREATE", "SUBNET_ATTACH"}, Source: srcNLB + srcLBNet},
	{Name: "nlb:ListNetworkLoadBalancers", Permissions: []string{"NETWORK_LOAD_BALANCER_INSPECT"}, Source: srcNLB},
	{Name: "nlb:GetNetworkLoadBalancer", Permissions: []string{"NETWORK_LOAD_BALANCER_READ"}, Source: srcNLB},
	{Name: "nlb:UpdateNetworkLoadBalancer", Permissions: []string{"NETWORK_LOAD_BALANCER_UPDATE"}, Source: srcNLB},
	{Name: "nlb:DeleteNetworkLoadBalancer", Permissions: []string{"NETWORK_LOAD_BALANCER_DELETE", "SUBNET_DETACH"}, Source: srcNLB + srcLBNet},
	{Name: "nlb:UpdateNetworkSecurityGroups", Permissions: []string{"NETWORK_LOAD_BALANCER_UPDATE", "NETWORK_SECURITY_GROUP_UPDATE_MEMBERS"}, Source: srcNLB + srcLBNet},
	{Name: "nlb:CreateBackendSet", Permissions: []string{"NETWORK_LOAD_BALANCER_UPDATE"}, Source: srcNLB},
	{Name: "nlb:ListBackendSets", Permissions: []string{"NETWORK_LOAD_BALANCER_READ"}, Source: srcNLB},
	{Name: "nlb:GetBackendSet", Permissions: []string{"NETWORK_LOAD_BALANCER_READ"}, Source: srcNLB},
	{Name: "nlb:UpdateBackendSet", Permissions: []string{"NETWORK_LOAD_BALANCER_UPDATE"}, Source: srcNLB},
	{Name: "nlb:DeleteBackendSet", Permissions: []string{"NETWORK_LOAD_BALANCER_UPDATE"}, Source: srcNLB},
	{Name: "nlb:GetBackendSetHealth", Permissions: []string{"NETWORK_LOAD_BALANCER_READ"}, Source: srcNLB},
	{Name: "nlb:CreateListener", Permissions: []string{"NETWORK_LOAD_BALANCER_UPDATE"}, Source: srcNLB},
	{Name: "nlb:ListListeners", Permissions: []string{"NETWORK_LOAD_BALANCER_READ"}, Source: srcNLB},
	{Name: "nlb:GetListener", Permissions: []string{"NETWORK_LOAD_BALANCER_READ"}, Source: srcNLB},
	{Name: "nlb:UpdateListener", Permissions: []string{"NETWORK_LOAD_BALANCER_UPDATE"}, Source: srcNLB},
	{Name: "nlb:DeleteListener", Permissions: []string{"NETWORK_LOAD_BALANCER_UPDATE"}, Source: srcNLB},
	{Name: "nlb:ListWorkRequests", Permissions: []string{"NETWORK_LOAD_BALANCER_READ"}, Source: srcNLB},
	{Name: "nlb:GetWorkRequest", Permissions: []string{"NETWORK_LOAD_BALANCER_READ"}, Source: srcNLB},
	{Name: "nlb:ListWorkRequestErrors", Permissions: []string{"NETWORK_LOAD_BALANCER_READ"}, Source: srcNLB},
}

var operationIndex = func() map[string]Operation {
	m := make(map[string]Operation, len(operations))
	for _, o := range operations {
		if _, dup := m[o.Name]; dup {
			panic("ociiam: operation listed twice: " + o.Name)
		}
		m[o.Name] = o
	}
	return m
}()

// LookupOperation returns the table's entry for an operation.
func LookupOperation(name string) (Operation, bool) {
	o, ok := operationIndex[name]
	return o, ok
}

// Operations lists the table, in its order.
func Operations() []Operation { return slices.Clone(operations) }
