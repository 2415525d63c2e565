package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/cloudbase"
	"github.com/ccmkit/ccm/internal/cloudconfig"
	"github.com/ccmkit/ccm/internal/tencent/tcapi"
)

const (
	testSecretID  = "AKIDtestsecretid0000000000000000000"
	testSecretKey = "testsecretkey000000000000000000k"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const validYAML = `
region: ap-guangzhou
vpc_id: vpc-aaaa1111
secret_id: ` + testSecretID + `
secret_key: ` + testSecretKey + `
cluster_route_table: rt-cluster
api_endpoint: http://127.0.0.1:8080
`

func TestLoadConfigValid(t *testing.T) {
	want := Config{
		Region: "ap-guangzhou", VpcID: "vpc-aaaa1111",
		SecretID: testSecretID, SecretKey: testSecretKey, CredentialSource: CredentialSourceKey,
		ClusterRouteTable: "rt-cluster", APIEndpoint: "http://127.0.0.1:8080",
		// the defaults Load fills in
		APIRateLimits: tcapi.Limits{}, InstanceCacheTTL: DefaultInstanceCacheTTL, RouteCacheTTL: DefaultRouteCacheTTL,
		ReadLagWindow:      cloudbase.DefaultReadLagWindow,
		LBDriftCheckPeriod: DefaultLBDriftCheckPeriod, LBDeleteRetryAfter: DefaultLBDeleteRetryAfter, LBDrainPeriod: annotations.DrainPeriod.Default,
		LBDefaults: LBDefaultsCCMKit,
	}
	jsonDoc, _ := yaml.YAMLToJSON([]byte(validYAML))
	tests := []struct {
		name string
		file string
		env  map[string]string
	}{
		{name: "yaml", file: validYAML},
		{name: "json", file: string(jsonDoc)},
		{name: "env only", env: map[string]string{
			EnvRegion: "ap-guangzhou", EnvVpcID: "vpc-aaaa1111",
			EnvSecretID: testSecretID, EnvSecretKey: testSecretKey,
			EnvClusterRouteTable: "rt-cluster", EnvAPIEndpoint: "http://127.0.0.1:8080",
		}},
		{name: "sdk env names", file: "region: ap-guangzhou\nvpc_id: vpc-aaaa1111\ncluster_route_table: rt-cluster\napi_endpoint: http://127.0.0.1:8080\n",
			env: map[string]string{EnvSDKSecretID: testSecretID, EnvSDKSecretKey: testSecretKey}},
		{name: "whitespace trimmed", file: "region: ' ap-guangzhou '\nvpc_id: vpc-aaaa1111\ncluster_route_table: rt-cluster\n",
			env: map[string]string{EnvSecretID: testSecretID + "\n", EnvSecretKey: " " + testSecretKey, EnvAPIEndpoint: "http://127.0.0.1:8080"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r *strings.Reader
			if tt.file != "" {
				r = strings.NewReader(tt.file)
			}
			cfg, err := loadForTest(r, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*cfg, want) {
				t.Errorf("got %#v\nwant %#v", *cfg, want) // redacted either way
			}
			if string(cfg.SecretID) != testSecretID || string(cfg.SecretKey) != testSecretKey {
				t.Errorf("secrets not loaded")
			}
		})
	}
}

// loadForTest passes a nil io.Reader (not a nil *strings.Reader) when r is nil.
func loadForTest(r *strings.Reader, env map[string]string) (*Config, error) {
	if r == nil {
		return Load(nil, envOf(env))
	}
	return Load(r, envOf(env))
}

func TestLoadConfigEmptyFileAndNullValues(t *testing.T) {
	env := map[string]string{EnvRegion: "ap-guangzhou", EnvVpcID: "vpc-aaaa1111", EnvSecretID: "id12", EnvSecretKey: "key1"}
	for _, file := range []string{"", "\n", "# only a comment\n", "region:\nvpc_id: null\n", "{}"} {
		if _, err := Load(strings.NewReader(file), envOf(env)); err != nil {
			t.Errorf("%q: %v", file, err)
		}
	}
}

func TestLoadConfigPrecedence(t *testing.T) {
	idFile := writeFile(t, "  id-from-ccm-file\n")
	sdkIDFile := writeFile(t, "id-from-sdk-file")
	cfgIDFile := writeFile(t, "id-from-config-file\n")
	base := "region: ap-guangzhou\nvpc_id: vpc-aaaa1111\nsecret_key: k-from-file\n"
	tests := []struct {
		name     string
		file     string
		env      map[string]string
		wantID   string
		wantFile string
		wantKey  string
	}{
		{"file value", base + "secret_id: id-from-file\n", nil, "id-from-file", "", "k-from-file"},
		{"file _file", base + "secret_id_file: " + cfgIDFile + "\n", nil, "id-from-config-file", cfgIDFile, "k-from-file"},
		{"sdk env beats file", base + "secret_id: id-from-file\n",
			map[string]string{EnvSDKSecretID: "id-from-sdk-env"}, "id-from-sdk-env", "", "k-from-file"},
		{"sdk env _FILE beats file", base + "secret_id: id-from-file\n",
			map[string]string{EnvSDKSecretIDFile: sdkIDFile}, "id-from-sdk-file", sdkIDFile, "k-from-file"},
		{"ccm env beats sdk env", base,
			map[string]string{EnvSDKSecretID: "id-from-sdk-env", EnvSecretID: "id-from-ccm-env"}, "id-from-ccm-env", "", "k-from-file"},
		{"ccm env _FILE beats sdk env", base,
			map[string]string{EnvSDKSecretID: "id-from-sdk-env", EnvSecretIDFile: idFile}, "id-from-ccm-file", idFile, "k-from-file"},
		{"key from sdk env _FILE", base,
			map[string]string{EnvSecretID: "i-env", EnvSDKSecretKeyFile: writeFile(t, "k-sdk-file")}, "i-env", "", "k-sdk-file"},
		{"key from ccm env", base,
			map[string]string{EnvSecretID: "i-env", EnvSecretKey: "k-ccm-env", EnvSDKSecretKey: "k-sdk-env"}, "i-env", "", "k-ccm-env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(strings.NewReader(tt.file), envOf(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if string(cfg.SecretID) != tt.wantID || cfg.SecretIDFile != tt.wantFile || string(cfg.SecretKey) != tt.wantKey {
				t.Errorf("got id %q (file %q) key %q; want %q (file %q) %q",
					string(cfg.SecretID), cfg.SecretIDFile, string(cfg.SecretKey), tt.wantID, tt.wantFile, tt.wantKey)
			}
		})
	}

	t.Run("env beats file for plain settings", func(t *testing.T) {
		cfg, err := Load(strings.NewReader(validYAML), envOf(map[string]string{
			EnvRegion: "ap-shanghai", EnvVpcID: "vpc-cccc3333", EnvClusterRouteTable: "rt-env", EnvAPIEndpoint: "https://cvm.example.com",
		}))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Region != "ap-shanghai" || cfg.VpcID != "vpc-cccc3333" || cfg.ClusterRouteTable != "rt-env" || cfg.APIEndpoint != "https://cvm.example.com" {
			t.Errorf("got %+v", cfg)
		}
	})
}

func TestLoadConfigErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	empty := writeFile(t, " \n")
	good := "region: ap-guangzhou\nvpc_id: vpc-aaaa1111\nsecret_id: id\nsecret_key: key\n"
	tests := []struct {
		name string
		file string
		env  map[string]string
		want []string // each must appear; the count of problems must match
	}{
		{"nothing at all", "", nil, []string{
			"region: required (set region in the cloud config or TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_REGION)",
			"vpc_id: required (set vpc_id in the cloud config or TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_VPC_ID)",
			"credentials: required: set secret_id and secret_key (or their _file variants), credential_source cvm-role",
		}},
		{"bad shapes", "region: ap guangzhou\nvpc_id: abc\napi_endpoint: ftp://x\nsecret_id: a\nsecret_key: b\n", nil, []string{
			`region "ap guangzhou": must look like ap-guangzhou`,
			`vpc_id "abc": must look like vpc-xxxxxxxx`,
			`api_endpoint "ftp://x": scheme must be http or https`,
		}},
		{"bad shape from env", good, map[string]string{EnvVpcID: "vpc-XYZ"}, []string{
			`vpc_id "vpc-XYZ" (from TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_VPC_ID): must look like vpc-xxxxxxxx`,
		}},
		{"unknown keys all named", good + "vpcId: x\nzone: y\n", nil, []string{
			`unknown key "vpcId" in the cloud config (did you mean vpc_id?)`, `unknown key "zone"`,
		}},
		{"not strings", "region: 1\nvpc_id: [a]\nsecret_id: true\nsecret_key: {a: b}\n", nil, []string{
			"region: must be a string, got a number", "vpc_id: must be a string, got a list",
			"secret_id: must be a string, got a boolean", "secret_key: must be a string, got a mapping",
			"credentials: required", "region: required", "vpc_id: required",
		}},
		// A file that does not parse is one problem: "required" would repeat it.
		{"yaml syntax error names the line", "region: ap-guangzhou\nvpc_id: [\n", nil, []string{"parse cloud config: error converting YAML to JSON: yaml: line 2:"}},
		{"duplicate key", "region: ap-guangzhou\nregion: ap-shanghai\n", nil, []string{`parse cloud config: error converting YAML to JSON: yaml: unmarshal errors: line 2: key "region" already set in map`}},
		{"not a mapping", "- a\n- b\n", nil, []string{"parse cloud config"}},
		{"parse error and bad env", "a: [", map[string]string{EnvRegion: "x"}, []string{"parse cloud config", `region "x" (from ` + EnvRegion + `)`}},
		{"secret file missing", "region: ap-guangzhou\nvpc_id: vpc-aaaa1111\nsecret_id: id\nsecret_key_file: " + missing + "\n", nil, []string{
			"secret_key_file " + missing + ": open: no such file or directory",
		}},
		{"secret file empty", good, map[string]string{EnvSecretKeyFile: empty}, []string{
			EnvSecretKeyFile + " " + empty + ": file is empty",
		}},
		{"value and _FILE at one level", good + "secret_id_file: /x\n", map[string]string{
			EnvSDKSecretKey: "k", EnvSDKSecretKeyFile: "/y",
		}, []string{
			"secret_id and secret_id_file are both set: set only one",
			"TENCENTCLOUD_SECRET_KEY and TENCENTCLOUD_SECRET_KEY_FILE are both set: set only one",
		}},
		{"secret file is a directory", good, map[string]string{EnvSecretKeyFile: filepath.Dir(empty)}, []string{
			EnvSecretKeyFile + " " + filepath.Dir(empty) + ": not a regular file",
		}},
		{"secret file too large", good, map[string]string{EnvSecretKeyFile: writeFile(t, strings.Repeat("k", 5000))}, []string{
			"larger than 4096 bytes",
		}},
		{"secret with a space", good, map[string]string{EnvSecretKey: "ab cd"}, []string{
			EnvSecretKey + ": must be printable ASCII without spaces or quotes",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(strings.NewReader(tt.file), envOf(tt.env))
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v (%T), want *Error", err, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n %v\nlacks %q", err, w)
				}
			}
			if len(ce.Problems) != len(tt.want) {
				t.Errorf("%d problems, want %d: %v", len(ce.Problems), len(tt.want), err)
			}
		})
	}
}

