package config_test

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccmkit/ccm/internal/cloudbase"
	"github.com/ccmkit/ccm/internal/oci/config"
	"github.com/ccmkit/ccm/internal/oci/config/configtest"
)

func TestLoadConfigValid(t *testing.T) {
	full := configtest.Valid(`loadBalancer:
  subnet1: ` + configtest.Subnet + `
  subnet2: ` + configtest.OtherSubnet + `
  securityListManagementMode: frontend
  securityLists:
    ` + configtest.Subnet + `: ocid1.securitylist.oc1.iad.aaaasl
rateLimiter:
  rateLimitQPSRead: 50
  rateLimitBucketRead: 10
  rateLimitQPSWrite: 2.5
  rateLimitBucketWrite: 1
  rateLimitReadScope: process
endpoint: http://127.0.0.1:8080
instanceCacheTTL: 2m
readLagWindow: 30s
lbDriftCheckPeriod: 0s
`)
	cfg, err := config.Load(strings.NewReader(full))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Auth.Region != "us-ashburn-1" || cfg.Auth.Tenancy != configtest.Tenancy || cfg.Auth.User != configtest.User ||
		cfg.Compartment != configtest.Compartment || cfg.VCN != configtest.VCN || cfg.Endpoint != "http://127.0.0.1:8080" {
		t.Errorf("cfg = %+v", cfg)
	}
	if string(cfg.Auth.Key) != strings.TrimSpace(configtest.PEM()) {
		t.Error("key not loaded verbatim")
	}
	lb := cfg.LoadBalancer
	if lb.Subnet1 != configtest.Subnet || lb.Subnet2 != configtest.OtherSubnet || lb.SecurityListMode() != config.SecurityListModeFrontend ||
		lb.SecurityLists[configtest.Subnet] != "ocid1.securitylist.oc1.iad.aaaasl" {
		t.Errorf("loadBalancer = %+v", lb)
	}
	if q, b := cfg.RateLimiter.ReadLimit(); q != 50 || b != 10 {
		t.Errorf("read limit = %v/%v", q, b)
	}
	if q, b := cfg.RateLimiter.WriteLimit(); q != 2.5 || b != 1 {
		t.Errorf("write limit = %v/%v", q, b)
	}
	if cfg.RateLimiter.ReadPerOperation() {
		t.Error("rateLimitReadScope process: reads limited per operation")
	}
	if cfg.InstanceCacheTTL != 2*time.Minute || cfg.LBDriftCheckPeriod != 0 || cfg.ReadLagWindow != 30*time.Second {
		t.Errorf("durations = %s, %s, %s; want 2m, 0s (off) and 30s", cfg.InstanceCacheTTL, cfg.LBDriftCheckPeriod, cfg.ReadLagWindow)
	}
}

// The upstream crash: a config without a loadBalancer section must work.
func TestLoadConfigMinimal(t *testing.T) {
	cfg, err := config.Load(strings.NewReader(configtest.Valid("")))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LoadBalancer.Disabled || cfg.LoadBalancer.SecurityListMode() != config.SecurityListModeNone {
		t.Errorf("loadBalancer defaults = %+v", cfg.LoadBalancer)
	}
	if q, b := cfg.RateLimiter.ReadLimit(); q != config.DefaultRateLimitQPS || b != config.DefaultRateLimitBucket {
		t.Errorf("read limit defaults = %v/%v", q, b)
	}
	if !cfg.RateLimiter.ReadPerOperation() {
		t.Error("reads are not limited per operation by default")
	}
	if cfg.InstanceCacheTTL != config.DefaultInstanceCacheTTL || cfg.LBDriftCheckPeriod != config.DefaultLBDriftCheckPeriod || cfg.LBDrainPeriod != 30*time.Second ||
		cfg.ReadLagWindow != cloudbase.DefaultReadLagWindow {
		t.Errorf("duration defaults = %s, %s, %s", cfg.InstanceCacheTTL, cfg.LBDriftCheckPeriod, cfg.ReadLagWindow)
	}
}

