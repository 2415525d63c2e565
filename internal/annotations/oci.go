package annotations

import "time"

// The OCI annotations are explained in docs/oci.md and listed, with every
// other annotation, in the generated reference docs/annotations.md (./gen
// reads every file of this package, names.go first). Their doc comments
// follow the same form as names.go's.

// securityListModes are the values of the security-list-management-mode
// annotations, those of the cloud config's loadBalancer.securityListManagementMode.
var securityListModes = []string{"None", "Frontend", "All"}

// Prefixes of the public OCI cloud-controller-manager's annotations, kept so
// that existing manifests keep working.
const (
	OCILBPrefix  = "service.beta.kubernetes.io/oci-load-balancer-"
	OCINLBPrefix = "oci-network-load-balancer.oraclecloud.com/"
)

// OCI: the public OCI cloud-controller-manager's annotations
//
// The names of the public OCI CCM, so that existing manifests keep working.
var (
	// OCILoadBalancerType chooses the OCI service: lb (the Load Balancer,
	// flexible shape) or nlb (the Network Load Balancer, layer 4, TCP and
	// UDP). Changing it replaces the load balancer (new address).
	//
	// Providers: oci
	OCILoadBalancerType = Enum{Name: "oci.oraclecloud.com/load-balancer-type", Values: []string{"lb", "nlb"}, Default: "lb"}

	// OCILBInternal makes the load balancer private: its address comes
	// from the (private) subnet and is reachable only from the VCN. Fixed
	// at creation.
	//
	// Providers: oci (lb)
	OCILBInternal = Bool{Name: OCILBPrefix + "internal"}

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
	// Providers: oci (lb)
	OCILBShapeFlexMin = Int{Name: OCILBPrefix + "shape-flex-min", Min: 10, Max: 8000, Default: 10}

	// OCILBShapeFlexMax is the flexible shape's maximum bandwidth in Mbps,
	// at least shape-flex-min.
	//
	// Providers: oci (lb)
	OCILBShapeFlexMax = Int{Name: OCILBPrefix + "shape-flex-max", Min: 10, Max: 8000, Default: 100}

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
	// Providers: oci (lb)
	OCILBHealthCheckRetries = Int{Name: OCILBPrefix + "health-check-retries", Min: 1, Max: 10, Default: 3, DefaultDoc: "3 (or lb.ccmkit.io/health-check-unhealthy-threshold)"}

	// OCILBHealthCheckInterval is the time between two probes, in
	// milliseconds as upstream (a duration such as 10s is accepted too).
	//
	// Providers: oci (lb)
	OCILBHealthCheckInterval = Duration{Name: OCILBPrefix + "health-check-interval", Unit: time.Millisecond, Min: time.Second, Max: 30 * time.Minute, Default: 5 * time.Second,
		DefaultDoc: "5000 (or lb.ccmkit.io/health-check-interval)"}

	// OCILBHealthCheckTimeout is how long a probe may take, in
	// milliseconds (or a duration); less than the interval.
	//
	// Providers: oci (lb)
	OCILBHealthCheckTimeout = Duration{Name: OCILBPrefix + "health-check-timeout", Unit: time.Millisecond, Min: time.Millisecond, Max: 10 * time.Minute, Default: 2 * time.Second,
		DefaultDoc: "2000 (or lb.ccmkit.io/health-check-timeout)"}

	// OCILBConnectionIdleTimeout is the listeners' idle timeout, in seconds
	// as upstream (a duration such as 5m is accepted too).
	//
	// Providers: oci (lb)
	OCILBConnectionIdleTimeout = Duration{Name: OCILBPrefix + "connection-idle-timeout", Min: time.Second, Max: 7200 * time.Second, DefaultDoc: "OCI's (300 s for TCP, 60 s for HTTP)"}

	// OCILBBackendProtocol is the listeners' protocol: TCP (pass-through)
	// or HTTP.
	//
	// Providers: oci (lb)
	OCILBBackendProtocol = Enum{Name: OCILBPrefix + "backend-protocol", Values: []string{"TCP", "HTTP"}, Default: "TCP"}

	// OCILBSecurityListManagementMode overrides the cloud config's
	// loadBalancer.securityListManagementMode for this Service.
	//
	// Providers: oci (lb)
	OCILBSecurityListManagementMode = Enum{Name: OCILBPrefix + "security-list-management-mode", Values: securityListModes, DefaultDoc: "loadBalancer.securityListManagementMode (None)"}

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
	// Providers: oci (nlb)
	OCINLBInternal = Bool{Name: OCINLBPrefix + "internal"}

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
	// Providers: oci (nlb)
	OCINLBHealthCheckRetries = Int{Name: OCINLBPrefix + "health-check-retries", Min: 1, Max: 10, Default: 3}

	// OCINLBHealthCheckInterval is the time between two probes, in
	// milliseconds (or a duration).
	//
	// Providers: oci (nlb)
	OCINLBHealthCheckInterval = Duration{Name: OCINLBPrefix + "health-check-interval", Unit: time.Millisecond, Min: time.Second, Max: 30 * time.Minute, Default: 5 * time.Second}

	// OCINLBHealthCheckTimeout is how long a probe may take, in
	// milliseconds (or a duration).
	//
	// Providers: oci (nlb)
	OCINLBHealthCheckTimeout = Duration{Name: OCINLBPrefix + "health-check-timeout", Unit: time.Millisecond, Min: time.Millisecond, Max: 10 * time.Minute, Default: 2 * time.Second}

	// OCINLBBackendPolicy is how the network load balancer picks a
	// backend: FIVE_TUPLE, THREE_TUPLE or TWO_TUPLE.
	//
	// Providers: oci (nlb)
	OCINLBBackendPolicy = Enum{Name: OCINLBPrefix + "backend-policy", Values: []string{"FIVE_TUPLE", "THREE_TUPLE", "TWO_TUPLE"}, Default: "FIVE_TUPLE",
		DefaultDoc: "FIVE_TUPLE; TWO_TUPLE with sessionAffinity ClientIP"}

	// OCINLBIsPreserveSource keeps the client's source address on packets
	// to the backends.
	//
	// Providers: oci (nlb)
	OCINLBIsPreserveSource = Bool{Name: OCINLBPrefix + "is-preserve-source"}

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
	// Providers: oci (nlb)
	OCINLBExternalIPOnly = Bool{Name: OCINLBPrefix + "external-ip-only", Default: true}

	// OCINLBSecurityListManagementMode overrides the cloud config's
	// loadBalancer.securityListManagementMode for this Service.
	//
	// Providers: oci (nlb)
	OCINLBSecurityListManagementMode = Enum{Name: OCINLBPrefix + "security-list-management-mode", Values: securityListModes, DefaultDoc: "loadBalancer.securityListManagementMode (None)"}

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
var (
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
	// Providers: oci
	OCISecurityRuleManagementMode = Enum{Name: "oci.oraclecloud.com/security-rule-management-mode", Values: []string{"NSG", "SL-All", "SL-Frontend", "None"},
		DefaultDoc: "the security-list-management-mode annotation, else the cloud config's"}

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
