package config

import "github.com/ccmkit/ccm/internal/cloudconfig"

// Keys documents every key of Config: the key table of
// docs/configuration.md is generated from it (go run ./hack/configdoc), and
// TestConfigKeysDocumented checks that it names every key and no other. The
// OCI provider reads no environment variables.
var Keys = []cloudconfig.KeyDoc{
	{
		Keys:     []string{"auth.region"},
		Required: "yes",
		Doc:      "region name, e.g. `us-ashburn-1`",
	},
	{
		Keys:     []string{"auth.tenancy", "auth.user"},
		Required: "yes",
		Doc:      "tenancy and user OCIDs (the resource type is checked)",
	},
	{
		Keys:     []string{"auth.key", "auth.key_file"},
		Required: "one of",
		Doc:      "the API key's PEM RSA private key, inline or from a file (`key_file` is a ccmkit extension); never printed",
	},
	{
		Keys:     []string{"auth.fingerprint"},
		Required: "yes",
		Doc:      "must be the key's own fingerprint",
	},
	{
		Keys:     []string{"auth.passphrase", "auth.key_passphrase"},
		Required: "no",
		Doc:      "for an encrypted key (`key_passphrase` is the older name); never printed",
	},
	{
		Keys:     []string{"useInstancePrincipals", "auth.useInstancePrincipals"},
		Required: "no",
		Doc:      "`true` is refused: instance principals are out of scope (`auth.` is the older place)",
	},
	{
		Keys:     []string{"compartment", "vcn"},
		Required: "yes",
		Doc:      "the cluster's compartment (or tenancy) OCID and VCN OCID; only their instances are nodes",
	},
	{
		Keys:     []string{"auth.compartment"},
		Required: "no",
		Doc:      "the older place for `compartment`, used when that is not set",
	},
	{
		Keys:     []string{"loadBalancer.disabled"},
		Required: "no",
		Doc:      "`true`: no load balancer support",
	},
	{
		Keys:     []string{"loadBalancer.subnet1", "loadBalancer.subnet2"},
		Required: "no",
		Doc:      "subnets for load balancers (annotations override per Service)",
	},
	{
		Keys:     []string{"loadBalancer.securityListManagementMode"},
		Required: "no",
		Doc:      "`None` (default), `Frontend`, `All`; see [oci.md](oci.md)",
	},
	{
		Keys:     []string{"loadBalancer.disableSecurityListManagement"},
		Required: "no",
		Doc:      "the older switch: `true` means mode `None`",
	},
	{
		Keys:     []string{"loadBalancer.securityLists"},
		Required: "no",
		Doc:      "subnet OCID → security list OCID to manage (default: the subnet's first security list)",
	},
	{
		Keys:     []string{"loadBalancer.namePrefix"},
		Required: "no",
		Doc:      "string, default none: the public OCI CCM's `LOAD_BALANCER_PREFIX`; Load Balancers are named `<prefix>-<Service UID>` (found under either name, created with the prefix); a ccmkit extension. See [migration.md](migration.md)",
	},
	{
		Keys: []string{"rateLimiter.rateLimitQPSRead", "rateLimiter.rateLimitBucketRead",
			"rateLimiter.rateLimitQPSWrite", "rateLimiter.rateLimitBucketWrite", "rateLimiter.disableRateLimiter"},
		Required: "no",
		Doc:      "the read (GET) and write token buckets; default 20/s, burst 5",
	},
	{
		Keys:     []string{"rateLimiter.rateLimitReadScope"},
		Required: "no",
		Doc:      "`operation` (default): each read operation has its own read bucket; `process`: one read bucket for all, as the public OCI CCM; a ccmkit extension",
	},
	{
		Keys:     []string{"defaults"},
		Required: "no",
		Doc:      "`ccmkit` (default) or `upstream`: what a Service leaves unset defaults to the public OCI CCM's settings (health checks 10 s/3 s, security lists `All` for an LB, an NLB's private address published, `is-preserve-source` with `externalTrafficPolicy: Local`, its display names), so that taking its load balancers over writes nothing; a ccmkit extension. See [migration.md](migration.md)",
	},
	{
		Keys:     []string{"endpoint"},
		Required: "no",
		Doc:      "`http[s]://host[:port]`, no path: the host of every OCI client (cloudsim, private endpoints); a ccmkit extension",
	},
	{
		Keys:     []string{"instanceCacheTTL"},
		Required: "no",
		Doc:      "Go duration, default `60s`: how long an instance read serves initialization and status sync; lifecycle checks use reads at most 10 s old; `0s` reads every time; a ccmkit extension",
	},
	{
		Keys:     []string{"lbDriftCheckPeriod"},
		Required: "no",
		Doc:      "Go duration, default `5m`: how often every load balancer is compared with its Service (reads only) and a drifted one re-ensured; `0s` turns the check off; a ccmkit extension. See [loadbalancers.md](loadbalancers.md#drift-periodic-re-ensure)",
	},
	{
		Keys:     []string{"lbDrainPeriod"},
		Required: "no",
		Doc:      "Go duration, default `30s`, at most `1h`: how long a backend leaving a load balancer stays marked drain (no new connections, open ones kept) before it is removed; `0s` removes at once; a Service's `lb.ccmkit.io/drain-period` overrides it; a ccmkit extension. See [reliability.md](reliability.md#draining)",
	},
}