func TestConfigErrorFormat(t *testing.T) {
	_, err := Load(nil, envOf(map[string]string{EnvRegion: "ap-guangzhou", EnvSecretID: "id", EnvSecretKey: "k"}))
	if got, want := err.Error(), "tencentcloud config: vpc_id: required (set vpc_id in the cloud config or TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_VPC_ID)"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	_, err = Load(nil, envOf(map[string]string{EnvSecretID: "id", EnvSecretKey: "k"}))
	if got := err.Error(); !strings.HasPrefix(got, "tencentcloud config: 2 problems: (1) region: required") || !strings.Contains(got, "; (2) vpc_id: required") {
		t.Errorf("got %s", got)
	}
	_, err = Load(nil, envOf(map[string]string{EnvSecretIDFile: "/does/not/exist"}))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("errors.Is(err, fs.ErrNotExist) = false for %v", err)
	}
}

func TestParseEndpoint(t *testing.T) {
	tests := []struct {
		in, host, scheme, err string
	}{
		{in: "http://127.0.0.1:8080", host: "127.0.0.1:8080", scheme: "HTTP"},
		{in: "https://cvm.tencentcloudapi.com", host: "cvm.tencentcloudapi.com", scheme: "HTTPS"},
		{in: "http://localhost:8080/", host: "localhost:8080", scheme: "HTTP"},
		{in: "http://[::1]:8080", host: "[::1]:8080", scheme: "HTTP"},
		{in: "ftp://x", err: "scheme must be http or https"},
		{in: "127.0.0.1:8080", err: "must be a URL"},
		{in: "http://", err: "host is missing"},
		{in: "http://:80", err: "host is missing"},
		{in: "http://h/api", err: "must not have a path"},
		{in: "http://h?x=1", err: "query"},
		{in: "http://h#f", err: "fragment"},
		{in: "http://u:p@h", err: "user information"},
		{in: "http://h:0", err: "port"},
		{in: "http://h:70000", err: "port"},
		{in: "http://h:x", err: "not a valid URL"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			host, scheme, err := parseEndpoint(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || host != tt.host || scheme != tt.scheme {
				t.Errorf("got %q %q %v, want %q %q", host, scheme, err, tt.host, tt.scheme)
			}
		})
	}
}