func TestLoadConfigKeyFileAndPassphrase(t *testing.T) {
	k := configtest.Key()
	//nolint:staticcheck // legacy encrypted PEM is what `openssl genrsa -aes128` writes, and the SDK reads it
	block, err := x509.EncryptPEMBlock(rand.Reader, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(k), []byte("open-sesame-1"), x509.PEMCipherAES128)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("auth:\n  region: us-ashburn-1\n  tenancy: %s\n  user: %s\n  fingerprint: %s\n  key_file: %s\n",
		configtest.Tenancy, configtest.User, configtest.Fingerprint(), path)
	tail := "compartment: " + configtest.Compartment + "\nvcn: " + configtest.VCN + "\n"
	for _, pass := range []string{"passphrase", "key_passphrase"} {
		if _, err := config.Load(strings.NewReader(base + "  " + pass + ": open-sesame-1\n" + tail)); err != nil {
			t.Errorf("%s: %v", pass, err)
		}
	}
	_, err = config.Load(strings.NewReader(base + "  passphrase: wrong-passphrase\n" + tail))
	if err == nil || !strings.Contains(err.Error(), "auth.key_file "+path) {
		t.Errorf("wrong passphrase: err = %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "wrong-passphrase") {
		t.Errorf("the passphrase leaked: %v", err)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []string // every fragment must appear
	}{
		{name: "nothing", file: "", want: []string{"auth.region: required", "auth.tenancy: required", "auth.user: required",
			"auth.key: required", "compartment: required", "vcn: required"}},
		{name: "bad shapes, all at once", file: `auth:
  region: ashburn
  tenancy: ocid1.user.oc1..x
  user: alice
  fingerprint: nope
  key: not a key
compartment: ocid1.vcn.oc1..x
vcn: vcn-1
endpoint: ftp://x
instanceCacheTTL: soon
lbDriftCheckPeriod: -1m
lbDrainPeriod: 2h
`, want: []string{"11 problems", `lbDrainPeriod "2h0m0s": must be at most 1h0m0s`, `instanceCacheTTL "soon"`, `lbDriftCheckPeriod "-1m"`, `auth.fingerprint "nope"`, `auth.region "ashburn"`, `auth.tenancy "ocid1.user.oc1..x"`, `auth.user "alice"`,
			`compartment "ocid1.vcn.oc1..x"`, `vcn "vcn-1"`, "auth.key: not a usable PEM RSA private key", `endpoint "ftp://x"`}},
		{name: "instance principals and a key", file: configtest.Valid("useInstancePrincipals: true\n"),
			want: []string{"useInstancePrincipals is true and an API key is configured (auth.user, auth.key, auth.fingerprint): choose one credential source"}},
		{name: "unknown keys suggest", file: configtest.Valid("subnet1: x\nloadBalancer:\n  Subnet_1: y\n  frobnicate: true\nVCN: z\n"),
			want: []string{`unknown key "subnet1" in the cloud config (did you mean loadBalancer.subnet1?)`,
				`unknown key "loadBalancer.Subnet_1" in the cloud config (did you mean loadBalancer.subnet1?)`,
				`unknown key "loadBalancer.frobnicate"`, `unknown key "VCN" in the cloud config (did you mean vcn?)`}},
		{name: "wrong types", file: configtest.Valid("loadBalancer:\n  disabled: yes-please\n  subnet1: 12\nrateLimiter:\n  rateLimitQPSRead: fast\n  rateLimitBucketRead: 1.5\n"),
			want: []string{"loadBalancer.disabled: must be true or false, got a string", "loadBalancer.subnet1: must be a string, got a number",
				"rateLimiter.rateLimitQPSRead: must be a number, got a string", "rateLimiter.rateLimitBucketRead: must be a whole number"}},
		{name: "read lag window too long", file: configtest.Valid("readLagWindow: 11m\n"), want: []string{`readLagWindow "11m0s": must be between 0s and 10m0s`}},
		{name: "section not a mapping", file: configtest.Valid("loadBalancer: true\n"), want: []string{"loadBalancer: must be a mapping"}},
		{name: "bad lb values", file: configtest.Valid("loadBalancer:\n  securityListManagementMode: Some\n  subnet2: " + configtest.Subnet + "\n  securityLists:\n    nope: also-nope\n"),
			want: []string{`securityListManagementMode "Some": must be None, Frontend or All`, "subnet2 is set without loadBalancer.subnet1",
				`securityLists: key "nope" must be a subnet OCID`}},
		{name: "negative rates", file: configtest.Valid("rateLimiter:\n  rateLimitQPSWrite: -1\n  rateLimitBucketWrite: -2\n"),
			want: []string{"rateLimiter.rateLimitQPSWrite -1: must be a positive", "rateLimiter.rateLimitBucketWrite -2: must be a positive"}},
		{name: "unknown read scope", file: configtest.Valid("rateLimiter:\n  rateLimitReadScope: tenancy\n"),
			want: []string{`rateLimiter.rateLimitReadScope "tenancy": must be "operation" (default) or "process"`}},
		{name: "wrong fingerprint", file: strings.Replace(configtest.Valid(""), configtest.Fingerprint(), "00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff", 1),
			want: []string{`auth.fingerprint "00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff": is not the fingerprint of auth.key (` + configtest.Fingerprint() + ")"}},
		{name: "key and key_file", file: strings.Replace(configtest.Valid(""), "  key: |", "  key_file: /etc/x\n  key: |", 1),
			want: []string{"auth.key and auth.key_file are both set"}},
		{name: "missing key file", file: strings.Replace(configtest.Valid(""), "  key: |\n"+configtest.Indent(configtest.PEM(), 4)+"\n", "  key_file: /nonexistent/key.pem\n", 1),
			want: []string{"auth.key_file /nonexistent/key.pem: open: no such file or directory"}},
		{name: "yaml syntax", file: "auth: [\n", want: []string{"parse cloud config"}},
		{name: "duplicate key", file: configtest.Valid("vcn: " + configtest.VCN + "\n"), want: []string{"parse cloud config", "vcn"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Load(strings.NewReader(tt.file))
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error does not contain %q:\n%s", w, msg)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines:\n%s", msg)
			}
			assertNoKey(t, msg)
		})
	}
}

