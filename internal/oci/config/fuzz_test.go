package config_test

import (
	"strings"
	"testing"

	"github.com/ccmkit/ccm/internal/oci/config"
)

// FuzzLoadConfig: any cloud-provider.yaml is loaded or refused with an
// error; never a panic, and the passphrase never appears in the error.
func FuzzLoadConfig(f *testing.F) {
	f.Add("compartment: ocid1.compartment.oc1..a\nvcn: ocid1.vcn.oc1..b\nauth:\n  region: us-ashburn-1\n  passphrase: fuzz-secret-passphrase\n")
	f.Add("useInstancePrincipals: true\n")
	f.Add("loadBalancer: {securityListManagementMode: Sometimes}\n")
	f.Add("rateLimiter: {rateLimitQPSRead: -1}\n")
	f.Add("{")
	f.Fuzz(func(t *testing.T, doc string) {
		_, err := config.Load(strings.NewReader(doc))
		// Only a passphrase given as one is a secret (the fuzzer also puts
		// the marker in anchors or keys, which a YAML error may quote).
		if err != nil && strings.Contains(doc, "  passphrase: fuzz-secret-passphrase\n") && strings.Contains(err.Error(), "fuzz-secret-passphrase") {
			t.Fatalf("the error shows the passphrase: %v", err)
		}
	})
}
