// Package config reads and validates the Tencent Cloud provider's
// configuration: the --cloud-config file merged with the environment, every
// problem reported at once, secrets never printed, and typed values
// (durations, the pod CIDR, rate limits) parsed once with their defaults.
//
// Each key's row in docs/configuration.md is its field's doc comment
// (go run ./hack/configdoc): the first paragraph is the meaning, with the
// tag lines "Required: ..." and "Env: ..." (or "Row: <key>" to share
// another key's row); later paragraphs are notes for the code. See
// cloudconfig.KeyDoc.
package config

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/cloudbase"
	"github.com/ccmkit/ccm/internal/cloudconfig"
	"github.com/ccmkit/ccm/internal/tencent/tcapi"
)

// Environment variables read by Load. They override the cloud config
// file. The TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_* names are the seed
// project's; TENCENTCLOUD_SECRET_ID/KEY are the SDK's own names and rank
// below the CCM-specific ones but above the file. Each secret can instead be
// read from a file named by the matching *_FILE variable.
const (
	envPrefix = "TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_"

	EnvRegion            = envPrefix + "REGION"
	EnvVpcID             = envPrefix + "VPC_ID"
	EnvSecretID          = envPrefix + "SECRET_ID"
	EnvSecretKey         = envPrefix + "SECRET_KEY"
	EnvSecretIDFile      = envPrefix + "SECRET_ID_FILE"
	EnvSecretKeyFile     = envPrefix + "SECRET_KEY_FILE"
	EnvClusterRouteTable = envPrefix + "CLUSTER_ROUTE_TABLE"
	EnvAPIEndpoint       = envPrefix + "API_ENDPOINT"
	EnvAPIRateLimits     = envPrefix + "API_RATE_LIMITS"
	EnvInstanceCacheTTL  = envPrefix + "INSTANCE_CACHE_TTL"
	EnvReadLagWindow     = envPrefix + "READ_LAG_WINDOW"

	EnvSDKSecretID      = "TENCENTCLOUD_SECRET_ID"
	EnvSDKSecretKey     = "TENCENTCLOUD_SECRET_KEY"
	EnvSDKSecretIDFile  = "TENCENTCLOUD_SECRET_ID_FILE"
	EnvSDKSecretKeyFile = "TENCENTCLOUD_SECRET_KEY_FILE"
)