func TestSecretsNeverPrinted(t *testing.T) {
	cfg, err := Load(strings.NewReader(validYAML), envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(cfg)
	outputs := []string{string(js), cfg.SecretID.String(), cfg.SecretKey.GoString()}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10.3s"} {
		outputs = append(outputs, fmt.Sprintf(verb, cfg), fmt.Sprintf(verb, *cfg),
			fmt.Sprintf(verb, cfg.SecretID), fmt.Sprintf(verb, cfg.SecretKey))
	}
	for _, out := range outputs {
		if strings.Contains(out, testSecretID) || strings.Contains(out, testSecretKey) ||
			strings.Contains(out, "AKID") || strings.Contains(out, "testsecret") {
			t.Errorf("secret printed: %s", out)
		}
	}
	if !strings.Contains(fmt.Sprintf("%+v", cfg), "SecretKey:[redacted]") {
		t.Errorf("%%+v = %+v, want SecretKey:[redacted]", cfg)
	}
}

func TestSecretsNeverInErrors(t *testing.T) {
	// A user can paste a secret anywhere; messages that quote input must
	// not carry it.
	files := []string{
		"region: " + testSecretKey + "\nsecret_key: " + testSecretKey + "\n",
		"vpc_id: " + testSecretKey + "\nsecret_key: " + testSecretKey + "\n",
		testSecretKey + ": 1\nsecret_key: " + testSecretKey + "\n",
		"api_endpoint: http://" + testSecretKey + "/x\nsecret_key: " + testSecretKey + "\n",
		"secret_key: " + testSecretKey + "\nsecret_key: " + testSecretKey + "\n",
		"secret_key: " + testSecretKey + " x\n",
	}
	for _, f := range files {
		_, err := Load(strings.NewReader(f), envOf(nil))
		if err == nil {
			t.Fatalf("%q: want an error", f)
		}
		if strings.Contains(err.Error(), testSecretKey) {
			t.Errorf("secret in error: %v", err)
		}
	}
	_, err := Load(nil, envOf(map[string]string{EnvRegion: testSecretID, EnvSDKSecretID: testSecretID}))
	if err == nil || strings.Contains(err.Error(), testSecretID) {
		t.Errorf("secret in error: %v", err)
	}
	keyFile := writeFile(t, testSecretKey)
	_, err = Load(nil, envOf(map[string]string{EnvVpcID: testSecretKey + "x", EnvSecretKeyFile: keyFile}))
	if err == nil || strings.Contains(err.Error(), testSecretKey) {
		t.Errorf("secret in error: %v", err)
	}
}