// assertNoKey fails if any line of the test key appears in s.
func assertNoKey(t *testing.T, s string) {
	t.Helper()
	for line := range strings.SplitSeq(configtest.PEM(), "\n") {
		if len(line) > 20 && !strings.HasPrefix(line, "-----") && strings.Contains(s, line) {
			t.Fatalf("the private key leaked:\n%s", s)
		}
	}
}

func TestSecretsNeverPrinted(t *testing.T) {
	cfg, err := config.Load(strings.NewReader(configtest.Valid("")))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Auth.Passphrase = "hunter2-passphrase"
	j, _ := json.Marshal(cfg)
	for _, out := range []string{fmt.Sprintf("%v", cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%s %q %x", cfg.Auth.Key, cfg.Auth.Key, cfg.Auth.Key), string(j)} {
		assertNoKey(t, out)
		if strings.Contains(out, "hunter2") {
			t.Fatalf("passphrase leaked: %s", out)
		}
	}
	// A secret pasted into another key is scrubbed from the message.
	bad := strings.Replace(configtest.Valid(""), "region: us-ashburn-1", "region: hunter2-passphrase", 1)
	bad = strings.Replace(bad, "  key: |", "  passphrase: hunter2-passphrase\n  key: |", 1)
	_, err = config.Load(strings.NewReader(bad))
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("err = %v; want an error without the passphrase", err)
	}
	if !strings.Contains(err.Error(), "auth.region") {
		t.Errorf("err does not name auth.region: %v", err)
	}
}