// Config is the Tencent Cloud provider's configuration: the --cloud-config
// file (YAML or JSON) merged with the environment. The json tags are the
// file's keys, where every value is a string (booleans may be YAML
// booleans). Unknown keys are an error. Load parses the typed fields once
// and fills in their defaults.
type Config struct {
	// region such as `ap-guangzhou`; must look like one.
	// Required: yes.
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_REGION.
	Region string `json:"region"`

	// `vpc-` + 8 characters; only instances in this VPC are nodes of this
	// cluster.
	// Required: yes.
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_VPC_ID.
	VpcID string `json:"vpc_id"`

	// `key`, `cvm-role` or `web-identity`; default: the one source whose keys
	// are set (two at once is an error); needed only for `cvm-role` without
	// `cvm_role_name`. See [credentials.md](credentials.md).
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_CREDENTIAL_SOURCE.
	//
	// The source is resolved in credentials.go.
	CredentialSource string `json:"credential_source,omitempty"`

	// the API key's SecretId; never printed.
	// Required: with `key`.
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_SECRET_ID, TENCENTCLOUD_SECRET_ID.
	SecretID Secret `json:"secret_id"`

	// the API key's SecretKey; never printed.
	// Required: with `key`.
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_SECRET_KEY, TENCENTCLOUD_SECRET_KEY.
	SecretKey Secret `json:"secret_key"`

	// read the SecretId from a file (trimmed; a regular file of at most 4
	// KiB); a change (a mounted Secret updated) is applied without a restart.
	// Required: —.
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_SECRET_ID_FILE, TENCENTCLOUD_SECRET_ID_FILE.
	//
	// After loading it holds the file actually read, whichever variable named
	// it.
	SecretIDFile string `json:"secret_id_file,omitempty"`

	// read the SecretKey from a file, re-read like secret_id_file.
	// Required: —.
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_SECRET_KEY_FILE, TENCENTCLOUD_SECRET_KEY_FILE.
	SecretKeyFile string `json:"secret_key_file,omitempty"`

	// the CAM role bound to the instance (`cvm-role`; setting it selects that
	// source); default: the role the metadata service lists.
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_CVM_ROLE_NAME.
	CVMRoleName string `json:"cvm_role_name,omitempty"`

	// `http[s]://host[:port]`, default `http://metadata.tencentyun.com`: the
	// instance metadata service (`cvm-role`); for tests and the demo
	// (cloudsim) only.
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_METADATA_ENDPOINT.
	MetadataEndpoint string `json:"metadata_endpoint,omitempty"`

	// the projected ServiceAccount token, re-read at every refresh.
	// Required: with `web-identity`.
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_WEB_IDENTITY_TOKEN_FILE, TKE_WEB_IDENTITY_TOKEN_FILE, TKE_IDENTITY_TOKEN_FILE.
	WebIdentityTokenFile string `json:"web_identity_token_file,omitempty"`

	// the CAM role to assume, `qcs::cam::uin/<uin>:roleName/<name>`.
	// Required: with `web-identity`.
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_WEB_IDENTITY_ROLE_ARN, TKE_ROLE_ARN.
	WebIdentityRoleArn string `json:"web_identity_role_arn,omitempty"`

	// the CAM OIDC identity provider's name (AssumeRoleWithWebIdentity's
	// `ProviderId`).
	// Required: with `web-identity`.
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_WEB_IDENTITY_PROVIDER_ID, TKE_PROVIDER_ID.
	WebIdentityProviderID string `json:"web_identity_provider_id,omitempty"`

	// default `ccmkit-cloud-controller-manager`: the role session's name in
	// CAM's audit logs, 2-128 of letters, digits and `+=,.@_-`.
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_WEB_IDENTITY_SESSION_NAME.
	WebIdentitySessionName string `json:"web_identity_session_name,omitempty"`

	// Go duration, default `2h`, at most `12h`: how long the temporary
	// credentials asked of STS last (the role's session duration may cut it);
	// they are refreshed at half their lifetime.
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_WEB_IDENTITY_DURATION.
	//
	// It is STS DurationSeconds.
	WebIdentityDuration time.Duration `json:"web_identity_duration,omitempty"`

	// `http[s]://host[:port]`, default `https://sts.tencentcloudapi.com`
	// (`web-identity`); for tests and the demo (cloudsim) only.
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_STS_ENDPOINT.
	STSEndpoint string `json:"sts_endpoint,omitempty"`

	// TKE cluster route table for pod routes; setting it turns the route
	// controller's Routes on (then `--cluster-cidr` is required). See
	// [routes.md](routes.md).
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_CLUSTER_ROUTE_TABLE.
	ClusterRouteTable string `json:"cluster_route_table,omitempty"`

	// `tke` (default: `cluster_route_table`) or `vpc` (a VPC route table,
	// `route_table_id`, routes of type `NORMAL_CVM`).
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_ROUTE_BACKEND.
	RouteBackend string `json:"route_backend,omitempty"`

	// VPC route table `rtb-` + 8 characters; refused with `tke`.
	// Required: with `vpc`.
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_ROUTE_TABLE_ID.
	RouteTableID string `json:"route_table_id,omitempty"`

	// IPv4 pod CIDR, no host bits, the same as `--cluster-cidr`; only routes
	// inside it are managed (default with `tke`: the table's CIDR).
	// Required: with `vpc` or `create_cluster_route_table`.
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_CLUSTER_CIDR.
	ClusterCIDR netip.Prefix `json:"cluster_cidr,omitempty"`

	// YAML boolean, default `false`: create a missing `cluster_route_table`
	// with `cluster_cidr` in `vpc_id`.
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_CREATE_CLUSTER_ROUTE_TABLE.
	//
	// Without it a missing table is an error.
	CreateClusterRouteTable bool `json:"create_cluster_route_table,omitempty"`

	// Go duration, default `9s`: how long a route list read is reused; keep it
	// a little under `--route-reconciliation-period`; `0s` reads on every
	// reconcile.
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_ROUTE_CACHE_TTL.
	RouteCacheTTL time.Duration `json:"route_cache_ttl,omitempty"`

	// `http[s]://host[:port]`, no path; replaces
	// `<service>.tencentcloudapi.com` for every service (cloudsim, private
	// endpoints).
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_API_ENDPOINT.
	//
	// Default: the SDK's endpoint, https://<service>.tencentcloudapi.com.
	APIEndpoint string `json:"api_endpoint,omitempty"`

	// client-side limits overriding the documented ones, `Action=QPS` or
	// `service.Action=QPS`, comma-separated (e.g. `DescribeInstances=20`); `0`
	// disables pacing of an action. See [scale.md](scale.md).
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_API_RATE_LIMITS.
	//
	// Default: the documented limits (DescribeInstances 40/s, tke Describe*
	// 50/s, tke Create*/Delete* 20/s, clb 20/s, other actions 20/s). Lower
	// them when other tools share the account's quota.
	APIRateLimits tcapi.Limits `json:"api_rate_limits,omitempty"`

	// Go duration, default `60s`: how long a DescribeInstances answer serves
	// node initialization and status sync (a node waiting for initialization
	// also takes answers read after it registered, up to 5m old, so a long
	// burst does not list again halfway); lifecycle checks use answers at most
	// 10 s old; `0s` disables caching. See [scale.md](scale.md).
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_INSTANCE_CACHE_TTL.
	//
	// Lifecycle checks (exists, shutdown) use answers at most min(ttl, 10s)
	// old, and "instance gone" always comes from a fresh call; "0s" keeps the
	// batching.
	InstanceCacheTTL time.Duration `json:"instance_cache_ttl,omitempty"`

	// Go duration, default `1m`, at most `10m`: how long DescribeInstances and
	// DescribeLoadBalancers may not yet show what was just created (eventual
	// consistency): an instance absent from a by-id answer is gone only if its
	// Node is older than this, and a CLB that CreateLoadBalancer answered is
	// taken as deleted only once absent this long; `0s` trusts every answer at
	// once. See [reliability.md](reliability.md#lagging-reads).
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_READ_LAG_WINDOW.
	//
	// A CLB taken as deleted has its ClientToken spent.
	ReadLagWindow time.Duration `json:"read_lag_window,omitempty"`

	// Go duration, default `5m`: how often every load balancer is compared
	// with its Service (reads only) and a drifted one re-ensured; `0s` turns
	// the check off. See
	// [loadbalancers.md](loadbalancers.md#drift-periodic-re-ensure).
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_LB_DRIFT_CHECK_PERIOD.
	LBDriftCheckPeriod time.Duration `json:"lb_drift_check_period,omitempty"`

	// Go duration, default `1m`: after Tencent Cloud refuses a CLB deletion
	// because 30 or more CLBs were deleted in the region within 5 minutes
	// (`FailedOperation.FrequencyCheckRisk`), no deletion is tried for this
	// long. See [loadbalancers.md](loadbalancers.md#deletion).
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_LB_DELETE_RETRY_AFTER.
	LBDeleteRetryAfter time.Duration `json:"lb_delete_retry_after,omitempty"`

	// Go duration, default `30s`, at most `1h`: how long a target leaving a
	// CLB stays at weight 0 (no new connections, open ones kept) before it is
	// deregistered; `0s` deregisters at once; a Service's
	// `lb.ccmkit.io/drain-period` overrides it. See
	// [reliability.md](reliability.md#draining).
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_LB_DRAIN_PERIOD.
	LBDrainPeriod time.Duration `json:"lb_drain_period,omitempty"`

	// `ccmkit` (default) or `tke`: whose defaults a CLB gets where the Service
	// says nothing; `tke` makes every default managed TKE's service
	// controller's, so that taking its CLBs over writes nothing. See
	// [migration.md](migration.md#from-tkes-service-controller).
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_LB_DEFAULTS.
	//
	// ccmkit: HTTP health checks of kube-proxy's /healthz, pass-to-target on,
	// our ownership tags on a CLB taken over from TKE; tke: CLB's own TCP
	// health check of each NodePort, pass-to-target as the CLB has it, and a
	// CLB taken over from TKE keeps TKE's marks only.
	LBDefaults string `json:"lb_defaults,omitempty"`

	// `cls-` + 8 characters: the TKE cluster whose service controller this CCM
	// replaces; a CLB TKE made for a Service is taken over only when its
	// `tke-clusterId` tag is this id, else refused. See
	// [migration.md](migration.md#from-tkes-service-controller).
	// Required: to take over TKE's CLBs.
	// Env: TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_TKE_CLUSTER_ID.
	//
	// TKE's CLBs carry tke-createdBy-flag=yes; without this key they are
	// refused, never replaced.
	TKEClusterID string `json:"tke_cluster_id,omitempty"`
}

