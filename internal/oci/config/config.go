// Package config reads and validates the OCI provider's configuration, a
// cloud-provider.yaml in the public OCI cloud-controller-manager's format:
// every problem reported at once, the key and passphrase never printed,
// typed values parsed once with their defaults. The OCI provider reads no
// environment variables (not even the SDK's OCI_METADATA_BASE_URL and
// OCI_SDK_AUTH_CLIENT_REGION_URL: the auth.metadataEndpoint and
// auth.federationEndpoint keys replace them).
//
// Each key's row in docs/configuration.md is its field's doc comment
// (go run ./hack/configdoc): the first paragraph is the meaning, with the
// tag lines "Required: ..." and "Env: ..." (or "Row: <key>" to share
// another key's row); later paragraphs are notes for the code. See
// cloudconfig.KeyDoc.
package config

import (
	"crypto"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"sigs.k8s.io/yaml"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/cloudbase"
	"github.com/ccmkit/ccm/internal/cloudconfig"
	"github.com/ccmkit/ccm/internal/oci/ociauth"
)

// Config is the OCI provider's configuration: the --cloud-config file
// (cloud-provider.yaml), in the public OCI cloud-controller-manager's format
// so that existing files keep working, plus `endpoint` for cloudsim and
// private endpoints. The json tags are the file's keys. Unknown keys are an
// error, and every problem is reported at once.
type Config struct {
	// bool, default `false`: sign as the instance the CCM runs on, with no API
	// key (security tokens from the instance's identity, renewed ahead of
	// expiry); no `auth.user` or key may be set with it (`auth.` is the older
	// place). See [credentials.md](credentials.md#oci).
	UseInstancePrincipals bool `json:"useInstancePrincipals,omitempty"`

	// Auth is the region, the tenancy and the API key the CCM signs
	// requests with (unless useInstancePrincipals).
	Auth AuthConfig `json:"auth"`

	// the cluster's compartment (or tenancy) OCID and VCN OCID; only their
	// instances are nodes.
	// Required: yes.
	//
	// The tenancy OCID names the root compartment. Load balancers are created
	// here too.
	Compartment string `json:"compartment"`

	// Row: compartment.
	//
	// Nodes are the instances whose primary VNIC is in one of the VCN's
	// subnets.
	VCN string `json:"vcn"`

	// LoadBalancer configures Services of type LoadBalancer. Optional:
	// without it load balancers take their subnets from annotations.
	LoadBalancer LoadBalancerConfig `json:"loadBalancer,omitempty"`

	// RateLimiter configures the client-side token buckets, one for reads
	// (GET) and one for writes. Optional.
	RateLimiter RateLimiterConfig `json:"rateLimiter,omitempty"`

	// `ccmkit` (default) or `upstream`: what a Service leaves unset defaults
	// to the public OCI CCM's settings (health checks 10 s/3 s, security lists
	// `All` for an LB, an NLB's private address published,
	// `is-preserve-source` with `externalTrafficPolicy: Local`, its display
	// names), so that taking its load balancers over writes nothing; a ccmkit
	// extension. See [migration.md](migration.md).
	//
	// upstream is the public OCI CCM's (v1.35); docs/migration.md lists each
	// default that differs.
	Defaults string `json:"defaults,omitempty"`

	// `http[s]://host[:port]`, no path: the host of every OCI client
	// (cloudsim, private endpoints); a ccmkit extension.
	//
	// Default: each service's regional endpoint.
	Endpoint string `json:"endpoint,omitempty"`

	// Go duration, default `60s`: how long an instance read serves
	// initialization and status sync; lifecycle checks use reads at most 10 s
	// old; `0s` reads every time; a ccmkit extension.
	//
	// "Gone" always comes from a fresh read.
	InstanceCacheTTL time.Duration `json:"instanceCacheTTL,omitempty"`

	// Go duration, default `1m`, at most `10m`: how long the instance and load
	// balancer reads may not yet show what was just created (eventual
	// consistency): an instance not found by id is gone only if its Node is
	// older than this, and a load balancer a create made is taken as deleted
	// only once absent this long; `0s` trusts every answer at once; a ccmkit
	// extension. See [reliability.md](reliability.md#lagging-reads).
	//
	// A load balancer taken as deleted has its create's retry token spent.
	ReadLagWindow time.Duration `json:"readLagWindow,omitempty"`

	// Go duration, default `5m`: how often every load balancer is compared
	// with its Service (reads only) and a drifted one re-ensured; `0s` turns
	// the check off; a ccmkit extension. See
	// [loadbalancers.md](loadbalancers.md#drift-periodic-re-ensure).
	LBDriftCheckPeriod time.Duration `json:"lbDriftCheckPeriod,omitempty"`

	// Go duration, default `30s`, at most `1h`: how long a backend leaving a
	// load balancer stays marked drain (no new connections, open ones kept)
	// before it is removed; `0s` removes at once; a Service's
	// `lb.ccmkit.io/drain-period` overrides it; a ccmkit extension. See
	// [reliability.md](reliability.md#draining).
	//
	// For an NLB backend, drain is isDrain.
	LBDrainPeriod time.Duration `json:"lbDrainPeriod,omitempty"`
}

