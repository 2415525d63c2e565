package annotations

// PeerAnnotation is one Service annotation of another cloud-controller-
// manager that users bring along in their manifests, and what this CCM
// does with it.
type PeerAnnotation struct {
	// Name is the peer's annotation key. For a supported one it is our
	// constant of that key, so that the compiler checks it exists.
	Name Name
	// Supported means we read Name with the same meaning. The generator
	// (./gen) fails when a supported Name is not one of our declared
	// annotations.
	Supported bool
	// Note is, for an unsupported annotation, why not and what to do
	// instead; for a supported one, how our reading differs, if it does.
	Note string
}

// PeerCatalog lists every Service annotation another CCM reads, for the
// section of docs/annotations.md that tells a user moving from it which of
// their annotations keep working.
type PeerCatalog struct {
	Title  string // the section's title
	Source string // where the names were taken from
	// Prefixes are the peer's name prefixes: each of our annotations under
	// one of them must be in Entries (the generator checks), so that no
	// annotation we declare in the peer's namespace goes undocumented here.
	Prefixes []string
	Entries  []PeerAnnotation
}

// The reasons shared by several entries of the OCI catalog. "planned"
// names the item of issue 14 that will add the feature.
const (
	tagsAtCreation    = "applied when the load balancer is created, as upstream; later changes are not applied. The CCM's own freeform tags are added and win"
	deprecatedNLBTags = "deprecated upstream for `initial-*-tags-override`; read when that is not set, as upstream: " + tagsAtCreation
)

