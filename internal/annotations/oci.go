package annotations

// The OCI annotations are explained in docs/oci.md and listed, with every
// other annotation, in the generated reference docs/annotations.md (./gen
// reads every file of this package, names.go first). Their doc comments
// follow the same Type / Default / Providers form.

// Prefixes of the public OCI cloud-controller-manager's annotations, kept so
// that existing manifests keep working.
const (
	OCILBPrefix  = "service.beta.kubernetes.io/oci-load-balancer-"
	OCINLBPrefix = "oci-network-load-balancer.oraclecloud.com/"
)

// OCI: the public OCI cloud-controller-manager's annotations
//
// The names of the public OCI CCM, so that existing manifests keep working.
const (
	// OCILoadBalancerType chooses the OCI service: lb (the Load Balancer,
	// flexible shape) or nlb (the Network Load Balancer, layer 4, TCP and
	// UDP). Changing it replaces the load balancer (new address).
	//
	// Type: enum (lb, nlb)
	// Default: lb
	// Providers: oci
	OCILoadBalancerType Name = "oci.oraclecloud.com/load-balancer-type"

	// OCILBInternal makes the load balancer private: its address comes
	// from the (private) subnet and is reachable only from the VCN. Fixed
	// at creation.
	//
	// Type: bool
	// Default: false
	// Providers: oci (lb)
	OCILBInternal Name = OCILBPrefix + "internal"

	// OCILBShape is the load balancer shape: flexible (sized by
	// shape-flex-min and shape-flex-max) or a legacy fixed shape (10Mbps,
	// 100Mbps, 400Mbps, 8000Mbps). OCI creates only flexible load balancers
	// since May 2023, so a fixed shape is created as flexible with minimum
	// = maximum = its bandwidth (100Mbps: 100-100 Mbps), with a Warning
	// Event saying so; an existing load balancer of that fixed shape is kept
	// as it is. Fixed at creation.
	//
	// Type: string (flexible, 10Mbps, 100Mbps, 400Mbps, 8000Mbps)
	// Default: flexible
	// Providers: oci (lb)
	OCILBShape Name = OCILBPrefix + "shape"

	// OCILBShapeFlexMin is the flexible shape's minimum bandwidth in Mbps.
	//
	// Type: int (10-8000)
	// Default: 10
	// Providers: oci (lb)
	OCILBShapeFlexMin Name = OCILBPrefix + "shape-flex-min"

	// OCILBShapeFlexMax is the flexible shape's maximum bandwidth in Mbps.
	//
	// Type: int (10-8000, at least shape-flex-min)
	// Default: 100
	// Providers: oci (lb)
	OCILBShapeFlexMax Name = OCILBPrefix + "shape-flex-max"

	// OCILBSubnet1 is the subnet (OCID) the load balancer lives in,
	// overriding loadBalancer.subnet1 of the cloud config. Fixed at creation.
	//
	// Type: string (ocid1.subnet...)
	// Default: loadBalancer.subnet1
	// Providers: oci (lb)
	OCILBSubnet1 Name = OCILBPrefix + "subnet1"

	// OCILBSubnet2 is a second subnet for a public load balancer in
	// AD-specific subnets, overriding loadBalancer.subnet2.
	//
	// Type: string (ocid1.subnet...)
	// Default: loadBalancer.subnet2
	// Providers: oci (lb)
	OCILBSubnet2 Name = OCILBPrefix + "subnet2"

	// OCILBHealthCheckRetries is the number of failed probes after which a
	// backend is taken out.
	//
	// Type: int (1-10)
	// Default: 3 (or lb.ccmkit.io/health-check-unhealthy-threshold)
	// Providers: oci (lb)
	OCILBHealthCheckRetries Name = OCILBPrefix + "health-check-retries"

	// OCILBHealthCheckInterval is the time between two probes, in
	// milliseconds as upstream (a duration such as 10s is accepted too).
	//
	// Type: milliseconds (1000-1800000) or duration
	// Default: 5000 (or lb.ccmkit.io/health-check-interval)
	// Providers: oci (lb)
	OCILBHealthCheckInterval Name = OCILBPrefix + "health-check-interval"

	// OCILBHealthCheckTimeout is how long a probe may take, in
	// milliseconds (or a duration); less than the interval.
	//
	// Type: milliseconds (1-600000) or duration
	// Default: 2000 (or lb.ccmkit.io/health-check-timeout)
	// Providers: oci (lb)
	OCILBHealthCheckTimeout Name = OCILBPrefix + "health-check-timeout"

	// OCILBConnectionIdleTimeout is the listeners' idle timeout in seconds.
	//
	// Type: int seconds (1-7200)
	// Default: OCI's (300 s for TCP, 60 s for HTTP)
	// Providers: oci (lb)
	OCILBConnectionIdleTimeout Name = OCILBPrefix + "connection-idle-timeout"

	// OCILBBackendProtocol is the listeners' protocol: TCP (pass-through)
	// or HTTP.
	//
	// Type: enum (TCP, HTTP)
	// Default: TCP
	// Providers: oci (lb)
	OCILBBackendProtocol Name = OCILBPrefix + "backend-protocol"

	// OCILBSecurityListManagementMode overrides the cloud config's
	// loadBalancer.securityListManagementMode for this Service.
	//
	// Type: enum (None, Frontend, All)
	// Default: loadBalancer.securityListManagementMode (None)
	// Providers: oci (lb)
	OCILBSecurityListManagementMode Name = OCILBPrefix + "security-list-management-mode"

	// OCINodeLabelSelector is NodeSelector under the public OCI CCM's name,
	// read for a load balancer (lb) as upstream does; an nlb reads
	// OCINLBNodeLabelSelector instead. When NodeSelector is set too and
	// says otherwise, NodeSelector is used and a Warning Event
	// (NodeSelectorAnnotationsDisagree) names both.
	//
	// Type: label selector (pool=edge,!spot)
	// Default: every node
	// Providers: oci (lb)
	OCINodeLabelSelector Name = "oci.oraclecloud.com/node-label-selector"

	// OCINLBInternal makes the network load balancer private. Fixed at
	// creation.
	//
	// Type: bool
	// Default: false
	// Providers: oci (nlb)
	OCINLBInternal Name = OCINLBPrefix + "internal"

	// OCINLBSubnet is the subnet (OCID) the network load balancer lives in,
	// overriding loadBalancer.subnet1. Fixed at creation.
	//
	// Type: string (ocid1.subnet...)
	// Default: loadBalancer.subnet1
	// Providers: oci (nlb)
	OCINLBSubnet Name = OCINLBPrefix + "subnet"

	// OCINLBHealthCheckRetries is the number of failed probes after which
	// a backend is taken out.
	//
	// Type: int (1-10)
	// Default: 3
	// Providers: oci (nlb)
	OCINLBHealthCheckRetries Name = OCINLBPrefix + "health-check-retries"

	// OCINLBHealthCheckInterval is the time between two probes, in
	// milliseconds (or a duration).
	//
	// Type: milliseconds (1000-1800000) or duration
	// Default: 5000
	// Providers: oci (nlb)
	OCINLBHealthCheckInterval Name = OCINLBPrefix + "health-check-interval"

	// OCINLBHealthCheckTimeout is how long a probe may take, in
	// milliseconds (or a duration).
	//
	// Type: milliseconds (1-600000) or duration
	// Default: 2000
	// Providers: oci (nlb)
	OCINLBHealthCheckTimeout Name = OCINLBPrefix + "health-check-timeout"

	// OCINLBBackendPolicy is how the network load balancer picks a
	// backend: FIVE_TUPLE, THREE_TUPLE or TWO_TUPLE.
	//
	// Type: enum (FIVE_TUPLE, THREE_TUPLE, TWO_TUPLE)
	// Default: FIVE_TUPLE; TWO_TUPLE with sessionAffinity ClientIP
	// Providers: oci (nlb)
	OCINLBBackendPolicy Name = OCINLBPrefix + "backend-policy"

	// OCINLBIsPreserveSource keeps the client's source address on packets
	// to the backends.
	//
	// Type: bool
	// Default: false
	// Providers: oci (nlb)
	OCINLBIsPreserveSource Name = OCINLBPrefix + "is-preserve-source"

	// OCINLBExternalIPOnly: a public network load balancer lists its
	// private address too; true publishes only the public address(es) in
	// the Service status, false publishes the private one as well, after the
	// public ones. No effect on a private (internal) one, which publishes
	// its private address. The public OCI CCM's default is false (OKE,
	// "Configuring Load Balancers and Network Load Balancers": "Note that
	// "false" is the default value"; without it "the kubectl get service
	// command ... returns both the network load balancer's public IP
	// address and private IP address"); ours is true, so that a client
	// taking the first address never gets one it cannot reach. Unset, a
	// private address the Service's status already lists stays there (a
	// switch-over from the public OCI CCM changes no address); true drops it.
	//
	// Type: bool
	// Default: true
	// Providers: oci (nlb)
	OCINLBExternalIPOnly Name = OCINLBPrefix + "external-ip-only"

	// OCINLBSecurityListManagementMode overrides the cloud config's
	// loadBalancer.securityListManagementMode for this Service.
	//
	// Type: enum (None, Frontend, All)
	// Default: loadBalancer.securityListManagementMode (None)
	// Providers: oci (nlb)
	OCINLBSecurityListManagementMode Name = OCINLBPrefix + "security-list-management-mode"

	// OCINLBNodeLabelSelector is NodeSelector under the public OCI CCM's
	// name for a network load balancer (nlb). When NodeSelector is set too
	// and says otherwise, NodeSelector is used and a Warning Event
	// (NodeSelectorAnnotationsDisagree) names both.
	//
	// Type: label selector (pool=edge,!spot)
	// Default: every node
	// Providers: oci (nlb)
	OCINLBNodeLabelSelector Name = OCINLBPrefix + "node-label-selector"
)