// LBDefaults values.
const (
	LBDefaultsCCMKit = "ccmkit"
	LBDefaultsTKE    = "tke"
)

// DefaultInstanceCacheTTL is instance_cache_ttl's default: long enough for
// a burst of node initializations to share one listing of the VPC, much
// shorter than the 5-minute node status sync, which therefore always sees
// fresh addresses.
const DefaultInstanceCacheTTL = 60 * time.Second

// Secret is a credential that never prints (see cloudconfig.Secret).
type Secret = cloudconfig.Secret

// Error lists every problem found in the configuration.
type Error = cloudconfig.Error

var (
	// regionPattern: ap-guangzhou, ap-shanghai-fsi, na-siliconvalley, eu-frankfurt.
	regionPattern = regexp.MustCompile(`^[a-z]{2}-[a-z0-9]+(-[a-z0-9]+)*$`)
	// vpcIDPattern: vpc- and 8 lowercase letters or digits, like instance ids.
	vpcIDPattern = regexp.MustCompile(`^vpc-[a-z0-9]{8}$`)
)

// Load reads the cloud config from r (nil when no --cloud-config was
// given), applies the environment read through getenv (os.Getenv when nil),
// and validates the result. All problems are reported together in one
// *Error. Error text never contains a secret.
func Load(r io.Reader, getenv func(string) string) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	l := &loader{getenv: getenv}
	file := l.readFile(r)
	cfg := &Config{}
	region := l.plain(file, "region", EnvRegion)
	vpcID := l.plain(file, "vpc_id", EnvVpcID)
	endpoint := l.plain(file, "api_endpoint", EnvAPIEndpoint)
	cfg.Region, cfg.VpcID, cfg.APIEndpoint = region.value, vpcID.value, endpoint.value
	l.routeSettings(file, cfg)
	l.lbSettings(file, cfg)
	rateLimits := l.plain(file, "api_rate_limits", EnvAPIRateLimits)
	cacheTTL := l.plain(file, "instance_cache_ttl", EnvInstanceCacheTTL)
	readLag := l.plain(file, "read_lag_window", EnvReadLagWindow)
	secretID, secretIDFile := l.secret(file, "secret_id", EnvSecretID, EnvSDKSecretID)
	secretKey, secretKeyFile := l.secret(file, "secret_key", EnvSecretKey, EnvSDKSecretKey)
	cfg.SecretID, cfg.SecretIDFile = Secret(secretID.value), secretIDFile
	cfg.SecretKey, cfg.SecretKeyFile = Secret(secretKey.value), secretKeyFile
	l.credentialSettings(file, cfg, secretID.from != "" || secretKey.from != "")
	if cfg.CredentialSource == CredentialSourceKey {
		l.requireSecret(secretID, "secret_id", EnvSecretID, EnvSDKSecretID)
		l.requireSecret(secretKey, "secret_key", EnvSecretKey, EnvSDKSecretKey)
	}

	l.checkPattern(region, "region", EnvRegion, regionPattern, "ap-guangzhou")
	l.checkPattern(vpcID, "vpc_id", EnvVpcID, vpcIDPattern, "vpc-xxxxxxxx")
	if endpoint.value != "" {
		if _, _, err := parseEndpoint(endpoint.value); err != nil {
			l.Addf("api_endpoint %q%s: %v", endpoint.value, endpoint.suffix(), err)
		}
	}
	limits, err := tcapi.ParseLimits(rateLimits.value)
	if err != nil {
		l.Addf("api_rate_limits%s: %v", rateLimits.suffix(), err)
	}
	cfg.APIRateLimits = limits
	cfg.InstanceCacheTTL = l.duration(cacheTTL, "instance_cache_ttl", DefaultInstanceCacheTTL, 0,
		`must be a duration like "60s" or "2m" (0s disables caching)`)
	cfg.ReadLagWindow = l.duration(readLag, "read_lag_window", cloudbase.DefaultReadLagWindow, 0,
		`must be a duration like "1m" or "30s" (0s trusts every answer at once)`)
	if cfg.ReadLagWindow > cloudbase.MaxReadLagWindow {
		l.Addf("read_lag_window %q%s: must be at most %s", readLag.value, readLag.suffix(), cloudbase.MaxReadLagWindow)
	}
	l.checkSecret(secretID)
	l.checkSecret(secretKey)
	if err := l.Err("tencentcloud"); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Endpoint returns the SDK's HttpProfile Endpoint and Scheme for