// The values of defaults.
const (
	DefaultsCcmkit   = "ccmkit"
	DefaultsUpstream = "upstream"
)

// UpstreamDefaults reports whether Services default to the public OCI
// CCM's settings (defaults: upstream).
func (c *Config) UpstreamDefaults() bool { return c.Defaults == DefaultsUpstream }

// DefaultInstanceCacheTTL is instanceCacheTTL's default: long enough for a
// burst of node initializations to share reads, much shorter than the
// 5-minute node status sync.
const DefaultInstanceCacheTTL = 60 * time.Second

// DefaultLBDriftCheckPeriod is lbDriftCheckPeriod's default: drift is
// repaired within minutes at the cost of one listing per load balancer per
// period.
const DefaultLBDriftCheckPeriod = 5 * time.Minute

// AuthConfig is an OCI API signing key and the identities it belongs to.
type AuthConfig struct {
	// region name, e.g. `us-ashburn-1`; with instance principals, default: the
	// instance's region, from the metadata service.
	// Required: yes (instance principals: no).
	Region string `json:"region"`
	// tenancy OCID (the resource type is checked); with instance principals,
	// default: from the instance certificate, and checked against it when set.
	// Required: yes (instance principals: no).
	Tenancy string `json:"tenancy"`
	// the OCID of the user owning the API key.
	// Required: yes (instance principals: must not be set).
	User string `json:"user"`
	// the API key's PEM RSA private key, inline or from a file (`key_file` is
	// a ccmkit extension, re-read without a restart when its directory
	// changes, e.g. a mounted Secret); never printed.
	// Required: one of (instance principals: neither).
	Key Secret `json:"key,omitempty"`
	// Row: auth.key.
	//
	// Set key or key_file, not both.
	KeyFile string `json:"key_file,omitempty"`
	// must be the key's own fingerprint; `fingerprint_file` (a ccmkit
	// extension, with `key_file`) is re-read with the key, so that a rotated
	// key can bring its fingerprint.
	// Required: one of (instance principals: neither).
	//
	// Checked against the key (aa:bb:...:ff).
	Fingerprint string `json:"fingerprint"`
	// Row: auth.fingerprint.
	//
	// Needs key_file.
	FingerprintFile string `json:"fingerprint_file,omitempty"`
	// for an encrypted key (`key_passphrase` is the older name;
	// `passphrase_file`, a ccmkit extension with `key_file`, is re-read with
	// the key); never printed.
	Passphrase Secret `json:"passphrase,omitempty"`
	// Row: auth.passphrase.
	//
	// The public format's older name for passphrase.
	KeyPassphrase Secret `json:"key_passphrase,omitempty"`
	// Row: auth.passphrase.
	//
	// Needs key_file.
	PassphraseFile string `json:"passphrase_file,omitempty"`
	// Row: useInstancePrincipals.
	//
	// The public format's older place for the top-level useInstancePrincipals.
	UseInstancePrincipals bool `json:"useInstancePrincipals,omitempty"`
	// URL, default `http://169.254.169.254/opc/v2`: the instance metadata
	// service instance principals read; for tests and demos against cloudsim
	// only; a ccmkit extension.
	MetadataEndpoint string `json:"metadataEndpoint,omitempty"`
	// `http[s]://host[:port]`, default `https://auth.<region>.oraclecloud.com`
	// (the realm's domain): the auth service instance principals get tokens
	// from; for tests and demos against cloudsim only; a ccmkit extension.
	FederationEndpoint string `json:"federationEndpoint,omitempty"`
	// the older place for `compartment`, used when that is not set.
	Compartment string `json:"compartment,omitempty"`
}

