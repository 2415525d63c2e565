package annotations

// The reasons shared by several entries of the TKE catalog. "planned" names
// the item of issue 13 that will add the feature.
const (
	notDirectPods  = "not supported: CLB-to-pod binding needs VPC-CNI (pods with VPC addresses the CLB can reach); this CCM binds nodes on the Service's NodePort"
	notTKEConfigCR = "not supported: it names a TkeServiceConfig, a custom resource of managed TKE's own controller that this CCM does not install; the CLB settings it carries are this CCM's `lb.ccmkit.io/` annotations (health checks, scheduler, session affinity)"
)

// TKEPeerCatalog is managed TKE's service controller's Service annotations,
// as its documentation lists them ("Service Annotation", Tencent Cloud
// document 457/39142 in English, 457/51258 in Chinese, which adds the two
// kubernetes.io/service.* names), in that order.
func TKEPeerCatalog() PeerCatalog {
	return PeerCatalog{
		Title:    "Managed TKE's annotations",
		Source:   "Tencent Cloud documents 457/39142 and 457/51258 (\"Service Annotation\")",
		Prefixes: []string{"service.kubernetes.io/", "service.cloud.tencent.com/", "kubernetes.io/service."},
		Entries: []PeerAnnotation{
			{Name: TKELoadBalanceID, Supported: true, Note: "written by the CCM, as on TKE"},
			{Name: TKEInternalSubnetID, Supported: true},
			{Name: TKEExistedLBID, Supported: true, Note: "the CCM touches only the listeners it created on the CLB and never deletes the CLB; several Services may share one CLB, a port another Service holds is a Warning Event on the later one"},
			{Name: TKELocalOnlyBindNodeWithPod.Name, Supported: true},
			{Name: TKELocalWeightedBalance.Name, Supported: true, Note: "weight = ready endpoints on the node, at most 100"},
			{Name: TKEBackendsLabel, Supported: true, Note: "our `lb.ccmkit.io/node-selector` under TKE's name; both set must agree"},
			{Name: "service.cloud.tencent.com/direct-access", Note: notDirectPods},
			{Name: "service.cloud.tencent.com/tke-service-config", Note: notTKEConfigCR},
			{Name: "service.cloud.tencent.com/tke-service-config-auto", Note: notTKEConfigCR},
			{Name: "service.kubernetes.io/loadbalance-nat-ipv6", Note: "not supported: it reports the address of a NAT64 IPv6 CLB, which this CCM does not create (IPv4 CLBs only)"},
			{Name: "service.kubernetes.io/loadbalance-type", Note: "not supported: deprecated by TKE with the classic CLB it selects; the CCM always creates what its default `yunapiv3_forward_clb` names, an application CLB"},
			{Name: TKESpecifyProtocol, Supported: true, Note: "TCP_SSL (TLS ended at the CLB, certificate from TKE's Secret with `qcloud_cert_id`), HTTP and HTTPS (one default rule: the CLB's VIP as domain, `/`, as TKE does without `hosts`), TCP and UDP; `hosts` (rules per domain), QUIC and several protocols on one port are refused naming the port (routing by domain or path is an Ingress controller's job)"},
			{Name: TKEExtensiveParameters, Supported: true, Note: "only the documented fields that choose what CLB is created (unknown fields and those the CCM sets are refused, naming the field); applied at creation only, a later change is a Warning Event"},
			{Name: "service.cloud.tencent.com/enable-grace-shutdown", Note: "not supported: it applies to direct access only (" + notDirectPods + "); for nodes, `lb.ccmkit.io/drain-period` drains a leaving node's target at weight 0"},
			{Name: "service.cloud.tencent.com/enable-grace-shutdown-tkex", Note: "not supported: it applies to direct access only; for nodes, `lb.ccmkit.io/drain-period` drains a leaving node's target at weight 0"},
			{Name: TKEInternetChargeType.Name, Supported: true, Note: "applied at creation only, as on TKE; a later change is a Warning Event"},
			{Name: TKEInternetMaxBandwidthOut.Name, Supported: true, Note: "applied at creation only, as on TKE; a later change is a Warning Event"},
			{Name: TKESecurityGroups, Supported: true, Note: "bound after the CCM's own group for `loadBalancerSourceRanges`; absent keeps groups bound by hand, `\"\"` unbinds them; refused on an adopted CLB"},
			{Name: TKEPassToTarget.Name, Supported: true, Note: "default `true`, as on TKE"},
			{Name: TKELegacyInternetChargeType.Name, Supported: true, Note: "the older name; both set must agree"},
			{Name: TKELegacyInternetMaxBandwidthOut.Name, Supported: true, Note: "the older name; both set must agree"},
		},
	}
}