// api_endpoint, or empty strings to keep the SDK's defaults.
func (c *Config) Endpoint() (host, scheme string, err error) {
	if c.APIEndpoint == "" {
		return "", "", nil
	}
	return parseEndpoint(c.APIEndpoint)
}

// ParseEndpoint splits an endpoint setting (api_endpoint, sts_endpoint)
// into the SDK's Endpoint (host[:port]) and Scheme (HTTP or HTTPS).
func ParseEndpoint(s string) (host, scheme string, err error) { return parseEndpoint(s) }

// parseEndpoint checks api_endpoint and splits it into the SDK's Endpoint
// (host[:port]) and Scheme (HTTP or HTTPS).
func parseEndpoint(s string) (host, scheme string, err error) {
	if !strings.Contains(s, "://") {
		return "", "", errors.New("must be a URL like http://127.0.0.1:8080 or https://host")
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", "", errors.New("not a valid URL")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", "", errors.New("scheme must be http or https")
	case u.User != nil:
		return "", "", errors.New("must not contain user information")
	case u.Hostname() == "":
		return "", "", errors.New("host is missing")
	case u.Path != "" && u.Path != "/":
		return "", "", errors.New("must not have a path")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "", "", errors.New("must not have a query or fragment")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", "", errors.New("port must be 1-65535")
		}
	}
	return u.Host, strings.ToUpper(u.Scheme), nil
}

