package annotations

// Managed TKE's node selection and status annotations, as TKE's own service
// controller documents them ("Service Annotation", Tencent Cloud document
// 457/51258; node selection: 457/36836). Listed in docs/annotations.md after
// names.go's sections (./gen reads names.go first, then the other files in
// name order).

// Tencent Cloud: managed TKE's node selection and status
//
// More of managed TKE's names, so that Services annotated for TKE's own
// service controller keep working here.
var (
	// TKEBackendsLabel is managed TKE's name for NodeSelector: only the
	// nodes matching this label selector (such as group=access-layer)
	// become the CLB's targets. Either name may be used; when both are set
	// they must say the same (compared as parsed selectors), or the Service
	// gets a Warning Event and its CLB is left as it is. As on TKE, a
	// selector that matches no node leaves the CLB without targets.
	//
	// Type: label selector (group=access-layer)
	// Default: every node
	// Providers: tencentcloud
	TKEBackendsLabel Name = "service.kubernetes.io/qcloud-loadbalancer-backends-label"

	// TKELocalOnlyBindNodeWithPod, with externalTrafficPolicy: Local, makes
	// the CLB's targets only the eligible nodes that run a ready endpoint
	// of the Service (read from its EndpointSlices); when the endpoints
	// move, the CCM asks for a re-ensure (EndpointsChanged), so the
	// targets follow. When no node runs a ready endpoint, every eligible
	// node stays bound and the health checks decide, so that the CLB is
	// never left without targets while pods start. Ignored without
	// externalTrafficPolicy: Local. Without it, as on managed TKE, every
	// eligible node is bound and kube-proxy's healthCheckNodePort answers
	// the health checks only on nodes with a local endpoint (above the
	// target quota the CCM narrows to those nodes anyway; see
	// docs/loadbalancers.md).
	//
	// Providers: tencentcloud
	TKELocalOnlyBindNodeWithPod = Bool{Name: "service.kubernetes.io/local-svc-only-bind-node-with-pod"}

	// TKELocalWeightedBalance, with TKELocalOnlyBindNodeWithPod and
	// externalTrafficPolicy: Local, gives each node's CLB targets a weight
	// equal to the number of the Service's ready endpoints on that node (at
	// most 100, CLB's largest weight), so that every pod gets about the same
	// share of connections however they are spread over the nodes. When the
	// counts change, the CCM asks for a re-ensure, as for the nodes. Without
	// TKELocalOnlyBindNodeWithPod it does nothing (a Warning Event says so),
	// as on managed TKE, where it is documented for use with it.
	//
	// Providers: tencentcloud
	TKELocalWeightedBalance = Bool{Name: "service.cloud.tencent.com/local-svc-weighted-balance", DefaultDoc: "false (every target at CLB's default weight, 10)"}

	// TKELoadBalanceID is written by the CCM, as TKE's service controller
	// does: the id of the Service's CLB (created or adopted), set once the
	// CLB exists and removed when the Service stops being a LoadBalancer.
	// It is read for one thing: a CLB it names that TKE's service
	// controller made (tagged tke-createdBy-flag=yes) is taken over as the
	// Service's when it is in the cluster's VPC and tagged with the
	// configured tke_cluster_id, and refused otherwise, with nothing
	// created in its place until the annotation is removed
	// (docs/migration.md). Any other value is overwritten on the next
	// sync. To use an existing CLB, set TKEExistedLBID instead.
	//
	// Type: string (lb-xxxxxxxx)
	// Default: none
	// Read-only: written by the CCM
	// Providers: tencentcloud
	TKELoadBalanceID Name = "service.kubernetes.io/loadbalance-id"

	// TKESecurityGroups binds security groups to the Service's CLB, as on
	// managed TKE ("Service Annotation", 457/39142: comma-separated ids, up
	// to five per CLB, normally used with pass-to-target). The CLB is bound
	// to exactly these groups, in this order, after the group the CCM
	// manages for loadBalancerSourceRanges; an id that does not exist is
	// reported by name and nothing is bound. Without the annotation the
	// groups bound to the CLB by hand are kept; set to "" it unbinds them.
	// Not applied to an adopted CLB (tke-existed-lbid): its groups are its
	// owner's, and the Service gets an error instead.
	//
	// Type: list of security group ids (sg-xxxxxxxx,sg-yyyyyyyy)
	// Default: none (groups bound by hand are kept)
	// Providers: tencentcloud
	TKESecurityGroups Name = "service.cloud.tencent.com/security-groups"
)

// Tencent Cloud: managed TKE's listener protocols
//
// TKE's extension of a Service's port protocols ("Service Extension
// Protocol", Tencent Cloud document 457/39141, 457/51259 in Chinese), with
// the certificate Secret of TKE's Ingress certificates (457/37016).
const (
	// TKESpecifyProtocol sets the CLB listener protocol of some of the
	// Service's ports, in TKE's JSON form: an object keyed by port, each
	// value {"protocol": [<one protocol>], "tls": "<Secret name>"}, e.g.
	// {"443":{"protocol":["TCP_SSL"],"tls":"my-cert"}}. TCP_SSL ends TLS
	// at the CLB with a certificate from Tencent Cloud's certificate store
	// and forwards plain TCP to the NodePort. As on TKE, "tls" names an
	// Opaque Secret in the Service's namespace whose key qcloud_cert_id is
	// the server certificate's id and, for mutual TLS, qcloud_ca_cert_id
	// the client CA certificate's id; the CCM reads it (RBAC: get
	// secrets) on each sync, so changing the id changes the listener's
	// certificate (ModifyListener). A TCP port may be TCP, TCP_SSL, HTTP or
	// HTTPS (with "tls" as for TCP_SSL) and a UDP port UDP. An HTTP or HTTPS
	// listener gets one default forwarding rule, the CLB's VIP as domain and
	// "/" as path, as TKE does for a port without "hosts"; "hosts" (rules
	// per domain, an Ingress controller's job), QUIC and several protocols
	// on one port (TKE needs direct access for that) are not supported. A bad value,
	// a protocol that is not supported, or a missing Secret or key is an
	// error Event on the Service naming the port, and the CLB is left as it
	// is. A port the Service does not have is ignored, as on TKE.
	//
	// Type: JSON object ({"<port>":{"protocol":["TCP_SSL"],"tls":"<Secret>"}})
	// Default: each port's own protocol (spec.ports[].protocol)
	// Providers: tencentcloud
	TKESpecifyProtocol Name = "service.cloud.tencent.com/specify-protocol"
)
