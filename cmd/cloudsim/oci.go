package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/ccmkit/ccm/pkg/cloudsim"
	"sigs.k8s.io/yaml"
)

// ociKeys is a repeatable --oci-key keyId=PUBLIC_KEY_FILE flag: the keyId
// "<tenancy OCID>/<user OCID>/<fingerprint>" and a PEM RSA public key file.
type ociKeys map[string]string

func (k ociKeys) String() string {
	ids := make([]string, 0, len(k))
	for id := range k {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return strings.Join(ids, ",")
}

func (k ociKeys) Set(s string) error {
	id, path, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(id) == "" || strings.TrimSpace(path) == "" {
		return fmt.Errorf("want <tenancy>/<user>/<fingerprint>=PUBLIC_KEY_FILE, got %q", s)
	}
	raw, err := os.ReadFile(strings.TrimSpace(path))
	if err != nil {
		return fmt.Errorf("OCI key %s: %w", id, err)
	}
	k[strings.TrimSpace(id)] = string(raw)
	return nil
}

// loadOCINetwork reads a YAML or JSON OCI network seed file.
func loadOCINetwork(path string) (cloudsim.OCINetworkSeed, error) {
	var seed cloudsim.OCINetworkSeed
	raw, err := os.ReadFile(path)
	if err != nil {
		return seed, fmt.Errorf("--oci-network: %w", err)
	}
	if err := yaml.UnmarshalStrict(raw, &seed); err != nil {
		return seed, fmt.Errorf("--oci-network %s: %w", path, err)
	}
	return seed, nil
}