// loader accumulates problems while reading, so that all are reported at once.
type loader struct {
	getenv func(string) string
	// Problems holds the problems and every secret value seen in any
	// source, scrubbed from the messages that quote user input.
	cloudconfig.Problems
	// fileUnparsed is set when the cloud config could not be parsed; then
	// "required" would only repeat that error, so it is not reported.
	fileUnparsed bool
}

// sourced is a value and where it came from: an environment variable name,
// or "" for the cloud config file.
type sourced struct {
	value, from string
}

// suffix names a non-file source for messages: ` (from ENV_NAME)`.
func (s sourced) suffix() string {
	if s.from == "" {
		return ""
	}
	return " (from " + s.from + ")"
}

// retiredKeys were keys once and are ignored now, with why.
var retiredKeys = map[string]string{
	"inventory": "the benchmark's switch is no setting any more: the bench sets CCMKIT_BENCH_INVENTORY_OFF (docs/scale.md)",
}

// configKeys lists the file keys: the json tags of Config.
func configKeys() []string { return cloudconfig.JSONKeys(reflect.TypeFor[Config]()) }

// readFile parses the cloud config into trimmed string values by key.
// An empty or absent file is fine: everything may come from the environment.
func (l *loader) readFile(r io.Reader) map[string]string {
	values := map[string]string{}
	if r == nil {
		return values
	}
	data, err := io.ReadAll(r)
	if err != nil {
		l.Addf("read cloud config: %v", err)
		return values
	}
	var raw map[string]any
	if err := yaml.UnmarshalStrict(data, &raw); err != nil {
		l.rememberFileSecrets(data)
		l.fileUnparsed = true
		// Keep it on one line; go-yaml lists multiple errors on new lines.
		l.Addf("parse cloud config: %s", cloudconfig.OneLine(err.Error()))
		return values
	}
	for _, k := range []string{"secret_id", "secret_key"} {
		if s, ok := raw[k].(string); ok {
			l.Remember(s)
		}
	}
	known := configKeys()
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys) // stable messages
	for _, k := range keys {
		if why, ok := retiredKeys[k]; ok {
			// A config that set it still loads: nothing that worked breaks.
			klog.InfoS("Ignoring a retired cloud config key", "key", k, "why", why)
			continue
		}
		if !slices.Contains(known, k) {
			l.Addf("unknown key %q in the cloud config%s", k, cloudconfig.SuggestKey("", k, known))
			continue
		}
		switch v := raw[k].(type) {
		case nil: // "key:" with no value: unset
		case string:
			values[k] = strings.TrimSpace(v)
		case bool:
			if !slices.Contains(boolKeys, k) {
				l.Addf("%s: must be a string, got %s (quote the value)", k, cloudconfig.YAMLKind(v))
				break
			}
			values[k] = strconv.FormatBool(v)
		default:
			l.Addf("%s: must be a string, got %s (quote the value)", k, cloudconfig.YAMLKind(v))
		}
	}
	return values
}

