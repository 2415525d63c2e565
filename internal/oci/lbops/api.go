package lbops

import (
	"context"
	"time"

	"github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	"github.com/oracle/oci-go-sdk/v65/networkloadbalancer"
)

// LBAPI is the slice of the OCI Load Balancer API the operations use;
// loadbalancer.LoadBalancerClient implements it; tests run it against
// cloudsim (lbenv_test.go).
type LBAPI interface {
	ListLoadBalancers(context.Context, loadbalancer.ListLoadBalancersRequest) (loadbalancer.ListLoadBalancersResponse, error)
	GetLoadBalancer(context.Context, loadbalancer.GetLoadBalancerRequest) (loadbalancer.GetLoadBalancerResponse, error)
	CreateLoadBalancer(context.Context, loadbalancer.CreateLoadBalancerRequest) (loadbalancer.CreateLoadBalancerResponse, error)
	// UpdateLoadBalancer writes the takeover's tags (takeover.go).
	UpdateLoadBalancer(context.Context, loadbalancer.UpdateLoadBalancerRequest) (loadbalancer.UpdateLoadBalancerResponse, error)
	DeleteLoadBalancer(context.Context, loadbalancer.DeleteLoadBalancerRequest) (loadbalancer.DeleteLoadBalancerResponse, error)
	CreateBackendSet(context.Context, loadbalancer.CreateBackendSetRequest) (loadbalancer.CreateBackendSetResponse, error)
	UpdateBackendSet(context.Context, loadbalancer.UpdateBackendSetRequest) (loadbalancer.UpdateBackendSetResponse, error)
	DeleteBackendSet(context.Context, loadbalancer.DeleteBackendSetRequest) (loadbalancer.DeleteBackendSetResponse, error)
	CreateListener(context.Context, loadbalancer.CreateListenerRequest) (loadbalancer.CreateListenerResponse, error)
	UpdateListener(context.Context, loadbalancer.UpdateListenerRequest) (loadbalancer.UpdateListenerResponse, error)
	DeleteListener(context.Context, loadbalancer.DeleteListenerRequest) (loadbalancer.DeleteListenerResponse, error)
	GetWorkRequest(context.Context, loadbalancer.GetWorkRequestRequest) (loadbalancer.GetWorkRequestResponse, error)
	UpdateNetworkSecurityGroups(context.Context, loadbalancer.UpdateNetworkSecurityGroupsRequest) (loadbalancer.UpdateNetworkSecurityGroupsResponse, error)
	// Certificates for TLS listeners and backend sets (tls.go).
	CreateCertificate(context.Context, loadbalancer.CreateCertificateRequest) (loadbalancer.CreateCertificateResponse, error)
	DeleteCertificate(context.Context, loadbalancer.DeleteCertificateRequest) (loadbalancer.DeleteCertificateResponse, error)
	// Rule sets (rulesets.go).
	CreateRuleSet(context.Context, loadbalancer.CreateRuleSetRequest) (loadbalancer.CreateRuleSetResponse, error)
	UpdateRuleSet(context.Context, loadbalancer.UpdateRuleSetRequest) (loadbalancer.UpdateRuleSetResponse, error)
	DeleteRuleSet(context.Context, loadbalancer.DeleteRuleSetRequest) (loadbalancer.DeleteRuleSetResponse, error)
}

// NLBAPI is the slice of the OCI Network Load Balancer API the operations
// use; networkloadbalancer.NetworkLoadBalancerClient implements it.
type NLBAPI interface {
	ListNetworkLoadBalancers(context.Context, networkloadbalancer.ListNetworkLoadBalancersRequest) (networkloadbalancer.ListNetworkLoadBalancersResponse, error)
	GetNetworkLoadBalancer(context.Context, networkloadbalancer.GetNetworkLoadBalancerRequest) (networkloadbalancer.GetNetworkLoadBalancerResponse, error)
	CreateNetworkLoadBalancer(context.Context, networkloadbalancer.CreateNetworkLoadBalancerRequest) (networkloadbalancer.CreateNetworkLoadBalancerResponse, error)
	UpdateNetworkLoadBalancer(context.Context, networkloadbalancer.UpdateNetworkLoadBalancerRequest) (networkloadbalancer.UpdateNetworkLoadBalancerResponse, error)
	DeleteNetworkLoadBalancer(context.Context, networkloadbalancer.DeleteNetworkLoadBalancerRequest) (networkloadbalancer.DeleteNetworkLoadBalancerResponse, error)
	CreateBackendSet(context.Context, networkloadbalancer.CreateBackendSetRequest) (networkloadbalancer.CreateBackendSetResponse, error)
	UpdateBackendSet(context.Context, networkloadbalancer.UpdateBackendSetRequest) (networkloadbalancer.UpdateBackendSetResponse, error)
	DeleteBackendSet(context.Context, networkloadbalancer.DeleteBackendSetRequest) (networkloadbalancer.DeleteBackendSetResponse, error)
	CreateListener(context.Context, networkloadbalancer.CreateListenerRequest) (networkloadbalancer.CreateListenerResponse, error)
	UpdateListener(context.Context, networkloadbalancer.UpdateListenerRequest) (networkloadbalancer.UpdateListenerResponse, error)
	DeleteListener(context.Context, networkloadbalancer.DeleteListenerRequest) (networkloadbalancer.DeleteListenerResponse, error)
	GetWorkRequest(context.Context, networkloadbalancer.GetWorkRequestRequest) (networkloadbalancer.GetWorkRequestResponse, error)
	ListWorkRequestErrors(context.Context, networkloadbalancer.ListWorkRequestErrorsRequest) (networkloadbalancer.ListWorkRequestErrorsResponse, error)
	UpdateNetworkSecurityGroups(context.Context, networkloadbalancer.UpdateNetworkSecurityGroupsRequest) (networkloadbalancer.UpdateNetworkSecurityGroupsResponse, error)
}

