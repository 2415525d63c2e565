package tencentcloud

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/ccmkit/ccm/internal/tencent/config"
)

// TestDeployExamplesLoad: every Tencent example config in deploy/ loads,
// and selects the credential source its file name promises.
func TestDeployExamplesLoad(t *testing.T) {
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("eyJhbGciOiJSUzI1NiJ9.e30.c2ln"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys := t.TempDir()
	tests := []struct {
		file, source string
	}{
		{"secret-tencentcloud.example.yaml", config.CredentialSourceKey},
		{"secret-tencentcloud-cvm-role.example.yaml", config.CredentialSourceCVMRole},
		{"secret-tencentcloud-web-identity.example.yaml", config.CredentialSourceWebIdentity},
	}
	for _, tt := range tests {
		raw, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(raw), "\n---\n")
		var secret corev1.Secret
		if err := yaml.Unmarshal([]byte(first), &secret); err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		// The files the Secret mounts at /etc/ccm, and the projected token,
		// where this test can read them.
		for name, v := range secret.StringData {
			if err := os.WriteFile(filepath.Join(keys, name), []byte(v), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		cloudYAML := strings.NewReplacer("/etc/ccm/", keys+"/", "/var/run/secrets/tencentcloud/token", token).Replace(secret.StringData["cloud.yaml"])
		cfg, err := config.Load(strings.NewReader(cloudYAML), func(string) string { return "" })
		if err != nil {
			t.Errorf("%s: %v", tt.file, err)
			continue
		}
		if cfg.CredentialSource != tt.source {
			t.Errorf("%s: credential source %q, want %q", tt.file, cfg.CredentialSource, tt.source)
		}
	}
}