// LoadBalancerConfig is the loadBalancer section.
type LoadBalancerConfig struct {
	// `true`: no load balancer support.
	Disabled bool `json:"disabled,omitempty"`
	// subnets for load balancers (annotations override per Service).
	//
	// The annotation oci-load-balancer-subnet1 overrides it per Service.
	Subnet1 string `json:"subnet1,omitempty"`
	// Row: loadBalancer.subnet1.
	//
	// For an AD-specific subnet layout.
	Subnet2 string `json:"subnet2,omitempty"`
	// `None` (default), `Frontend`, `All`; see [oci.md](oci.md).
	//
	// Frontend: ingress to the LB subnets' security lists from
	// loadBalancerSourceRanges to the listener ports; All: Frontend, plus
	// egress from the LB subnets to the node subnets and ingress to the node
	// subnets from the LB subnets, on the NodePorts and the health check port.
	SecurityListManagementMode string `json:"securityListManagementMode,omitempty"`
	// the older switch: `true` means mode `None`.
	DisableSecurityListManagement bool `json:"disableSecurityListManagement,omitempty"`
	// subnet OCID → security list OCID to manage (default: the subnet's first
	// security list).
	SecurityLists map[string]string `json:"securityLists,omitempty"`
	// string, default none: the public OCI CCM's `LOAD_BALANCER_PREFIX`; Load
	// Balancers are named `<prefix>-<Service UID>` (found under either name,
	// created with the prefix); a ccmkit extension. See
	// [migration.md](migration.md).
	//
	// A trailing hyphen is added when missing, as the public CCM does; without
	// a prefix the display name is the Service UID.
	NamePrefix string `json:"namePrefix,omitempty"`
}

// maxNamePrefix leaves room for the hyphen and a Service UID (36
// characters) in a display name of at most 1024 (UpdateLoadBalancerDetails,
// as the public OCI CCM's GetLoadBalancerName says).
const maxNamePrefix = 1024 - 37

// SecurityListModeSet reports whether the config chooses the security
// list mode (securityListManagementMode or disableSecurityListManagement).
func (c *LoadBalancerConfig) SecurityListModeSet() bool {
	return c.SecurityListManagementMode != "" || c.DisableSecurityListManagement
}

// RateLimiterConfig is the rateLimiter section: two token buckets, reads
// (GET and HEAD requests) and writes (everything else).
type RateLimiterConfig struct {
	// the read (GET) and write token buckets; default 20/s, burst 5.
	RateLimitQPSRead float64 `json:"rateLimitQPSRead,omitempty"`
	// Row: rateLimiter.rateLimitQPSRead.
	RateLimitBucketRead int `json:"rateLimitBucketRead,omitempty"`
	// Row: rateLimiter.rateLimitQPSRead.
	RateLimitQPSWrite float64 `json:"rateLimitQPSWrite,omitempty"`
	// Row: rateLimiter.rateLimitQPSRead.
	RateLimitBucketWrite int `json:"rateLimitBucketWrite,omitempty"`
	// Row: rateLimiter.rateLimitQPSRead.
	DisableRateLimiter bool `json:"disableRateLimiter,omitempty"`
	// `operation` (default): each read operation has its own read bucket;
	// `process`: one read bucket for all, as the public OCI CCM; a ccmkit
	// extension.
	//
	// One bucket per read operation lets the node listings' page walks
	// (ListInstances, ListVnicAttachments, ListPrivateIps) run side by side.
	RateLimitReadScope string `json:"rateLimitReadScope,omitempty"`
}

// Rate limiter defaults: the public OCI CCM's rate and burst.
const (
	DefaultRateLimitQPS    = 20.0
	DefaultRateLimitBucket = 5
)

// Read bucket scopes (rateLimiter.rateLimitReadScope).
const (
	ReadScopeOperation = "operation"
	ReadScopeProcess   = "process"
)

// ReadPerOperation reports whether every read operation has its own
// bucket: the default, measured with the OCI node benchmark (docs/scale.md).
func (c *RateLimiterConfig) ReadPerOperation() bool {
	return c.RateLimitReadScope != ReadScopeProcess
}

// Security list management modes.
const (
	SecurityListModeNone     = "None"
	SecurityListModeFrontend = "Frontend"
	SecurityListModeAll      = "All"
)

// SecurityListMode returns the effective mode: None unless set.
func (c *LoadBalancerConfig) SecurityListMode() string {
	if c.DisableSecurityListManagement || c.SecurityListManagementMode == "" {
		return SecurityListModeNone
	}
	return c.SecurityListManagementMode
}

// ReadLimit returns the read bucket's rate and burst, defaults applied.
func (c *RateLimiterConfig) ReadLimit() (float64, int) {
	return orDefault(c.RateLimitQPSRead, DefaultRateLimitQPS), orDefault(c.RateLimitBucketRead, DefaultRateLimitBucket)
}

// WriteLimit returns the write bucket's rate and burst, defaults applied.
func (c *RateLimiterConfig) WriteLimit() (float64, int) {
	return orDefault(c.RateLimitQPSWrite, DefaultRateLimitQPS), orDefault(c.RateLimitBucketWrite, DefaultRateLimitBucket)
}