// NetworkAPI is the slice of the VirtualNetwork API that security list
// management uses; core.VirtualNetworkClient implements it.
type NetworkAPI interface {
	GetSubnet(context.Context, core.GetSubnetRequest) (core.GetSubnetResponse, error)
	ListSubnets(context.Context, core.ListSubnetsRequest) (core.ListSubnetsResponse, error)
	GetSecurityList(context.Context, core.GetSecurityListRequest) (core.GetSecurityListResponse, error)
	UpdateSecurityList(context.Context, core.UpdateSecurityListRequest) (core.UpdateSecurityListResponse, error)

	// Network security groups (nsg.go).
	ListNetworkSecurityGroups(context.Context, core.ListNetworkSecurityGroupsRequest) (core.ListNetworkSecurityGroupsResponse, error)
	CreateNetworkSecurityGroup(context.Context, core.CreateNetworkSecurityGroupRequest) (core.CreateNetworkSecurityGroupResponse, error)
	DeleteNetworkSecurityGroup(context.Context, core.DeleteNetworkSecurityGroupRequest) (core.DeleteNetworkSecurityGroupResponse, error)
	ListNetworkSecurityGroupSecurityRules(context.Context, core.ListNetworkSecurityGroupSecurityRulesRequest) (core.ListNetworkSecurityGroupSecurityRulesResponse, error)
	AddNetworkSecurityGroupSecurityRules(context.Context, core.AddNetworkSecurityGroupSecurityRulesRequest) (core.AddNetworkSecurityGroupSecurityRulesResponse, error)
	RemoveNetworkSecurityGroupSecurityRules(context.Context, core.RemoveNetworkSecurityGroupSecurityRulesRequest) (core.RemoveNetworkSecurityGroupSecurityRulesResponse, error)
	// GetPublicIpByIpAddress finds spec.loadBalancerIP's reserved IP (reservedip.go).
	GetPublicIpByIpAddress(context.Context, core.GetPublicIpByIpAddressRequest) (core.GetPublicIpByIpAddressResponse, error)
}

// named is a load balancer of a listing.
type named struct{ id, name string }

// wrState is a work request's state, for both services.
type wrState int

const (
	wrPending wrState = iota
	wrSucceeded
	wrFailed
)

// driver is one OCI load balancing service (LB or NLB) behind the neutral
// model, so that the pipelines in lbops.go are written once.
type driver interface {
	kind() Kind
	// find returns the load balancer under the first of the display names
	// that has one, ignoring DELETING and DELETED ones; nil when none has.
	// Several load balancers under that name are an error. A listing that
	// began after notBefore may answer (gather.go); the zero time: any.
	find(ctx context.Context, notBefore time.Time, displayNames ...string) (*actual, error)
	// findNow is find by one filtered call per name, made now and shared
	// with no other lookup (a creation's confirmation).
	findNow(ctx context.Context, displayNames ...string) (*actual, error)
	// listAll returns every live load balancer of the compartment, by id
	// and display name, from a listing that began after notBefore
	// (takeover.go, gather.go).
	listAll(ctx context.Context, notBefore time.Time) ([]named, error)
	get(ctx context.Context, id string) (*actual, error)
	// create starts creating the load balancer with its listeners and
	// backend sets inline, with the retry token, and returns the work request.
	create(ctx context.Context, d *Desired, ls []listenerModel, bss []backendSetModel, retryToken string) (string, error)
	// write applies one step and returns its work request.
	write(ctx context.Context, lbID string, s step) (string, error)
	remove(ctx context.Context, id string) (string, error)
	// workRequest reads a work request: its state, a message when it
	// failed, and the load balancer it is about.
	workRequest(ctx context.Context, id string) (wrState, string, string, error)
	// setNSGs replaces the load balancer's NSGs and returns the work
	// request (nsg.go).
	setNSGs(ctx context.Context, lbID string, ids []string) (string, error)
}
