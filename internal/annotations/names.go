package annotations

import "time"

// Prefix is the prefix of the CCM's own annotations. Names users already
// have (the seed project's service.beta.kubernetes.io/tencentcloud-*,
// managed TKE's service.kubernetes.io/*) are kept as they are; everything
// new lives under this one prefix.
const Prefix = "lb.ccmkit.io/"

// Tencent Cloud: the seed project's annotations
//
// The names of the seed project, so that existing manifests keep working.
var (
	// TencentLBType chooses an Internet-facing CLB (public, LoadBalancerType
	// OPEN) or one reachable only from the VPC (private, INTERNAL). A private
	// CLB needs a subnet: see TencentLBInternalSubnetID. Read when the CLB is
	// created; a CLB cannot change type, so changing it later is reported as
	// an error and the CLB is left as it is.
	//
	// Providers: tencentcloud
	TencentLBType = Enum{Name: "service.beta.kubernetes.io/tencentcloud-loadbalancer-type", Values: []string{"public", "private"}, Default: "public", DefaultDoc: "public, or private when TKEInternalSubnetID is set"}

	// TencentLBInternalSubnetID is the subnet a private CLB gets its VIP
	// from. A private CLB without a subnet is not created; the Service gets
	// a Warning Event instead.
	//
	// Type: string (subnet-xxxxxxxx)
	// Default: none
	// Providers: tencentcloud
	TencentLBInternalSubnetID Name = "service.beta.kubernetes.io/tencentcloud-loadbalancer-type-internal-subnet-id"

	// TencentLBName is the name given to the CLB when it is created (1-80
	// letters, digits, "-" or "_"). Names are for humans only: the CLB
	// is found again by its service-uid tag, and Tencent Cloud silently
	// renames a duplicate.
	//
	// Type: string
	// Default: <cluster name>-<namespace>-<service name>, cut to 80 characters
	// Providers: tencentcloud
	TencentLBName Name = "service.beta.kubernetes.io/tencentcloud-loadbalancer-name"

	// TencentLBKind is the seed project's choice between an application
	// (Forward=1) and a classic CLB. Only application CLBs are supported;
	// Tencent Cloud no longer sells classic ones.
	//
	// Providers: tencentcloud
	TencentLBKind = Enum{Name: "service.beta.kubernetes.io/tencentcloud-loadbalancer-kind", Values: []string{"application", "classic"}, Default: "application"}
)

// Tencent Cloud: managed TKE's annotations
//
// Managed TKE's names, where users already use them.
var (
	// TKEExistedLBID attaches the Service to an existing CLB instead of
	// creating one. The CCM then creates, updates and deletes only its own
	// listeners on it (named <PROTO>-<port>-<service UID>), never touches
	// the others, and never deletes the CLB itself. The CLB must be in the
	// cluster's VPC and must not be one the CCM created for another Service.
	//
	// Type: string (lb-xxxxxxxx)
	// Default: none (the CCM creates a CLB for the Service)
	// Providers: tencentcloud
	TKEExistedLBID Name = "service.kubernetes.io/tke-existed-lbid"

	// TKEInternalSubnetID is managed TKE's way to ask for a private CLB in a
	// subnet; it implies tencentcloud-loadbalancer-type: private.
	//
	// Type: string (subnet-xxxxxxxx)
	// Default: none
	// Providers: tencentcloud
	TKEInternalSubnetID Name = "service.kubernetes.io/qcloud-loadbalancer-internal-subnetid"

	// TKEPassToTarget sets the CLB's LoadBalancerPassToTarget. When true,
	// only the CLB's security groups filter its traffic: the nodes accept
	// whatever the CLB forwards, health checks included. When false, the
	// nodes' security groups must also admit every client on the NodePorts
	// and the CLB's VIP on the health check ports. Applied when the CCM
	// creates the CLB and corrected on every sync of a CLB it created; an
	// adopted CLB (TKEExistedLBID) keeps its own setting.
	//
	// Providers: tencentcloud
	TKEPassToTarget = Bool{Name: "service.cloud.tencent.com/pass-to-target", Default: true}
)

