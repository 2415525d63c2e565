package config

import "github.com/ccmkit/ccm/internal/cloudconfig"

// Keys documents every key of Config: the key table of
// docs/configuration.md is generated from it (go run ./hack/configdoc), and
// TestConfigKeysDocumented checks that it names every key and no other.
var Keys = []cloudconfig.KeyDoc{
	{
		Keys:     []string{"region"},
		Env:      []string{EnvRegion},
		Required: "yes",
		Doc:      "region such as `ap-guangzhou`; must look like one",
	},
	{
		Keys:     []string{"vpc_id"},
		Env:      []string{EnvVpcID},
		Required: "yes",
		Doc:      "`vpc-` + 8 characters; only instances in this VPC are nodes of this cluster",
	},
	{
		Keys:     []string{"credential_source"},
		Env:      []string{EnvCredentialSource},
		Required: "no",
		Doc:      "`key`, `cvm-role` or `web-identity`; default: the one source whose keys are set (two at once is an error); needed only for `cvm-role` without `cvm_role_name`. See [credentials.md](credentials.md)",
	},
	{
		Keys:     []string{"secret_id"},
		Env:      []string{EnvSecretID, EnvSDKSecretID},
		Required: "with `key`",
		Doc:      `the API key's SecretId; never printed`,
	},
	{
		Keys:     []string{"secret_key"},
		Env:      []string{EnvSecretKey, EnvSDKSecretKey},
		Required: "with `key`",
		Doc:      `the API key's SecretKey; never printed`,
	},
	{
		Keys:     []string{"secret_id_file"},
		Env:      []string{EnvSecretIDFile, EnvSDKSecretIDFile},
		Required: "—",
		Doc:      `read the SecretId from a file (trimmed; a regular file of at most 4 KiB); a change (a mounted Secret updated) is applied without a restart`,
	},
	{
		Keys:     []string{"secret_key_file"},
		Env:      []string{EnvSecretKeyFile, EnvSDKSecretKeyFile},
		Required: "—",
		Doc:      `read the SecretKey from a file, re-read like secret_id_file`,
	},
	{
		Keys:     []string{"cvm_role_name"},
		Env:      []string{EnvCVMRoleName},
		Required: "no",
		Doc:      "the CAM role bound to the instance (`cvm-role`; setting it selects that source); default: the role the metadata service lists",
	},
	{
		Keys:     []string{"metadata_endpoint"},
		Env:      []string{EnvMetadataEndpoint},
		Required: "no",
		Doc:      "`http[s]://host[:port]`, default `" + DefaultMetadataEndpoint + "`: the instance metadata service (`cvm-role`); for tests and the demo (cloudsim) only",
	},
	{
		Keys:     []string{"web_identity_token_file"},
		Env:      []string{EnvWebIdentityTokenFile, EnvTKEWebIdentityTokenFile, EnvTKEIdentityTokenFile},
		Required: "with `web-identity`",
		Doc:      "the projected ServiceAccount token, re-read at every refresh",
	},
	{
		Keys:     []string{"web_identity_role_arn"},
		Env:      []string{EnvWebIdentityRoleArn, EnvTKERoleArn},
		Required: "with `web-identity`",
		Doc:      "the CAM role to assume, `qcs::cam::uin/<uin>:roleName/<name>`",
	},
	{
		Keys:     []string{"web_identity_provider_id"},
		Env:      []string{EnvWebIdentityProviderID, EnvTKEProviderID},
		Required: "with `web-identity`",
		Doc:      "the CAM OIDC identity provider's name (AssumeRoleWithWebIdentity's `ProviderId`)",
	},
	{
		Keys:     []string{"web_identity_session_name"},
		Env:      []string{EnvWebIdentitySessionName},
		Required: "no",
		Doc:      "default `" + DefaultWebIdentitySessionName + "`: the role session's name in CAM's audit logs, 2-128 of letters, digits and `+=,.@_-`",
	},
	{
		Keys:     []string{"web_identity_duration"},
		Env:      []string{EnvWebIdentityDuration},
		Required: "no",
		Doc:      "Go duration, default `2h`, at most `12h`: how long the temporary credentials asked of STS last (the role's session duration may cut it); they are refreshed at half their lifetime",
	},
	{
		Keys:     []string{"sts_endpoint"},
		Env:      []string{EnvSTSEndpoint},
		Required: "no",
		Doc:      "`http[s]://host[:port]`, default `" + DefaultSTSEndpoint + "` (`web-identity`); for tests and the demo (cloudsim) only",
	},
	{
		Keys:     []string{"cluster_route_table"},
		Env:      []string{EnvClusterRouteTable},
		Required: "no",
		Doc:      "TKE cluster route table for pod routes; setting it turns the route controller's Routes on (then `--cluster-cidr` is required). See [routes.md](routes.md)",
	},
	{
		Keys:     []string{"route_backend"},
		Env:      []string{EnvRouteBackend},
		Required: "no",
		Doc:      "`tke` (default: `cluster_route_table`) or `vpc` (a VPC route table, `route_table_id`, routes of type `NORMAL_CVM`)",
	},
	{
		Keys:     []string{"route_table_id"},
		Env:      []string{EnvRouteTableID},
		Required: "with `vpc`",
		Doc:      "VPC route table `rtb-` + 8 characters; refused with `tke`",
	},
	{
		Keys:     []string{"cluster_cidr"},
		Env:      []string{EnvClusterCIDR},
		Required: "with `vpc` or `create_cluster_route_table`",
		Doc:      "IPv4 pod CIDR, no host bits, the same as `--cluster-cidr`; only routes inside it are managed (default with `tke`: the table's CIDR)",
	},
	{
		Keys:     []string{"create_cluster_route_table"},
		Env:      []string{EnvCreateClusterRouteTable},
		Required: "no",
		Doc:      "YAML boolean, default `false`: create a missing `cluster_route_table` with `cluster_cidr` in `vpc_id`",
	},
	{
		Keys:     []string{"route_cache_ttl"},
		Env:      []string{EnvRouteCacheTTL},
		Required: "no",
		Doc:      "Go duration, default `9s`: how long a route list read is reused; keep it a little under `--route-reconciliation-period`; `0s` reads on every reconcile",
	},
	{
		Keys:     []string{"api_endpoint"},
		Env:      []string{EnvAPIEndpoint},
		Required: "no",
		Doc:      "`http[s]://host[:port]`, no path; replaces `<service>.tencentcloudapi.com` for every service (cloudsim, private endpoints)",
	},
	{
		Keys:     []string{"api_rate_limits"},
		Env:      []string{EnvAPIRateLimits},
		Required: "no",
		Doc:      "client-side limits overriding the documented ones, `Action=QPS` or `service.Action=QPS`, comma-separated (e.g. `DescribeInstances=20`); `0` disables pacing of an action. See [scale.md](scale.md)",
	},
	{
		Keys:     []string{"instance_cache_ttl"},
		Env:      []string{EnvInstanceCacheTTL},
		Required: "no",
		Doc:      "Go duration, default `60s`: how long a DescribeInstances answer serves node initialization and status sync (a node waiting for initialization also takes answers read after it registered, up to 5m old, so a long burst does not list again halfway); lifecycle checks use answers at most 10 s old; `0s` disables caching. See [scale.md](scale.md)",
	},
	{
		Keys:     []string{"read_lag_window"},
		Env:      []string{EnvReadLagWindow},
		Required: "no",
		Doc:      "Go duration, default `1m`, at most `10m`: how long DescribeInstances and DescribeLoadBalancers may not yet show what was just created (eventual consistency): an instance absent from a by-id answer is gone only if its Node is older than this, and a CLB that CreateLoadBalancer answered is taken as deleted only once absent this long; `0s` trusts every answer at once. See [reliability.md](reliability.md#lagging-reads)",
	},
	{
		Keys:     []string{"inventory"},
		Env:      []string{EnvInventory},
		Required: "no",
		Doc:      "benchmark knob: `\"off\"` (quoted in YAML) turns batching and caching off (the baseline of `make bench`); leave unset",
	},
	{
		Keys:     []string{"lb_drift_check_period"},
		Env:      []string{EnvLBDriftCheckPeriod},
		Required: "no",
		Doc:      "Go duration, default `5m`: how often every load balancer is compared with its Service (reads only) and a drifted one re-ensured; `0s` turns the check off. See [loadbalancers.md](loadbalancers.md#drift-periodic-re-ensure)",
	},
	{
		Keys:     []string{"lb_delete_retry_after"},
		Env:      []string{EnvLBDeleteRetryAfter},
		Required: "no",
		Doc:      "Go duration, default `1m`: after Tencent Cloud refuses a CLB deletion because 30 or more CLBs were deleted in the region within 5 minutes (`FailedOperation.FrequencyCheckRisk`), no deletion is tried for this long. See [loadbalancers.md](loadbalancers.md#deletion)",
	},
	{
		Keys:     []string{"lb_drain_period"},
		Env:      []string{EnvLBDrainPeriod},
		Required: "no",
		Doc:      "Go duration, default `30s`, at most `1h`: how long a target leaving a CLB stays at weight 0 (no new connections, open ones kept) before it is deregistered; `0s` deregisters at once; a Service's `lb.ccmkit.io/drain-period` overrides it. See [reliability.md](reliability.md#draining)",
	},
	{
		Keys:     []string{"lb_defaults"},
		Env:      []string{EnvLBDefaults},
		Required: "no",
		Doc:      "`ccmkit` (default) or `tke`: whose defaults a CLB gets where the Service says nothing; `tke` makes every default managed TKE's service controller's, so that taking its CLBs over writes nothing. See [migration.md](migration.md#from-tkes-service-controller)",
	},
	{
		Keys:     []string{"tke_cluster_id"},
		Env:      []string{EnvTKEClusterID},
		Required: "to take over TKE's CLBs",
		Doc:      "`cls-` + 8 characters: the TKE cluster whose service controller this CCM replaces; a CLB TKE made for a Service is taken over only when its `tke-clusterId` tag is this id, else refused. See [migration.md](migration.md#from-tkes-service-controller)",
	},
}