// OCIPeerCatalog is the public OCI cloud-controller-manager's Service
// annotations (oracle/oci-cloud-controller-manager v1.35.0: the two
// annotation const blocks of pkg/cloudprovider/providers/oci/
// load_balancer_spec.go, every one of them read by its load balancer code;
// its docs/load-balancer-annotations.md lists 38 of them), in its order.
// The LB and NLB spellings of one setting are separate names, so separate
// entries.
func OCIPeerCatalog() PeerCatalog {
	return PeerCatalog{
		Title:    "The public OCI CCM's annotations",
		Source:   "oracle/oci-cloud-controller-manager v1.35.0, pkg/cloudprovider/providers/oci/load_balancer_spec.go",
		Prefixes: []string{OCILBPrefix, OCINLBPrefix, "oci.oraclecloud.com/"},
		Entries: []PeerAnnotation{
			// Load Balancer, and the names both kinds read.
			{Name: OCILBInternal.Name, Supported: true},
			{Name: OCILBShape, Supported: true, Note: "default `flexible` 10-100 Mbps here (upstream `100Mbps`); a fixed shape is created flexible with minimum = maximum, with a Warning Event"},
			{Name: OCILBShapeFlexMin.Name, Supported: true},
			{Name: OCILBShapeFlexMax.Name, Supported: true},
			{Name: OCILBSubnet1, Supported: true},
			{Name: OCILBSubnet2, Supported: true},
			{Name: OCILBSSLPorts, Supported: true, Note: "ports that are not the Service's, or ssl-ports without a TLS Secret, are an error here (upstream ignores them)"},
			{Name: OCILBTLSSecret, Supported: true, Note: "keys `tls.crt`, `tls.key`, optional `ca.crt`; the certificate is named by a hash of its content, so a changed Secret rotates it (new certificate, listener moved, old one deleted) at the next sync of the Service"},
			{Name: OCILBTLSBackendSetSecret, Supported: true, Note: "the backend sets of the ssl-ports verify the nodes against `ca.crt` when the Secret has one (verifyPeerCertificate)"},
			{Name: OCILBConnectionIdleTimeout.Name, Supported: true, Note: "a duration such as `5m` is accepted too"},
			{Name: OCILBConnectionProxyProtocolVersion.Name, Supported: true, Note: "1 or 2, refused otherwise before any change (upstream passes any number to OCI); with no idle timeout set, OCI's default for the protocol goes with it, as upstream"},
			{Name: OCILBSecurityListManagementMode.Name, Supported: true, Note: "without it the cloud config's mode applies (`None` unless set; upstream `All`); an invalid value is an error here, where upstream falls back to `All`"},
			{Name: OCILBHealthCheckRetries.Name, Supported: true},
			{Name: OCILBHealthCheckInterval.Name, Supported: true, Note: "default 5000 ms here (upstream 10000); a duration such as `10s` is accepted too"},
			{Name: OCILBHealthCheckTimeout.Name, Supported: true, Note: "default 2000 ms here (upstream 3000)"},
			{Name: OCILBBackendProtocol.Name, Supported: true, Note: "`TCP` and `HTTP`; `GRPC`, which needs TLS, is planned with issue 14 item 1"},
			{Name: OCINetworkSecurityGroups, Supported: true, Note: "the whole list, as upstream: an NSG taken off it is detached; an NSG OCID is checked for its form, and OCI says whether it exists in the load balancer's VCN"},
			{Name: OCILBPolicy.Name, Supported: true, Note: "a change updates the backend sets in place; without it `IP_HASH` with `sessionAffinity: ClientIP` (upstream `ROUND_ROBIN`)"},
			{Name: OCIInitialDefinedTags, Supported: true, Note: tagsAtCreation},
			{Name: OCIInitialFreeformTags, Supported: true, Note: tagsAtCreation},
			{Name: OCILoadBalancerType.Name, Supported: true},
			{Name: OCINodeLabelSelector, Supported: true, Note: "our `lb.ccmkit.io/node-selector` under upstream's name (Load Balancer only, as upstream)"},
			{Name: "oci.oraclecloud.com/workload-service-account", Note: "not applicable: workload identity exchanges a service account token through OKE; this CCM signs every call with the cloud config's API key, so grant that user the policies in docs/oci.md"},
			{Name: OCISecurityRuleManagementMode.Name, Supported: true, Note: "`SL-All`, `SL-Frontend` and `None` are the security list modes; `NSG` manages a frontend NSG per Service (display name `<namespace>/<name>/<uid>/nsg` as upstream; an NSG upstream created for the Service is taken over); an invalid value is an error here, where upstream falls back"},
			{Name: OCIBackendNetworkSecurityGroup, Supported: true, Note: "rules on the NodePorts and health check ports, by the listener's protocol (upstream: TCP only); an NSG taken off the list keeps our rules (their description names the Service UID) until you remove them"},
			{Name: OCILBListenerSSLConfig, Supported: true, Note: "an error without tls-secret here (upstream ignores it)"},
			{Name: OCILBBackendSetSSLConfig, Supported: true, Note: "an error without tls-backendset-secret here (upstream ignores it)"},
			{Name: OCIIngressIPMode.Name, Supported: true, Note: "Load Balancer and Network Load Balancer; without it the status has no `ipMode`, which Kubernetes reads as `VIP`"},
			{Name: OCILBRuleSets, Supported: true, Note: "applied to every listener, as upstream; only the rule sets the annotation names (or named before, on our listeners) are changed or deleted; bad JSON or an unknown action is refused before any change; on a Network Load Balancer a Warning Event says it does not apply"},

			// Network Load Balancer.
			{Name: OCINLBInternal.Name, Supported: true},
			{Name: OCINLBSubnet, Supported: true},
			{Name: OCINLBNetworkSecurityGroups, Supported: true, Note: "the whole list, as upstream: an NSG taken off it is detached"},
			{Name: OCINLBHealthCheckRetries.Name, Supported: true},
			{Name: OCINLBHealthCheckInterval.Name, Supported: true, Note: "default 5000 ms and minimum 1000 here (upstream 10000 and 10000); a duration such as `10s` is accepted too"},
			{Name: OCINLBHealthCheckTimeout.Name, Supported: true, Note: "default 2000 ms here (upstream 3000)"},
			{Name: OCINLBBackendPolicy.Name, Supported: true, Note: "`TWO_TUPLE` by default with `sessionAffinity: ClientIP`, which upstream refuses"},
			{Name: OCINLBSecurityListManagementMode.Name, Supported: true},
			{Name: OCINLBDefinedTags, Supported: true, Note: deprecatedNLBTags},
			{Name: OCINLBFreeformTags, Supported: true, Note: deprecatedNLBTags},
			{Name: OCINLBInitialDefinedTags, Supported: true, Note: tagsAtCreation},
			{Name: OCINLBInitialFreeformTags, Supported: true, Note: tagsAtCreation},
			{Name: OCINLBNodeLabelSelector, Supported: true, Note: "our `lb.ccmkit.io/node-selector` under upstream's name (Network Load Balancer only, as upstream)"},
			{Name: OCINLBIsPreserveSource.Name, Supported: true, Note: "default `false` here; upstream defaults to `true` with `externalTrafficPolicy: Local` and refuses the annotation with `Cluster`"},
			{Name: OCINLBIsPpv2Enabled.Name, Supported: true, Note: "on TCP listeners only (upstream sets it on UDP listeners too); any spelling of true/false is read, anything else is an error (upstream ignores it)"},
			{Name: OCINLBExternalIPOnly.Name, Supported: true, Note: "default `true` here (upstream `false`), so that the first address in the status is reachable"},
			{Name: OCINLBAssignedPrivateIPv4, Supported: true, Note: "at creation only, as upstream (a later change is not applied); an error on a Load Balancer, as upstream"},
			{Name: OCINLBAssignedIPv6, Supported: true, Note: "at creation only, as upstream; checked against the subnet's IPv6 prefixes before the creation; an error on a Load Balancer or an IPv4-only Service"},
		},
	}
}