// FuzzLoadConfig: never panics, and no error carries a secret given in the
// file or the environment.
func FuzzLoadConfig(f *testing.F) {
	f.Add([]byte(validYAML), "")
	f.Add([]byte("region: ap-guangzhou\nregion: x\nsecret_key: abcdefgh\n"), "envsecret")
	f.Add([]byte("{\"secret_key\": \"abcdefgh\", \"abcdefgh\": 1}"), "")
	f.Add([]byte("secret_key: &a abcdefgh\nregion: *a\n"), "")
	f.Add([]byte("- a\n"), "xyzw")
	f.Add([]byte("secret_id: [1, 2]\nvpc_id: vpc-aaaa1111\n"), "")
	f.Fuzz(func(t *testing.T, data []byte, envSecret string) {
		env := map[string]string{EnvSecretID: envSecret, EnvVpcID: envSecret, EnvAPIEndpoint: envSecret}
		cfg, err := Load(strings.NewReader(string(data)), envOf(env))
		if err == nil {
			if cfg == nil || cfg.Region == "" || cfg.VpcID == "" || cfg.SecretID == "" || cfg.SecretKey == "" {
				t.Fatalf("no error but incomplete config %+v", cfg)
			}
			return
		}
		secrets := []string{strings.TrimSpace(envSecret)}
		var raw map[string]any
		if yaml.Unmarshal(data, &raw) == nil {
			for _, k := range []string{"secret_id", "secret_key"} {
				if s, ok := raw[k].(string); ok {
					secrets = append(secrets, strings.TrimSpace(s))
				}
			}
		}
		for _, s := range secrets {
			if len(s) >= cloudconfig.MinScrubLen && strings.Contains(err.Error(), s) {
				t.Fatalf("error contains secret %q: %v", s, err)
			}
		}
	})
}

