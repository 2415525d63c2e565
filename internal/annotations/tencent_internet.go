package annotations

// chargeTypes are the network billing modes TKE's annotations document;
// the API also takes BANDWIDTH_PACKAGE and BANDWIDTH_PREPAID, which only
// extensiveParameters may ask for.
var chargeTypes = []string{"BANDWIDTH_POSTPAID_BY_HOUR", "TRAFFIC_POSTPAID_BY_HOUR"}

// Tencent Cloud: managed TKE's creation-time CLB options
//
// What CLB takes only when it creates a load balancer, under the names of
// managed TKE's service controller ("Service Annotation", Tencent Cloud
// documents 457/39142 and 457/51258). The CCM sends them with
// CreateLoadBalancer and never changes them afterwards: a Service whose
// annotation later asks for something else than its CLB has gets a Warning
// Event (CreationOnlySettingChanged) naming the difference, and its CLB is
// left as it is; delete and re-create the Service to apply it. On a CLB
// adopted with tke-existed-lbid they are ignored, with a Warning Event.
var (
	// TKEInternetChargeType is the public CLB's network billing mode
	// (CreateLoadBalancer InternetAccessible.InternetChargeType). Use it
	// with TKEInternetMaxBandwidthOut. Ignored, with a Warning Event, on a
	// private CLB, where the API does not apply it.
	//
	// Providers: tencentcloud
	TKEInternetChargeType = Enum{Name: "service.kubernetes.io/qcloud-loadbalancer-internet-charge-type", Values: chargeTypes, DefaultDoc: "the account's (the API's default)"}

	// TKEInternetMaxBandwidthOut is the public CLB's maximum outbound
	// bandwidth in Mbps (InternetAccessible.InternetMaxBandwidthOut; TKE
	// and the SDK both document 1-2048 for a public shared CLB). Ignored,
	// with a Warning Event, on a private CLB.
	//
	// Providers: tencentcloud
	TKEInternetMaxBandwidthOut = Int{Name: "service.kubernetes.io/qcloud-loadbalancer-internet-max-bandwidth-out", Unit: "Mbps", Min: 1, Max: 2048, DefaultDoc: "10 (the API's default)"}

	// TKELegacyInternetChargeType is TKE's older name for
	// TKEInternetChargeType; when both are set they must agree.
	//
	// Providers: tencentcloud
	TKELegacyInternetChargeType = Enum{Name: "kubernetes.io/service.internetChargeType", Values: chargeTypes, DefaultDoc: "the account's (the API's default)"}

	// TKELegacyInternetMaxBandwidthOut is TKE's older name for
	// TKEInternetMaxBandwidthOut; when both are set they must agree.
	//
	// Providers: tencentcloud
	TKELegacyInternetMaxBandwidthOut = Int{Name: "kubernetes.io/service.internetMaxBandwidthOut", Unit: "Mbps", Min: 1, Max: 2048, DefaultDoc: "10 (the API's default)"}

	// TKEExtensiveParameters is TKE's JSON passthrough to
	// CreateLoadBalancer. The CCM accepts only these documented fields, each
	// with the API's meaning: AddressIPVersion, InternetAccessible
	// ({InternetChargeType, InternetMaxBandwidthOut, BandwidthpkgSubType}),
	// BandwidthPackageId, VipIsp, ZoneId, MasterZoneId, SlaveZoneId,
	// LoadBalancerName and Tags ([{"TagKey": …, "TagValue": …}], added to
	// the CCM's own, whose ccmkit.io/ keys cannot be set). Any other field
	// is refused with an error naming it, before any cloud call: fields the
	// CCM sets itself (VpcId, SubnetId, LoadBalancerType, Forward,
	// ClientToken, Number, ...) and unknown ones are never passed on. A
	// field that repeats a dedicated annotation (the charge type, the
	// bandwidth, the name) must agree with it.
	//
	// Type: JSON object ({"VipIsp":"CTCC"})
	// Default: none
	// Providers: tencentcloud
	TKEExtensiveParameters Name = "service.kubernetes.io/service.extensiveParameters"
)