func orDefault[T int | float64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// InstancePrincipals reports whether requests are signed as the instance
// (useInstancePrincipals, at either place).
func (c *Config) InstancePrincipals() bool {
	return c.UseInstancePrincipals || c.Auth.UseInstancePrincipals
}

// EffectivePassphrase returns the key's passphrase, from either spelling.
func (a *AuthConfig) EffectivePassphrase() Secret {
	if a.Passphrase != "" {
		return a.Passphrase
	}
	return a.KeyPassphrase
}

// Secret is a credential (the private key, its passphrase) that never
// prints (see cloudconfig.Secret).
type Secret = cloudconfig.Secret

// Error lists every problem found in the cloud config.
type Error = cloudconfig.Error

var (
	// regionPattern: us-ashburn-1, eu-frankfurt-1, us-gov-ashburn-1, us-sim-1.
	regionPattern = regexp.MustCompile(`^[a-z]+(-[a-z]+)+-[0-9]+$`)
	// fingerprintPattern: 16 colon-separated lowercase hex bytes.
	fingerprintPattern = regexp.MustCompile(`^([0-9a-f]{2}:){15}[0-9a-f]{2}$`)
)

// OCIDPattern returns the shape of an OCID of the given resource types:
// ocid1.<type>.<realm>.[region][.future use].<unique id>.
func OCIDPattern(types ...string) *regexp.Regexp {
	return regexp.MustCompile(`^ocid1\.(` + strings.Join(types, "|") + `)\.[a-z0-9_-]+\.[a-z0-9_-]*(\.[a-z0-9_-]*)?\.[A-Za-z0-9_-]+$`)
}

var (
	tenancyOCID     = OCIDPattern("tenancy")
	userOCID        = OCIDPattern("user")
	compartmentOCID = OCIDPattern("compartment", "tenancy")
	vcnOCID         = OCIDPattern("vcn")
	subnetOCID      = OCIDPattern("subnet")
	securityOCID    = OCIDPattern("securitylist")
)

// maxKeyFileSize bounds key_file: an RSA key in PEM is a few KiB, and the
// bound keeps a wrong path (a log, /dev/zero) from being read whole.
const maxKeyFileSize = 64 << 10

// Load reads and validates the cloud config from r (nil when no
// --cloud-config was given: then every required key is reported missing).
// Every problem is reported together in one *Error. Error text never
// contains the key or its passphrase.
func Load(r io.Reader) (*Config, error) {
	l := &loader{}
	// The defaults of what the file may leave unset.
	cfg := &Config{InstanceCacheTTL: DefaultInstanceCacheTTL, ReadLagWindow: cloudbase.DefaultReadLagWindow, LBDriftCheckPeriod: DefaultLBDriftCheckPeriod, LBDrainPeriod: annotations.DrainPeriod.Default}
	if r == nil {
		l.Addf("no cloud config: start the CCM with --cloud-config naming a cloud-provider.yaml")
		return nil, l.Err("oci")
	}
	data, err := io.ReadAll(r)
	if err != nil {
		l.Addf("read cloud config: %v", err)
		return nil, l.Err("oci")
	}
	var raw map[string]any
	if err := yaml.UnmarshalStrict(data, &raw); err != nil {
		l.rememberFileSecrets(data)
		// Keep it on one line; go-yaml lists multiple errors on new lines.
		l.Addf("parse cloud config: %s", cloudconfig.OneLine(err.Error()))
		return nil, l.Err("oci")
	}
	l.rememberFileSecrets(data)
	l.decode("", raw, reflect.ValueOf(cfg).Elem())
	l.validate(cfg)
	if err := l.Err("oci"); err != nil {
		return nil, err
	}
	return cfg, nil
}

// loader accumulates problems so that all are reported at once.
type loader struct {
	// Problems holds the problems and every secret value seen, scrubbed
	// from the messages that quote user input.
	cloudconfig.Problems
}

// secretPaths are the keys whose values are secrets.
var secretPaths = [][]string{{"auth", "key"}, {"auth", "passphrase"}, {"auth", "key_passphrase"}}

// rememberFileSecrets finds the secrets in the file, leniently parsed, so
// that even a parse error quoting them can be scrubbed.
func (l *loader) rememberFileSecrets(data []byte) {
	var raw map[string]any
	if yaml.Unmarshal(data, &raw) != nil {
		return
	}
	for _, p := range secretPaths {
		if auth, ok := raw[p[0]].(map[string]any); ok {
			if s, ok := auth[p[1]].(string); ok {
				l.Remember(s)
			}
		}
	}
}

// decode copies raw into v (a struct) by json tag, strictly: unknown keys
// and values of the wrong type are problems, each named by its dotted path.
func (l *loader) decode(prefix string, raw map[string]any, v reflect.Value) {
	fields := map[string]reflect.Value{}
	known := cloudconfig.JSONKeys(v.Type())
	for i, name := range known {
		fields[name] = v.Field(i)
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys) // stable messages
	for _, k := range keys {
		path := prefix + k
		f, ok := fields[k]
		if !ok {
			l.Addf("unknown key %q in the cloud config%s", path, suggestKey(prefix, k, known))
			continue
		}
		val := raw[k]
		if val == nil { // "key:" with no value: unset
			continue
		}
		l.set(path, val, f)
	}
}

// set stores one value into f, reporting a type mismatch.
func (l *loader) set(path string, val any, f reflect.Value) {
	if f.Type() == reflect.TypeFor[time.Duration]() {
		s, ok := val.(string)
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if !ok || err != nil || d < 0 {
			l.Addf("%s %q: must be a duration like \"60s\" or \"2m\" (0s turns it off)", path, fmt.Sprint(val))
			return
		}
		f.SetInt(int64(d))
		return
	}
	switch f.Kind() {
	case reflect.String:
		s, ok := val.(string)
		if !ok {
			l.Addf("%s: must be a string, got %s (quote the value)", path, cloudconfig.YAMLKind(val))
			return
		}
		f.SetString(strings.TrimSpace(s))
	case reflect.Bool:
		b, ok := val.(bool)
		if !ok {
			l.Addf("%s: must be true or false, got %s", path, cloudconfig.YAMLKind(val))
			return
		}
		f.SetBool(b)
	case reflect.Float64:
		n, ok := val.(float64)
		if !ok {
			l.Addf("%s: must be a number, got %s", path, cloudconfig.YAMLKind(val))
			return
		}
		f.SetFloat(n)
	case reflect.Int:
		n, ok := val.(float64)
		if !ok || n != float64(int(n)) {
			l.Addf("%s: must be a whole number, got %s", path, cloudconfig.YAMLKind(val))
			return
		}
		f.SetInt(int64(n))
	case reflect.Struct:
		m, ok := val.(map[string]any)
		if !ok {
			l.Addf("%s: must be a mapping of keys, got %s", path, cloudconfig.YAMLKind(val))
			return
		}
		l.decode(path+".", m, f)
	case reflect.Map: // map[string]string
		m, ok := val.(map[string]any)
		if !ok {
			l.Addf("%s: must be a mapping of subnet OCID to security list OCID, got %s", path, cloudconfig.YAMLKind(val))
			return
		}
		out := make(map[string]string, len(m))
		for k, v := range m {
			s, ok := v.(string)
			if !ok {
				l.Addf("%s.%s: must be a string, got %s", path, k, cloudconfig.YAMLKind(v))
				continue
			}
			out[strings.TrimSpace(k)] = strings.TrimSpace(s)
		}
		f.Set(reflect.ValueOf(out))
	default:
		panic(fmt.Sprintf("oci config: field %s has unsupported kind %s", path, f.Kind()))
	}
}

// suggestKey offers the known key an unknown one was probably meant to be
// (subnet_1, Subnet1 -> subnet1), or where a key of the right name lives.
func suggestKey(prefix, k string, known []string) string {
	if s := cloudconfig.SuggestKey(prefix, k, known); s != "" {
		return s
	}
	sections := []struct {
		prefix string
		t      reflect.Type
	}{
		{"", reflect.TypeFor[Config]()}, {"auth.", reflect.TypeFor[AuthConfig]()},
		{"loadBalancer.", reflect.TypeFor[LoadBalancerConfig]()}, {"rateLimiter.", reflect.TypeFor[RateLimiterConfig]()},
	}
	for _, sec := range sections {
		if sec.prefix == prefix {
			continue
		}
		for i := range sec.t.NumField() {
			name, _, _ := strings.Cut(sec.t.Field(i).Tag.Get("json"), ",")
			if cloudconfig.SameKey(name, k) && sec.t.Field(i).Type.Kind() != reflect.Struct {
				return fmt.Sprintf(" (did you mean %s%s?)", sec.prefix, name)
			}
		}
	}
	return ""
}

// validate checks every value and how they combine, after decoding.
func (l *loader) validate(cfg *Config) {
	if cfg.ReadLagWindow < 0 || cfg.ReadLagWindow > cloudbase.MaxReadLagWindow {
		l.Addf("readLagWindow %q: must be between 0s and %s", cfg.ReadLagWindow, cloudbase.MaxReadLagWindow)
	}
	if cfg.LBDrainPeriod > annotations.DrainPeriod.Max {
		l.Addf("lbDrainPeriod %q: must be at most %s", cfg.LBDrainPeriod, annotations.DrainPeriod.Max)
	}
	a := &cfg.Auth
	ip := cfg.InstancePrincipals()
	if cfg.Compartment == "" && a.Compartment != "" {
		cfg.Compartment = a.Compartment // the public format's older place
	} else if cfg.Compartment != "" && a.Compartment != "" && a.Compartment != cfg.Compartment {
		l.Addf("auth.compartment and compartment differ: set only the top-level compartment")
	}
	l.checkOCID("compartment", cfg.Compartment, compartmentOCID, "ocid1.compartment.oc1..<unique id> (or the tenancy OCID for the root compartment)")
	l.checkOCID("vcn", cfg.VCN, vcnOCID, "ocid1.vcn.oc1.<region>.<unique id>")
	if ip {
		l.checkInstancePrincipals(cfg)
	} else {
		l.checkOCID("auth.region", a.Region, regionPattern, "us-ashburn-1")
		l.checkOCID("auth.tenancy", a.Tenancy, tenancyOCID, "ocid1.tenancy.oc1..<unique id>")
		l.checkOCID("auth.user", a.User, userOCID, "ocid1.user.oc1..<unique id>")
		for _, k := range []struct{ key, v string }{{"auth.metadataEndpoint", a.MetadataEndpoint}, {"auth.federationEndpoint", a.FederationEndpoint}} {
			if k.v != "" {
				l.Addf("%s is set but useInstancePrincipals is not: only instance principals use it (remove it, or set useInstancePrincipals: true)", k.key)
			}
		}
		if a.Passphrase != "" && a.KeyPassphrase != "" {
			l.Addf("auth.passphrase and auth.key_passphrase are both set: set only auth.passphrase")
		}
		l.checkKey(a)
	}
	if cfg.Endpoint != "" {
		if err := checkEndpoint(cfg.Endpoint); err != nil {
			l.Addf("endpoint %q: %v", cfg.Endpoint, err)
		}
	}
	l.checkLoadBalancer(&cfg.LoadBalancer)
	l.checkRateLimiter(&cfg.RateLimiter)
	switch cfg.Defaults {
	case "":
		cfg.Defaults = DefaultsCcmkit
	case DefaultsCcmkit, DefaultsUpstream:
	default:
		l.Addf("defaults %q: must be %q (the default) or %q (the public OCI CCM's, for a switch-over; see docs/migration.md)",
			cfg.Defaults, DefaultsCcmkit, DefaultsUpstream)
	}
}

// checkOCID reports a missing required value or one of the wrong shape.
func (l *loader) checkOCID(key, v string, re *regexp.Regexp, example string) {
	switch {
	case v == "":
		l.Addf("%s: required", key)
	case !re.MatchString(v):
		l.Addf("%s %q: must look like %s", key, v, example)
	}
}

// checkKey loads the private key (inline or from key_file), makes sure it
// is an RSA key the passphrase opens, and that the fingerprint is its own:
// a wrong fingerprint would only show up later as 401 on every call.
func (l *loader) checkKey(a *AuthConfig) {
	for _, f := range []struct{ file, fileKey, inline, inlineKey string }{
		{a.FingerprintFile, "auth.fingerprint_file", a.Fingerprint, "auth.fingerprint"},
		{a.PassphraseFile, "auth.passphrase_file", string(a.EffectivePassphrase()), "auth.passphrase"},
	} {
		switch {
		case f.file == "":
		case f.inline != "":
			l.Addf("%s and %s are both set: set only one", f.inlineKey, f.fileKey)
			return
		case a.KeyFile == "":
			l.Addf("%s is set without auth.key_file: the files of a mounted Secret are re-read together, so put the key in a file too (auth.key_file)", f.fileKey)
			return
		}
	}
	fp, ok := l.fileValue(a.FingerprintFile, "auth.fingerprint_file", a.Fingerprint, strings.TrimSpace)
	if !ok {
		return
	}
	key := l.loadKey(a)
	switch {
	case fp == "" && key != nil:
		l.Addf("auth.fingerprint: required (the API key's fingerprint, %s for this key)", Fingerprint(key))
	case fp == "":
		l.Addf("auth.fingerprint: required (the API key's fingerprint, aa:bb:...:ff)")
	case !fingerprintPattern.MatchString(fp):
		l.Addf("%s %q: must be 16 colon-separated lowercase hex bytes, like 12:34:56:78:9a:bc:de:f0:12:34:56:78:9a:bc:de:f0", fpKey(a), fp)
	case key != nil && fp != Fingerprint(key):
		what := "auth.key"
		if a.KeyFile != "" {
			what = "auth.key_file " + a.KeyFile
		}
		l.Addf("%s %q: is not the fingerprint of %s (%s); OCI would reject every call with 401",
			fpKey(a), fp, what, Fingerprint(key))
	}
}

// fpKey names where the fingerprint comes from.
func fpKey(a *AuthConfig) string {
	if a.FingerprintFile != "" {
		return "auth.fingerprint_file " + a.FingerprintFile
	}
	return "auth.fingerprint"
}

// fileValue is the value of a key that may come from a file: the file's
// content (trimmed by trim) when file is set, else inline. ok is false
// after reporting an unreadable file.
func (l *loader) fileValue(file, key, inline string, trim func(string) string) (string, bool) {
	if file == "" {
		return inline, true
	}
	data, err := readKeyFile(file)
	if err != nil {
		l.Addf("%s %s: %v", key, file, err)
		return "", false
	}
	return trim(data), true
}

// checkInstancePrincipals checks the keys instance principals take, and
// that no API key is configured beside them: two credential sources at
// once would leave the CCM's identity to a guess.
func (l *loader) checkInstancePrincipals(cfg *Config) {
	a := &cfg.Auth
	key := "useInstancePrincipals"
	if a.UseInstancePrincipals && !cfg.UseInstancePrincipals {
		key = "auth.useInstancePrincipals"
	}
	var keySet []string
	for _, k := range []struct {
		name string
		set  bool
	}{
		{"auth.user", a.User != ""}, {"auth.key", a.Key != ""}, {"auth.key_file", a.KeyFile != ""},
		{"auth.fingerprint", a.Fingerprint != ""}, {"auth.fingerprint_file", a.FingerprintFile != ""},
		{"auth.passphrase", a.Passphrase != ""}, {"auth.key_passphrase", a.KeyPassphrase != ""}, {"auth.passphrase_file", a.PassphraseFile != ""},
	} {
		if k.set {
			keySet = append(keySet, k.name)
		}
	}
	if a.Key != "" {
		l.Remember(string(a.Key))
	}
	if len(keySet) > 0 {
		l.Addf("%s is true and an API key is configured (%s): choose one credential source; an instance principal needs no key, so remove %s, or set %s to false",
			key, strings.Join(keySet, ", "), strings.Join(keySet, ", "), key)
	}
	if a.Region != "" {
		l.checkOCID("auth.region", a.Region, regionPattern, "us-ashburn-1")
	}
	if a.Tenancy != "" {
		l.checkOCID("auth.tenancy", a.Tenancy, tenancyOCID, "ocid1.tenancy.oc1..<unique id>")
	}
	if u := a.MetadataEndpoint; u != "" {
		if err := checkURL(u); err != nil {
			l.Addf("auth.metadataEndpoint %q: %v", u, err)
		}
	}
	if u := a.FederationEndpoint; u != "" {
		if err := checkEndpoint(u); err != nil {
			l.Addf("auth.federationEndpoint %q: %v", u, err)
		}
	}
}

// loadKey reads the key (inline or from key_file) and parses it with its
// passphrase; nil after reporting why it cannot.
func (l *loader) loadKey(a *AuthConfig) *rsa.PrivateKey {
	if a.Key != "" {
		l.Remember(string(a.Key))
	}
	what := "auth.key"
	switch {
	case a.Key != "" && a.KeyFile != "":
		l.Addf("auth.key and auth.key_file are both set: set only one")
		return nil
	case a.Key == "" && a.KeyFile == "":
		l.Addf("auth.key: required (the PEM private key inline, or auth.key_file naming a file holding it; or useInstancePrincipals: true for no key)")
		return nil
	case a.KeyFile != "":
		what = "auth.key_file " + a.KeyFile
		pem, err := readKeyFile(a.KeyFile)
		if err != nil {
			l.Addf("%s: %v", what, err)
			return nil
		}
		l.Remember(pem)
		a.Key = Secret(pem)
	}
	passphrase, ok := l.fileValue(a.PassphraseFile, "auth.passphrase_file", string(a.EffectivePassphrase()), func(s string) string { return strings.TrimRight(s, "\r\n") })
	if !ok {
		return nil
	}
	var pass *string
	if passphrase != "" {
		l.Remember(passphrase)
		pass = &passphrase
	}
	key, err := common.PrivateKeyFromBytes([]byte(a.Key), pass)
	if err != nil {
		// The SDK's message names the format problem, never the key.
		l.Addf("%s: not a usable PEM RSA private key (the value is not shown): %v", what, err)
		return nil
	}
	return key
}

// Fingerprint returns an API key's fingerprint (ociauth.Fingerprint of its
// public key). It is public information.
func Fingerprint(key crypto.Signer) string { return ociauth.Fingerprint(key.Public()) }

// readKeyFile reads a regular file of at most maxKeyFileSize bytes.
func readKeyFile(path string) (string, error) {
	data, err := cloudconfig.ReadSmallFile(path, maxKeyFileSize, "a PEM key")
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(data) == "" {
		return "", errors.New("file is empty")
	}
	return data, nil
}

// checkEndpoint accepts http[s]://host[:port] with nothing after it, the
// form the SDK's BaseClient.Host takes.
func checkEndpoint(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return errors.New("must be a URL like http://127.0.0.1:8080")
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("scheme must be http or https")
	case u.Host == "":
		return errors.New("must name a host, like http://127.0.0.1:8080")
	case u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return errors.New("must be scheme://host[:port] with no user, path or query (the SDK adds each service's path)")
	}
	return nil
}