func TestLoadConfigScaleKeys(t *testing.T) {
	const base = "region: ap-guangzhou\nvpc_id: vpc-aaaa1111\nsecret_id: i\nsecret_key: k\n"
	tests := []struct {
		name      string
		file      string
		env       map[string]string
		wantTTL   time.Duration
		wantQPS   map[string]float64 // "service.Action" -> effective limit
		wantLag   time.Duration
		wantError string
	}{
		{name: "defaults", wantTTL: DefaultInstanceCacheTTL, wantLag: cloudbase.DefaultReadLagWindow,
			wantQPS: map[string]float64{"cvm.DescribeInstances": 40}},
		{name: "file", file: "api_rate_limits: DescribeInstances=20, clb.CreateListener=5\ninstance_cache_ttl: 2m\n",
			wantTTL: 2 * time.Minute, wantLag: cloudbase.DefaultReadLagWindow,
			wantQPS: map[string]float64{"cvm.DescribeInstances": 20, "clb.CreateListener": 5, "clb.DeleteListener": 20}},
		{name: "env wins", file: "instance_cache_ttl: 2m\n",
			env:     map[string]string{EnvInstanceCacheTTL: "0s", EnvAPIRateLimits: "DescribeInstances=0"},
			wantTTL: 0, wantLag: cloudbase.DefaultReadLagWindow, wantQPS: map[string]float64{"cvm.DescribeInstances": 0}},
		{name: "bad limits", file: "api_rate_limits: DescribeInstances\n", wantError: "api_rate_limits: \"DescribeInstances\": want Action=QPS"},
		{name: "bad ttl", env: map[string]string{EnvInstanceCacheTTL: "soon"},
			wantError: `instance_cache_ttl "soon" (from ` + EnvInstanceCacheTTL + `): must be a duration`},
		{name: "negative ttl", file: "instance_cache_ttl: -1s\n", wantError: "instance_cache_ttl \"-1s\": must be a duration"},
		{name: "the retired inventory key is ignored", file: "inventory: \"off\"\n", wantTTL: DefaultInstanceCacheTTL,
			wantLag: cloudbase.DefaultReadLagWindow, wantQPS: map[string]float64{"cvm.DescribeInstances": 40}},
		{name: "read lag window", file: "read_lag_window: 30s\n", wantTTL: DefaultInstanceCacheTTL, wantLag: 30 * time.Second},
		{name: "read lag window off", env: map[string]string{EnvReadLagWindow: "0s"}, wantTTL: DefaultInstanceCacheTTL, wantLag: 0},
		{name: "read lag window too long", file: "read_lag_window: 11m\n", wantError: `read_lag_window "11m": must be at most 10m0s`},
		{name: "read lag window negative", file: "read_lag_window: -1s\n", wantError: `read_lag_window "-1s": must be a duration`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(strings.NewReader(base+tt.file), envOf(tt.env))
			if tt.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantError) {
					t.Fatalf("error %v, want %q", err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.InstanceCacheTTL != tt.wantTTL {
				t.Errorf("ttl %s, want %s", cfg.InstanceCacheTTL, tt.wantTTL)
			}
			if cfg.ReadLagWindow != tt.wantLag {
				t.Errorf("read lag window %s, want %s", cfg.ReadLagWindow, tt.wantLag)
			}
			for key, want := range tt.wantQPS {
				service, action, _ := strings.Cut(key, ".")
				if got := tcapi.EffectiveQPS(cfg.APIRateLimits, service, action); got != want {
					t.Errorf("%s: %v QPS, want %v", key, got, want)
				}
			}
		})
	}
}