// rememberFileSecrets finds secrets in a file that strict parsing rejected
// (e.g. for a duplicate key), so that the parse error can be scrubbed too.
func (l *loader) rememberFileSecrets(data []byte) {
	var raw map[string]any
	if yaml.Unmarshal(data, &raw) != nil {
		return
	}
	for _, k := range []string{"secret_id", "secret_key"} {
		if s, ok := raw[k].(string); ok {
			l.Remember(s)
		}
	}
}

// plain resolves a non-secret setting: the environment wins over the file.
func (l *loader) plain(file map[string]string, key, env string) sourced {
	if v := strings.TrimSpace(l.getenv(env)); v != "" {
		return sourced{value: v, from: env}
	}
	return sourced{value: file[key]}
}

// secretLevel is one place a secret can be set: a value and a file variable.
type secretLevel struct {
	valueName, value string
	fileName, file   string
}

// secret resolves a secret from, highest precedence first, the CCM env vars,
// the SDK env vars, and the cloud config file. Each level may set the value
// or its _FILE variant, not both. It returns the secret and the file it was
// read from, if any.
func (l *loader) secret(file map[string]string, key, ccmEnv, sdkEnv string) (sourced, string) {
	levels := []secretLevel{
		{valueName: ccmEnv, value: l.getenv(ccmEnv), fileName: ccmEnv + "_FILE", file: l.getenv(ccmEnv + "_FILE")},
		{valueName: sdkEnv, value: l.getenv(sdkEnv), fileName: sdkEnv + "_FILE", file: l.getenv(sdkEnv + "_FILE")},
		{valueName: key, value: file[key], fileName: key + "_file", file: file[key+"_file"]},
	}
	for i := range levels {
		lv := &levels[i]
		l.Remember(lv.value)
		lv.value, lv.file = strings.TrimSpace(lv.value), strings.TrimSpace(lv.file)
		if lv.value != "" && lv.file != "" {
			l.Addf("%s and %s are both set: set only one", lv.valueName, lv.fileName)
		}
	}
	for _, lv := range levels {
		switch {
		case lv.value != "":
			return sourced{value: lv.value, from: lv.valueName}, ""
		case lv.file != "":
			return sourced{value: l.readSecretFile(lv.fileName, lv.file), from: lv.fileName}, lv.file
		}
	}
	return sourced{}, ""
}

// requireSecret reports a missing half of the key pair.
func (l *loader) requireSecret(v sourced, key, ccmEnv, sdkEnv string) {
	if v.value == "" && v.from == "" && !l.fileUnparsed {
		l.Addf("%s: required (set %s or %s_file in the cloud config, or %s, %s, %s or %s)",
			key, key, key, ccmEnv, ccmEnv+"_FILE", sdkEnv, sdkEnv+"_FILE")
	}
}

// maxSecretFileSize bounds what a secret file may hold; credentials are a
// few dozen bytes, and the bound keeps a wrong path (a log, /dev/zero) from
// being read whole.
const maxSecretFileSize = 4096

// readSecretFile reads a secret from path, named by setting for messages.
func (l *loader) readSecretFile(setting, path string) string {
	data, err := cloudconfig.ReadSmallFile(path, maxSecretFileSize, "a credential")
	if err != nil {
		l.Addf("%s %s: %w", setting, path, err)
		return ""
	}
	l.Remember(data)
	v := strings.TrimSpace(data)
	if v == "" {
		l.Addf("%s %s: file is empty", setting, path)
	}
	return v
}

// duration parses a duration setting: def when unset, at least minimum
// otherwise, hint the message for a bad value.
func (l *loader) duration(v sourced, key string, def, minimum time.Duration, hint string) time.Duration {
	d, err := cloudconfig.Duration(v.value, def, minimum, hint)
	if err != nil {
		l.Addf("%s %q%s: %v", key, v.value, v.suffix(), err)
	}
	return d
}

// checkPattern reports a missing required value or one of the wrong shape.
func (l *loader) checkPattern(v sourced, key, env string, re *regexp.Regexp, example string) {
	switch {
	case v.value == "" && l.fileUnparsed:
	case v.value == "":
		l.Addf("%s: required (set %s in the cloud config or %s)", key, key, env)
	case !re.MatchString(v.value):
		l.Addf("%s %q%s: must look like %s", key, v.value, v.suffix(), example)
	}
}

// checkSecret rejects characters that cannot be in a Tencent credential; a
// stray newline or quote from a copied Secret is the usual cause. The
// value itself is never shown.
func (l *loader) checkSecret(v sourced) {
	if v.value == "" {
		return // reported as required or as an empty file
	}
	for _, c := range v.value {
		if c <= ' ' || c > '~' || c == '"' || c == '\'' {
			l.Addf("%s: must be printable ASCII without spaces or quotes (the value is not shown)", v.from)
			return
		}
	}
}

