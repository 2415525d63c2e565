package annotations

// OCI: load balancer options under the public OCI CCM's names
//
// Backend set policy, tags at creation, the status' ipMode and the network
// load balancer's private address, read as the public OCI
// cloud-controller-manager reads them. spec.loadBalancerIP, which names a
// reserved public IP, is described in docs/oci.md (Load balancers).
var (
	// OCILBPolicy is the Load Balancer's backend set policy. Changing it
	// updates the backend sets in place. A network load balancer reads
	// OCINLBBackendPolicy instead and ignores this one, as upstream.
	//
	// Providers: oci (lb)
	OCILBPolicy = Enum{Name: "oci.oraclecloud.com/loadbalancer-policy", Values: []string{"ROUND_ROBIN", "LEAST_CONNECTIONS", "IP_HASH"}, Default: "ROUND_ROBIN",
		DefaultDoc: "ROUND_ROBIN; IP_HASH with sessionAffinity ClientIP"}

	// OCIInitialFreeformTags puts freeform tags on the Load Balancer when
	// it is created, given as a JSON object ({"team": "web"}); later changes
	// are not applied, as the name says. The CCM's own tags
	// (ccmkit-service-uid, ccmkit-service) are added and win.
	//
	// Type: JSON object of strings
	// Default: none
	// Providers: oci (lb)
	OCIInitialFreeformTags Name = "oci.oraclecloud.com/initial-freeform-tags-override"

	// OCIInitialDefinedTags puts defined tags on the Load Balancer when it
	// is created, given as JSON ({"Operations": {"CostCenter": "42"}}); the
	// tag namespaces must exist. Later changes are not applied.
	//
	// Type: JSON object of objects
	// Default: none
	// Providers: oci (lb)
	OCIInitialDefinedTags Name = "oci.oraclecloud.com/initial-defined-tags-override"

	// OCINLBInitialFreeformTags is OCIInitialFreeformTags for a network
	// load balancer.
	//
	// Type: JSON object of strings
	// Default: OCINLBFreeformTags
	// Providers: oci (nlb)
	OCINLBInitialFreeformTags Name = OCINLBPrefix + "initial-freeform-tags-override"

	// OCINLBInitialDefinedTags is OCIInitialDefinedTags for a network load
	// balancer.
	//
	// Type: JSON object of objects
	// Default: OCINLBDefinedTags
	// Providers: oci (nlb)
	OCINLBInitialDefinedTags Name = OCINLBPrefix + "initial-defined-tags-override"

	// OCINLBFreeformTags is the deprecated name of
	// OCINLBInitialFreeformTags, read when that is not set, as upstream.
	//
	// Type: JSON object of strings
	// Default: none
	// Providers: oci (nlb)
	OCINLBFreeformTags Name = OCINLBPrefix + "freeform-tags"

	// OCINLBDefinedTags is the deprecated name of OCINLBInitialDefinedTags,
	// read when that is not set, as upstream.
	//
	// Type: JSON object of objects
	// Default: none
	// Providers: oci (nlb)
	OCINLBDefinedTags Name = OCINLBPrefix + "defined-tags"

	// OCIIngressIPMode sets .status.loadBalancer.ingress[].ipMode: VIP
	// (kube-proxy short-cuts traffic to the address inside the cluster) or
	// Proxy (traffic goes through the load balancer). Both kinds; upstream
	// accepts any case.
	//
	// Providers: oci
	OCIIngressIPMode = Enum{Name: "oci.oraclecloud.com/ingress-ip-mode", Values: []string{"VIP", "Proxy"}, DefaultDoc: "none (Kubernetes reads it as VIP)"}

	// OCINLBAssignedPrivateIPv4 is the network load balancer's private
	// address, in its subnet's CIDR, chosen at creation (later changes are
	// not applied). On a Load Balancer (lb) it is an error, as upstream.
	//
	// Type: IPv4 address
	// Default: OCI chooses
	// Providers: oci (nlb)
	OCINLBAssignedPrivateIPv4 Name = OCINLBPrefix + "assigned-private-ipv4"
)