// checkURL accepts an http[s] URL with a host and perhaps a path (the
// metadata service's base URL).
func checkURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return errors.New("must be a URL like http://169.254.169.254/opc/v2")
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("scheme must be http or https")
	case u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return errors.New("must be scheme://host[:port][/path], like http://169.254.169.254/opc/v2")
	}
	return nil
}

// checkLoadBalancer validates the loadBalancer section.
func (l *loader) checkLoadBalancer(lb *LoadBalancerConfig) {
	for _, s := range []struct{ key, v string }{{"loadBalancer.subnet1", lb.Subnet1}, {"loadBalancer.subnet2", lb.Subnet2}} {
		if s.v != "" && !subnetOCID.MatchString(s.v) {
			l.Addf("%s %q: must look like ocid1.subnet.oc1.<region>.<unique id>", s.key, s.v)
		}
	}
	if p := lb.NamePrefix; p != "" {
		switch {
		case strings.TrimSpace(p) != p || strings.ContainsAny(p, "\n\t"):
			l.Addf("loadBalancer.namePrefix %q: must not have blanks around it or line breaks (it starts display names)", p)
		case len(p) > maxNamePrefix:
			l.Addf("loadBalancer.namePrefix: %d characters; at most %d leave room for the Service UID in a display name", len(p), maxNamePrefix)
		}
	}
	if lb.Subnet2 != "" && lb.Subnet1 == "" {
		l.Addf("loadBalancer.subnet2 is set without loadBalancer.subnet1: set subnet1 (subnet2 is the optional second one)")
	}
	if m := lb.SecurityListManagementMode; m != "" {
		modes := []string{SecurityListModeNone, SecurityListModeFrontend, SecurityListModeAll}
		i := slices.IndexFunc(modes, func(want string) bool { return strings.EqualFold(want, m) })
		if i < 0 {
			l.Addf("loadBalancer.securityListManagementMode %q: must be None, Frontend or All", m)
		} else {
			lb.SecurityListManagementMode = modes[i]
		}
		if lb.DisableSecurityListManagement && i >= 0 && modes[i] != SecurityListModeNone {
			l.Addf("loadBalancer.disableSecurityListManagement is true but securityListManagementMode is %s: set only securityListManagementMode", modes[i])
		}
	}
	subnets := make([]string, 0, len(lb.SecurityLists))
	for s := range lb.SecurityLists {
		subnets = append(subnets, s)
	}
	slices.Sort(subnets)
	for _, s := range subnets {
		if !subnetOCID.MatchString(s) {
			l.Addf("loadBalancer.securityLists: key %q must be a subnet OCID", s)
		}
		if sl := lb.SecurityLists[s]; !securityOCID.MatchString(sl) {
			l.Addf("loadBalancer.securityLists[%s] %q: must be a security list OCID (ocid1.securitylist...)", s, sl)
		}
	}
}