// OCI network security groups (lbops/nsg.go): the public OCI CCM's names.
const (
	// OCINetworkSecurityGroups is the load balancer's (lb) whole list of
	// network security groups: comma-separated NSG OCIDs, at most 5 (4
	// with security-rule-management-mode NSG, whose managed NSG counts).
	// Set at creation and replaced in place when it changes; an NSG taken
	// off the list is detached.
	//
	// Type: string (comma-separated NSG OCIDs)
	// Default: none (the load balancer is in no NSG but the managed one)
	// Providers: oci (lb)
	OCINetworkSecurityGroups Name = "oci.oraclecloud.com/oci-network-security-groups"

	// OCINLBNetworkSecurityGroups is OCINetworkSecurityGroups for a
	// network load balancer (nlb).
	//
	// Type: string (comma-separated NSG OCIDs)
	// Default: none
	// Providers: oci (nlb)
	OCINLBNetworkSecurityGroups Name = OCINLBPrefix + "oci-network-security-groups"

	// OCISecurityRuleManagementMode chooses how the CCM opens the network
	// to the load balancer, for both kinds, over
	// security-list-management-mode: SL-All and SL-Frontend are the
	// security list modes All and Frontend, None writes no rule, and NSG
	// has the CCM create a frontend NSG for the Service (rules from
	// loadBalancerSourceRanges, or 0.0.0.0/0, to the listener ports),
	// attach it to the load balancer, and delete it with the Service; with
	// oci-backend-network-security-group it also opens those NSGs to the
	// frontend NSG on the NodePorts and health check ports.
	//
	// Type: enum (NSG, SL-All, SL-Frontend, None)
	// Default: the security-list-management-mode annotation, else the cloud config's
	// Providers: oci
	OCISecurityRuleManagementMode Name = "oci.oraclecloud.com/security-rule-management-mode"

	// OCIBackendNetworkSecurityGroup names the nodes' NSGs (comma-separated
	// OCIDs) that security-rule-management-mode NSG opens to the managed
	// frontend NSG: ingress from it on the NodePorts and health check ports
	// (and from loadBalancerSourceRanges for an NLB that preserves the
	// client's address). Our rules there are removed with the Service;
	// nothing else in those NSGs is touched. Read only in mode NSG.
	//
	// Type: string (comma-separated NSG OCIDs)
	// Default: none
	// Providers: oci
	OCIBackendNetworkSecurityGroup Name = "oci.oraclecloud.com/oci-backend-network-security-group"
)