// Instance principals: no key, region and tenancy optional, the
// endpoints only for tests and only with instance principals.
func TestLoadInstancePrincipals(t *testing.T) {
	base := "compartment: " + configtest.Compartment + "\nvcn: " + configtest.VCN + "\n"
	tests := []struct {
		name, file string
		want       []string // error fragments; none: valid
	}{
		{name: "minimal", file: "useInstancePrincipals: true\n" + base},
		{name: "old place", file: "auth:\n  useInstancePrincipals: true\n" + base},
		{name: "region, tenancy, endpoints", file: "useInstancePrincipals: true\nauth:\n  region: us-phoenix-1\n  tenancy: " + configtest.Tenancy +
			"\n  metadataEndpoint: http://127.0.0.1:9/opc/v2\n  federationEndpoint: http://127.0.0.1:9\n" + base},
		{name: "bad endpoints", file: "useInstancePrincipals: true\nauth:\n  region: nowhere\n  metadataEndpoint: ftp://x\n  federationEndpoint: http://127.0.0.1:9/v1/x509\n" + base,
			want: []string{`auth.region "nowhere"`, `auth.metadataEndpoint "ftp://x": scheme must be http or https`, `auth.federationEndpoint "http://127.0.0.1:9/v1/x509"`}},
		{name: "key file beside", file: "useInstancePrincipals: true\nauth:\n  key_file: /k.pem\n  passphrase_file: /p\n" + base,
			want: []string{"an API key is configured (auth.key_file, auth.passphrase_file)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Load(strings.NewReader(tt.file))
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; cfg %+v", cfg)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
	cfg := strings.Replace(configtest.Valid(""), "auth:\n", "auth:\n  metadataEndpoint: http://127.0.0.1:9/opc/v2\n", 1)
	if _, err := config.Load(strings.NewReader(cfg)); err == nil || !strings.Contains(err.Error(), "auth.metadataEndpoint is set but useInstancePrincipals is not") {
		t.Fatalf("metadataEndpoint with an API key: %v", err)
	}
}

// The files of a mounted Secret: key_file with fingerprint_file and
// passphrase_file, each checked at load.
func TestLoadKeyFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	keyFile := write("key.pem", configtest.PEM())
	fpFile := write("fingerprint", configtest.Fingerprint()+"\n")
	wrongFP := write("wrong", "00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff\n")
	pass := write("passphrase", "x\n")
	head := "auth:\n  region: us-ashburn-1\n  tenancy: " + configtest.Tenancy + "\n  user: " + configtest.User + "\n"
	tail := "compartment: " + configtest.Compartment + "\nvcn: " + configtest.VCN + "\n"
	tests := []struct {
		name, auth string
		want       string // "" = valid
	}{
		{"key and fingerprint files", "  key_file: " + keyFile + "\n  fingerprint_file: " + fpFile + "\n", ""},
		{"wrong fingerprint file", "  key_file: " + keyFile + "\n  fingerprint_file: " + wrongFP + "\n", "auth.fingerprint_file " + wrongFP + ` "00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff": is not the fingerprint of auth.key_file`},
		{"fingerprint twice", "  key_file: " + keyFile + "\n  fingerprint: " + configtest.Fingerprint() + "\n  fingerprint_file: " + fpFile + "\n", "auth.fingerprint and auth.fingerprint_file are both set"},
		{"fingerprint file, inline key", "  key: x\n  fingerprint_file: " + fpFile + "\n", "auth.fingerprint_file is set without auth.key_file"},
		{"missing fingerprint file", "  key_file: " + keyFile + "\n  fingerprint_file: /nonexistent/fp\n", "auth.fingerprint_file /nonexistent/fp"},
		{"passphrase file for an unencrypted key", "  key_file: " + keyFile + "\n  fingerprint_file: " + fpFile + "\n  passphrase_file: " + pass + "\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Load(strings.NewReader(head + tt.auth + tail))
			switch {
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}