func TestLoadConfigRouteKeys(t *testing.T) {
	const base = "region: ap-guangzhou\nvpc_id: vpc-aaaa1111\nsecret_id: i\nsecret_key: k\n"
	tests := []struct {
		name        string
		file        string
		env         map[string]string
		wantEnabled bool
		wantBackend string
		wantCIDR    string
		wantCreate  bool
		wantTTL     time.Duration
		wantErrors  []string
	}{
		{name: "no routes", wantTTL: DefaultRouteCacheTTL},
		{name: "tke table", file: "cluster_route_table: cls-1\n", wantEnabled: true, wantTTL: DefaultRouteCacheTTL},
		{name: "tke, created by the CCM (YAML boolean)",
			file:        "cluster_route_table: cls-1\ncreate_cluster_route_table: true\ncluster_cidr: 10.244.0.0/16\nroute_cache_ttl: 30s\n",
			wantEnabled: true, wantCreate: true, wantCIDR: "10.244.0.0/16", wantTTL: 30 * time.Second},
		{name: "env wins", file: "cluster_route_table: cls-1\ncreate_cluster_route_table: true\ncluster_cidr: 10.244.0.0/16\n",
			env:         map[string]string{EnvCreateClusterRouteTable: "false", EnvRouteCacheTTL: "0s", EnvRouteBackend: "TKE"},
			wantEnabled: true, wantBackend: "tke", wantCIDR: "10.244.0.0/16", wantTTL: 0},
		{name: "vpc", file: "route_backend: vpc\nroute_table_id: rtb-aaaa1111\ncluster_cidr: 10.244.0.0/16\n",
			wantEnabled: true, wantBackend: "vpc", wantCIDR: "10.244.0.0/16", wantTTL: DefaultRouteCacheTTL},
		{name: "create needs a name and a CIDR", file: "create_cluster_route_table: true\n",
			wantErrors: []string{"create_cluster_route_table needs cluster_route_table", "create_cluster_route_table needs cluster_cidr"}},
		{name: "bad values", file: "cluster_route_table: cls-1\ncluster_cidr: 10.244.0.1/16\nroute_cache_ttl: soon\n",
			env: map[string]string{EnvCreateClusterRouteTable: "yes please"},
			wantErrors: []string{`cluster_cidr "10.244.0.1/16": has host bits set (did you mean 10.244.0.0/16?)`,
				`route_cache_ttl "soon": must be a duration`,
				`create_cluster_route_table "yes please" (from ` + EnvCreateClusterRouteTable + `): must be true or false`}},
		{name: "ipv6 cluster cidr", file: "cluster_route_table: cls-1\ncluster_cidr: fd00::/48\n",
			wantErrors: []string{`cluster_cidr "fd00::/48": must be an IPv4 CIDR`}},
		{name: "unknown backend", file: "route_backend: aws\n", wantErrors: []string{`route_backend "aws": must be tke or vpc`}},
		{name: "vpc needs a table id and a CIDR", file: "route_backend: vpc\n",
			wantErrors: []string{"route_table_id: required with route_backend vpc", "cluster_cidr: required with route_backend vpc"}},
		{name: "vpc with tke keys", file: "route_backend: vpc\nroute_table_id: rtb-1\ncluster_cidr: 10.244.0.0/16\ncluster_route_table: cls-1\n",
			wantErrors: []string{"cluster_route_table and create_cluster_route_table are for route_backend tke", `route_table_id "rtb-1": must look like rtb-xxxxxxxx`}},
		{name: "tke with a vpc table id", file: "cluster_route_table: cls-1\nroute_table_id: rtb-aaaa1111\n",
			wantErrors: []string{"route_table_id is for route_backend vpc"}},
		{name: "booleans only where a boolean is meant", file: "cluster_route_table: true\n",
			wantErrors: []string{"cluster_route_table: must be a string, got a boolean"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(strings.NewReader(base+tt.file), envOf(tt.env))
			if len(tt.wantErrors) > 0 {
				for _, want := range tt.wantErrors {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Errorf("error %v, want %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ttl, cidr := cfg.RouteCacheTTL, ""
			if cfg.ClusterCIDR.IsValid() {
				cidr = cfg.ClusterCIDR.String()
			}
			if cfg.RoutesEnabled() != tt.wantEnabled || cfg.RouteBackend != tt.wantBackend || cidr != tt.wantCIDR ||
				cfg.CreateClusterRouteTable != tt.wantCreate || ttl != tt.wantTTL {
				t.Errorf("enabled %v backend %q cidr %q create %v ttl %s", cfg.RoutesEnabled(), cfg.RouteBackend, cidr,
					cfg.CreateClusterRouteTable, ttl)
			}
		})
	}
}

// TestLBDurationKeys checks the load balancer durations set from the
// environment: the default when unset, each key's own bounds, and an error
// naming the key, its value and the variable it came from.
func TestLBDurationKeys(t *testing.T) {
	base := map[string]string{EnvRegion: "ap-guangzhou", EnvVpcID: "vpc-aaaa1111", EnvSecretID: "AKIDtest", EnvSecretKey: "key-test"}
	tests := []struct {
		env     string
		value   string
		got     func(*Config) time.Duration
		want    time.Duration
		wantErr string
	}{
		{EnvLBDriftCheckPeriod, "", driftCheckPeriod, DefaultLBDriftCheckPeriod, ""},
		{EnvLBDriftCheckPeriod, "30s", driftCheckPeriod, 30 * time.Second, ""},
		{EnvLBDriftCheckPeriod, "0s", driftCheckPeriod, 0, ""},
		{EnvLBDriftCheckPeriod, "5", driftCheckPeriod, 0, `lb_drift_check_period "5" (from TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_LB_DRIFT_CHECK_PERIOD): must be a duration`},
		{EnvLBDriftCheckPeriod, "-1m", driftCheckPeriod, 0, "must be a duration"},

		{EnvLBDeleteRetryAfter, "", deleteRetryAfter, DefaultLBDeleteRetryAfter, ""},
		{EnvLBDeleteRetryAfter, "30s", deleteRetryAfter, 30 * time.Second, ""},
		{EnvLBDeleteRetryAfter, "0s", deleteRetryAfter, 0, `lb_delete_retry_after "0s" (from TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_LB_DELETE_RETRY_AFTER): must be a positive duration`},
		{EnvLBDeleteRetryAfter, "soon", deleteRetryAfter, 0, "must be a positive duration"},

		{EnvLBDrainPeriod, "", drainPeriod, annotations.DrainPeriod.Default, ""},
		{EnvLBDrainPeriod, "2m", drainPeriod, 2 * time.Minute, ""},
		{EnvLBDrainPeriod, "0s", drainPeriod, 0, ""},
		{EnvLBDrainPeriod, "2h", drainPeriod, 0, `lb_drain_period "2h" (from TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_LB_DRAIN_PERIOD): must be at most 1h0m0s`},
		{EnvLBDrainPeriod, "-1s", drainPeriod, 0, `lb_drain_period "-1s"`},
		{EnvLBDrainPeriod, "soon", drainPeriod, 0, `must be a duration like "30s"`},
	}
	for _, tc := range tests {
		t.Run(tc.env+"="+tc.value, func(t *testing.T) {
			env := maps.Clone(base)
			if tc.value != "" {
				env[tc.env] = tc.value
			}
			cfg, err := Load(nil, envOf(env))
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case tc.got(cfg) != tc.want:
				t.Errorf("%v, want %v", tc.got(cfg), tc.want)
			}
		})
	}
}

// TestTakeoverKeys checks lb_defaults and tke_cluster_id: defaults, the
// accepted values, and an error naming the key, its value and its source.
func TestTakeoverKeys(t *testing.T) {
	base := map[string]string{EnvRegion: "ap-guangzhou", EnvVpcID: "vpc-aaaa1111", EnvSecretID: "AKIDtest", EnvSecretKey: "key-test"}
	tests := []struct {
		env, value      string
		defaults, clsID string
		wantErr         string
	}{
		{EnvLBDefaults, "", LBDefaultsCCMKit, "", ""},
		{EnvLBDefaults, "tke", LBDefaultsTKE, "", ""},
		{EnvLBDefaults, "TKE", LBDefaultsTKE, "", ""},
		{EnvLBDefaults, "ccmkit", LBDefaultsCCMKit, "", ""},
		{EnvLBDefaults, "upstream", "", "", `lb_defaults "upstream" (from TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_LB_DEFAULTS): must be ccmkit or tke`},
		{EnvTKEClusterID, "cls-abcd1234", LBDefaultsCCMKit, "cls-abcd1234", ""},
		{EnvTKEClusterID, "abcd1234", "", "", `tke_cluster_id "abcd1234" (from TENCENTCLOUD_CLOUD_CONTROLLER_MANAGER_TKE_CLUSTER_ID): must look like cls-xxxxxxxx`},
	}
	for _, tc := range tests {
		t.Run(tc.env+"="+tc.value, func(t *testing.T) {
			env := maps.Clone(base)
			if tc.value != "" {
				env[tc.env] = tc.value
			}
			cfg, err := Load(nil, envOf(env))
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case cfg.LBDefaults != tc.defaults || cfg.TKEClusterID != tc.clsID:
				t.Errorf("lb_defaults %q, tke_cluster_id %q; want %q, %q", cfg.LBDefaults, cfg.TKEClusterID, tc.defaults, tc.clsID)
			}
		})
	}
}

func driftCheckPeriod(c *Config) time.Duration { return c.LBDriftCheckPeriod }
func deleteRetryAfter(c *Config) time.Duration { return c.LBDeleteRetryAfter }
func drainPeriod(c *Config) time.Duration      { return c.LBDrainPeriod }