// ---- route settings ----

// Environment variables of the route settings.
const (
	EnvRouteBackend            = envPrefix + "ROUTE_BACKEND"
	EnvRouteTableID            = envPrefix + "ROUTE_TABLE_ID"
	EnvClusterCIDR             = envPrefix + "CLUSTER_CIDR"
	EnvCreateClusterRouteTable = envPrefix + "CREATE_CLUSTER_ROUTE_TABLE"
	EnvRouteCacheTTL           = envPrefix + "ROUTE_CACHE_TTL"
)

// Route backends.
const (
	RouteBackendTKE = "tke"
	RouteBackendVPC = "vpc"
)

// DefaultRouteCacheTTL is route_cache_ttl's default: a little under the
// route controller's default 10 s reconciliation period, so that every
// periodic reconcile reads the table afresh while everything in between is
// served from the cache.
const DefaultRouteCacheTTL = 9 * time.Second

// boolKeys are the file keys that take a YAML boolean.
var boolKeys = []string{"create_cluster_route_table"}

// routeTableIDPattern: rtb- and 8 lowercase letters or digits.
var routeTableIDPattern = regexp.MustCompile(`^rtb-[a-z0-9]{8}$`)

// routeSettings reads and checks the route keys, including how they combine.
func (l *loader) routeSettings(file map[string]string, cfg *Config) {
	table := l.plain(file, "cluster_route_table", EnvClusterRouteTable)
	backend := l.plain(file, "route_backend", EnvRouteBackend)
	tableID := l.plain(file, "route_table_id", EnvRouteTableID)
	cidr := l.plain(file, "cluster_cidr", EnvClusterCIDR)
	create := l.plain(file, "create_cluster_route_table", EnvCreateClusterRouteTable)
	ttl := l.plain(file, "route_cache_ttl", EnvRouteCacheTTL)
	cfg.ClusterRouteTable, cfg.RouteTableID = table.value, tableID.value
	cfg.RouteBackend = strings.ToLower(backend.value)

	if create.value != "" {
		b, err := strconv.ParseBool(create.value)
		if err != nil {
			l.Addf("create_cluster_route_table %q%s: must be true or false", create.value, create.suffix())
		}
		cfg.CreateClusterRouteTable = b
	}
	if cidr.value != "" {
		p, err := parseClusterCIDR(cidr.value)
		if err != nil {
			l.Addf("cluster_cidr %q%s: %v", cidr.value, cidr.suffix(), err)
		}
		cfg.ClusterCIDR = p
	}
	cfg.RouteCacheTTL = l.duration(ttl, "route_cache_ttl", DefaultRouteCacheTTL, 0, `must be a duration like "9s" (0s disables caching)`)
	switch cfg.RouteBackend {
	case "", RouteBackendTKE:
		if tableID.value != "" {
			l.Addf("route_table_id%s is for route_backend vpc; with route_backend tke set cluster_route_table", tableID.suffix())
		}
		if cfg.CreateClusterRouteTable && table.value == "" {
			l.Addf("create_cluster_route_table%s needs cluster_route_table: the name of the table to create", create.suffix())
		}
		if cfg.CreateClusterRouteTable && cidr.value == "" {
			l.Addf("create_cluster_route_table%s needs cluster_cidr: the CIDR of the table to create (the same as --cluster-cidr)", create.suffix())
		}
	case RouteBackendVPC:
		if table.value != "" || cfg.CreateClusterRouteTable {
			l.Addf("cluster_route_table and create_cluster_route_table are for route_backend tke; with route_backend vpc set route_table_id")
		}
		switch {
		case tableID.value == "":
			l.Addf("route_table_id: required with route_backend vpc (set route_table_id in the cloud config or %s)", EnvRouteTableID)
		case !routeTableIDPattern.MatchString(tableID.value):
			l.Addf("route_table_id %q%s: must look like rtb-xxxxxxxx", tableID.value, tableID.suffix())
		}
		if cidr.value == "" {
			l.Addf("cluster_cidr: required with route_backend vpc, so that routes of other tools in the table are never touched (set it to --cluster-cidr)")
		}
	default:
		l.Addf("route_backend %q%s: must be tke or vpc", backend.value, backend.suffix())
	}
}

