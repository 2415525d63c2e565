package config

import "github.com/ccmkit/ccm/internal/cloudconfig"

// Keys documents every key of Config: the key table of
// docs/configuration.md is generated from it (go run ./hack/configdoc), and
// TestConfigKeysDocumented checks that it names every key and no other. The
// OCI provider reads no environment variables (not even the SDK's
// OCI_METADATA_BASE_URL and OCI_SDK_AUTH_CLIENT_REGION_URL: the
// auth.metadataEndpoint and auth.federationEndpoint keys replace them).
var Keys = []cloudconfig.KeyDoc{
	{
		Keys:     []string{"useInstancePrincipals", "auth.useInstancePrincipals"},
		Required: "no",
		Doc:      "bool, default `false`: sign as the instance the CCM runs on, with no API key (security tokens from the instance's identity, renewed ahead of expiry); no `auth.user` or key may be set with it (`auth.` is the older place). See [credentials.md](credentials.md#oci)",
	},
	{
		Keys:     []string{"auth.region"},
		Required: "yes (instance principals: no)",
		Doc:      "region name, e.g. `us-ashburn-1`; with instance principals, default: the instance's region, from the metadata service",
	},
	{
		Keys:     []string{"auth.tenancy"},
		Required: "yes (instance principals: no)",
		Doc:      "tenancy OCID (the resource type is checked); with instance principals, default: from the instance certificate, and checked against it when set",
	},
	{
		Keys:     []string{"auth.user"},
		Required: "yes (instance principals: must not be set)",
		Doc:      "the OCID of the user owning the API key",
	},
	{
		Keys:     []string{"auth.key", "auth.key_file"},
		Required: "one of (instance principals: neither)",
		Doc:      "the API key's PEM RSA private key, inline or from a file (`key_file` is a ccmkit extension, re-read without a restart when its directory changes, e.g. a mounted Secret); never printed",
	},
	{
		Keys:     []string{"auth.fingerprint", "auth.fingerprint_file"},
		Required: "one of (instance principals: neither)",
		Doc:      "must be the key's own fingerprint; `fingerprint_file` (a ccmkit extension, with `key_file`) is re-read with the key, so that a rotated key can bring its fingerprint",
	},
	{
		Keys:     []string{"auth.passphrase", "auth.key_passphrase", "auth.passphrase_file"},
		Required: "no",
		Doc:      "for an encrypted key (`key_passphrase` is the older name; `passphrase_file`, a ccmkit extension with `key_file`, is re-read with the key); never printed",
	},
	{
		Keys:     []string{"auth.metadataEndpoint"},
		Required: "no",
		Doc:      "URL, default `http://169.254.169.254/opc/v2`: the instance metadata service instance principals read; for tests and demos against cloudsim only; a ccmkit extension",
	},
	{
		Keys:     []string{"auth.federationEndpoint"},
		Required: "no",
		Doc:      "`http[s]://host[:port]`, default `https://auth.<region>.oraclecloud.com` (the realm's domain): the auth service instance principals get tokens from; for tests and demos against cloudsim only; a ccmkit extension",
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
		Keys:     []string{"readLagWindow"},
		Required: "no",
		Doc:      "Go duration, default `1m`, at most `10m`: how long the instance and load balancer reads may not yet show what was just created (eventual consistency): an instance not found by id is gone only if its Node is older than this, and a load balancer a create made is taken as deleted only once absent this long; `0s` trusts every answer at once; a ccmkit extension. See [reliability.md](reliability.md#lagging-reads)",
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