// checkRateLimiter validates the rateLimiter section. Zero means default,
// as in the public format.
func (l *loader) checkRateLimiter(r *RateLimiterConfig) {
	for _, q := range []struct {
		key string
		v   float64
	}{{"rateLimiter.rateLimitQPSRead", r.RateLimitQPSRead}, {"rateLimiter.rateLimitQPSWrite", r.RateLimitQPSWrite}} {
		if q.v < 0 {
			l.Addf("%s %v: must be a positive number of requests per second (0 or unset: %v)", q.key, q.v, DefaultRateLimitQPS)
		}
	}
	for _, b := range []struct {
		key string
		v   int
	}{{"rateLimiter.rateLimitBucketRead", r.RateLimitBucketRead}, {"rateLimiter.rateLimitBucketWrite", r.RateLimitBucketWrite}} {
		if b.v < 0 {
			l.Addf("%s %d: must be a positive burst size (0 or unset: %d)", b.key, b.v, DefaultRateLimitBucket)
		}
	}
	if s := r.RateLimitReadScope; s != "" && s != ReadScopeOperation && s != ReadScopeProcess {
		l.Addf("rateLimiter.rateLimitReadScope %q: must be %q (default) or %q", s, ReadScopeOperation, ReadScopeProcess)
	}
}