// RoutesEnabled reports whether the provider offers Routes: with tke when a
// cluster route table is named, with vpc always (route_table_id is required).
func (c *Config) RoutesEnabled() bool {
	return c.RouteBackend == RouteBackendVPC || c.ClusterRouteTable != ""
}

func parseClusterCIDR(s string) (netip.Prefix, error) {
	if s == "" {
		return netip.Prefix{}, nil
	}
	p, err := netip.ParsePrefix(s)
	switch {
	case err != nil || !p.Addr().Is4():
		return netip.Prefix{}, errors.New("must be an IPv4 CIDR like 10.244.0.0/16 (route tables carry IPv4 routes only)")
	case p.Masked() != p:
		return netip.Prefix{}, fmt.Errorf("has host bits set (did you mean %s?)", p.Masked())
	}
	return p, nil
}

// ---- load balancer settings ----

// EnvLBDriftCheckPeriod sets lb_drift_check_period.
const EnvLBDriftCheckPeriod = envPrefix + "LB_DRIFT_CHECK_PERIOD"

// DefaultLBDriftCheckPeriod is lb_drift_check_period's default: drift is
// repaired within minutes at the cost of two reads per CLB per period.
const DefaultLBDriftCheckPeriod = 5 * time.Minute

// DefaultLBDeleteRetryAfter is lb_delete_retry_after's default. The
// refusal's window slides, so a slot may free up at any time within the 5
// minutes: probing once a minute costs at most five refused calls per
// window, whatever the number of Services waiting.
const DefaultLBDeleteRetryAfter = time.Minute

// EnvLBDeleteRetryAfter sets lb_delete_retry_after.
const EnvLBDeleteRetryAfter = envPrefix + "LB_DELETE_RETRY_AFTER"

// EnvLBDrainPeriod sets lb_drain_period.
const EnvLBDrainPeriod = envPrefix + "LB_DRAIN_PERIOD"

func (l *loader) lbSettings(file map[string]string, cfg *Config) {
	drainV := l.plain(file, "lb_drain_period", EnvLBDrainPeriod)
	cfg.LBDrainPeriod = l.duration(drainV, "lb_drain_period", annotations.DrainPeriod.Default, 0,
		`must be a duration like "30s" or "5m" (0s deregisters at once)`)
	if cfg.LBDrainPeriod > annotations.DrainPeriod.Max {
		l.Addf("lb_drain_period %q%s: must be at most %s", drainV.value, drainV.suffix(), annotations.DrainPeriod.Max)
	}
	period := l.plain(file, "lb_drift_check_period", EnvLBDriftCheckPeriod)
	cfg.LBDriftCheckPeriod = l.duration(period, "lb_drift_check_period", DefaultLBDriftCheckPeriod, 0,
		`must be a duration like "5m" or "30s" (0s turns the drift check off)`)
	retry := l.plain(file, "lb_delete_retry_after", EnvLBDeleteRetryAfter)
	cfg.LBDeleteRetryAfter = l.duration(retry, "lb_delete_retry_after", DefaultLBDeleteRetryAfter, time.Nanosecond,
		`must be a positive duration like "1m" or "30s"`)
	defaults := l.plain(file, "lb_defaults", EnvLBDefaults)
	switch cfg.LBDefaults = strings.ToLower(defaults.value); cfg.LBDefaults {
	case "":
		cfg.LBDefaults = LBDefaultsCCMKit
	case LBDefaultsCCMKit, LBDefaultsTKE:
	default:
		l.Addf("lb_defaults %q%s: must be ccmkit or tke", defaults.value, defaults.suffix())
	}
	cluster := l.plain(file, "tke_cluster_id", EnvTKEClusterID)
	cfg.TKEClusterID = cluster.value
	if cluster.value != "" {
		l.checkPattern(cluster, "tke_cluster_id", EnvTKEClusterID, tkeClusterIDPattern, "cls-xxxxxxxx")
	}
}

// EnvLBDefaults sets lb_defaults; EnvTKEClusterID sets tke_cluster_id.
const (
	EnvLBDefaults   = envPrefix + "LB_DEFAULTS"
	EnvTKEClusterID = envPrefix + "TKE_CLUSTER_ID"
)

// tkeClusterIDPattern: cls- and 8 lower-case letters or digits, as TKE
// names clusters (and tags their CLBs tke-clusterId=cls-…).
var tkeClusterIDPattern = regexp.MustCompile(`^cls-[a-z0-9]{8}$`)