// The CCM's own annotations
//
// Everything without an established name lives under the lb.ccmkit.io/
// prefix. "Providers: all" means every provider of this CCM reads it the
// same way (through the provider-neutral load balancer spec).
var (
	// HealthCheckEnabled turns the load balancer's health checks on or off.
	//
	// Providers: all
	HealthCheckEnabled = Bool{Name: Prefix + "health-check-enabled", Default: true}

	// HealthCheckProtocol is how targets are probed: http sends GET <path>
	// and expects a 2xx answer, tcp opens a connection. The default probes
	// kube-proxy's /healthz, which fails once a node is tainted
	// ToBeDeletedByClusterAutoscaler or is being deleted (Kubernetes 1.30+),
	// so the load balancer drains a node before it goes. tcp without
	// health-check-port probes each listener's NodePort instead, which
	// never drains. UDP listeners on Tencent CLB can only be probed with
	// PING, whatever this says.
	//
	// Providers: all
	HealthCheckProtocol = Enum{Name: Prefix + "health-check-protocol", Values: []string{"tcp", "http"}, Default: "http",
		DefaultDoc: "http (kube-proxy's /healthz on 10256; with externalTrafficPolicy Local, the healthCheckNodePort)"}

	// HealthCheckPort is the node port probed.
	//
	// Providers: all
	HealthCheckPort = Int{Name: Prefix + "health-check-port", Min: 1, Max: 65535, Default: 10256,
		DefaultDoc: "10256 (kube-proxy); the Service's healthCheckNodePort when externalTrafficPolicy is Local; each listener's NodePort with health-check-protocol tcp"}

	// HealthCheckPath is the HTTP path probed when the protocol is http.
	//
	// Type: string (starting with /)
	// Default: /healthz
	// Providers: all
	HealthCheckPath Name = Prefix + "health-check-path"

	// HealthCheckInterval is the time between two probes of a target
	// (Tencent CLB: 2s-300s).
	//
	// Providers: all
	HealthCheckInterval = Duration{Name: Prefix + "health-check-interval", Default: 5 * time.Second}

	// HealthCheckTimeout is how long a probe may take (Tencent CLB: 2s-60s,
	// and less than the interval).
	//
	// Providers: all
	HealthCheckTimeout = Duration{Name: Prefix + "health-check-timeout", Default: 2 * time.Second}

	// HealthCheckHealthyThreshold is the number of consecutive successful
	// probes after which a target receives traffic (Tencent CLB: 2-10).
	//
	// Providers: all
	HealthCheckHealthyThreshold = Int{Name: Prefix + "health-check-healthy-threshold", Default: 3}

	// HealthCheckUnhealthyThreshold is the number of consecutive failed
	// probes after which a target stops receiving traffic (Tencent CLB: 2-10).
	//
	// Providers: all
	HealthCheckUnhealthyThreshold = Int{Name: Prefix + "health-check-unhealthy-threshold", Default: 3}

	// NodeSelector restricts the load balancer's targets to the nodes
	// matching this label selector, on top of the standard exclusion label
	// node.kubernetes.io/exclude-from-external-load-balancers.
	//
	// Type: label selector (pool=edge,!spot)
	// Default: every node
	// Providers: all
	NodeSelector Name = Prefix + "node-selector"

	// DrainPeriod is how long a target that leaves the load balancer (its
	// node deleted, excluded, or outside the subset) takes no new
	// connections but keeps its open ones before it is removed, which
	// closes them: Tencent CLB sets its weight to 0, OCI marks the backend
	// drain: true. 0 removes targets at once.
	//
	// Providers: all
	//
	// The default (our choice): long enough for short requests under way to
	// finish, short enough that a node's replacement is not held up;
	// Services with long-lived connections raise it. The maximum (our
	// choice) bounds the cloud config's as well: a node being removed is
	// rarely kept longer, and a target drained this long carries nothing.
	DrainPeriod = Duration{Name: Prefix + "drain-period", Max: time.Hour, Default: 30 * time.Second,
		DefaultDoc: "30s, or the cloud config's lb_drain_period (Tencent) or lbDrainPeriod (OCI)"}

	// SessionAffinityTimeout is how long a client keeps going to the same
	// target with sessionAffinity: ClientIP. Without it the Service's
	// sessionAffinityConfig.clientIP.timeoutSeconds is used, brought into the
	// provider's range (Tencent CLB: 30s-3600s); a value set here must be in
	// that range.
	//
	// Providers: all
	SessionAffinityTimeout = Duration{Name: Prefix + "session-affinity-timeout",
		DefaultDoc: "the Service's timeoutSeconds (10800 by default), limited to 3600s on Tencent CLB"}

	// DriftDetected is written by the CCM's periodic drift check when the
	// load balancer no longer matches the Service (a listener or target was
	// changed behind the CCM's back). Changing it makes the service
	// controller re-ensure the load balancer; its value says when and what
	// was found.
	//
	// Type: string (RFC 3339 time: findings)
	// Default: none
	// Read-only: written by the CCM
	// Providers: all
	DriftDetected Name = Prefix + "drift-detected"

	// EndpointsChanged is written by the CCM when the nodes running a ready
	// endpoint of an externalTrafficPolicy: Local Service change while the
	// Service's load balancer holds only a subset of the nodes (the cloud's
	// backend limit is below the number of eligible nodes; see
	// docs/loadbalancers.md), or binds only those nodes on request
	// (TKELocalOnlyBindNodeWithPod). Changing it makes the service controller
	// re-ensure the load balancer, which the controller does not do for
	// endpoint changes on its own; its value says when and how many nodes
	// have a ready endpoint now.
	//
	// Type: string (RFC 3339 time: finding)
	// Default: none
	// Read-only: written by the CCM
	// Providers: all
	EndpointsChanged Name = Prefix + "endpoints-changed"
)
