package oci

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// AddFlags defines the OCI dialect's command-line flags on fs, writing
// into o; call the returned function once fs is parsed.
func (o *Options) AddFlags(fs *flag.FlagSet) core.FinishFlags {
	fs.StringVar(&o.Region, "oci-region", DefaultRegion, "OCI region played by the OCI API")
	keys := keyFlag{}
	fs.Var(keys, "oci-key", "accepted OCI API key, <tenancy OCID>/<user OCID>/<fingerprint>=PUBLIC_KEY_PEM_FILE (repeatable)")
	iam := fs.String("oci-iam", "", "YAML or JSON OCI IAM setup: groups, dynamicGroups, policies, compartmentNames (a principal in no group has full access)")
	network := fs.String("oci-network", "", "YAML or JSON OCI network seed: compartments, availabilityDomains, vcns, subnets, securityLists")
	fs.IntVar(&o.LBLimits.BackendsPerSet, "oci-lb-backends-per-set", DefaultLBLimits.BackendsPerSet, "backends per OCI load balancer backend set")
	fs.IntVar(&o.LBLimits.Backends, "oci-lb-backends", DefaultLBLimits.Backends, "backends per OCI load balancer, across its backend sets")
	fs.IntVar(&o.NLBLimits.BackendsPerSet, "oci-nlb-backends-per-set", DefaultNLBLimits.BackendsPerSet, "backends per OCI network load balancer backend set")
	fs.IntVar(&o.NLBLimits.Backends, "oci-nlb-backends", DefaultNLBLimits.Backends, "backends per OCI network load balancer, across its backend sets")
	fs.BoolVar(&o.FixedShapes, "oci-fixed-shapes", false, "play an OCI tenancy created before May 2023, which may still create the fixed LB shapes (10Mbps, 100Mbps, 400Mbps, 8000Mbps); by default only flexible")
	fs.DurationVar(&o.TerminatedRetention, "oci-terminated-retention", DefaultTerminatedRetention, "how long a terminated OCI instance stays visible as TERMINATED (0: it disappears with --terminated-linger, then GetInstance answers 404)")
	fs.DurationVar(&o.WorkRequestLatency, "oci-work-request-latency", DefaultWorkRequestLatency, "how long each OCI load balancer work request runs (0: done before the call returns)")
	fs.DurationVar(&o.SecurityTokenLifetime, "oci-security-token-lifetime", DefaultSecurityTokenLifetime, "how long the security tokens the OCI federation endpoint issues to instance principals are valid")
	return func(func(string) string) error {
		if len(keys) > 0 {
			o.Keys = keys
		}
		if min(o.LBLimits.BackendsPerSet, o.LBLimits.Backends, o.NLBLimits.BackendsPerSet, o.NLBLimits.Backends) < 1 {
			return errors.New("--oci-lb-backends-per-set, --oci-lb-backends, --oci-nlb-backends-per-set and --oci-nlb-backends must be at least 1")
		}
		if o.WorkRequestLatency == 0 {
			o.WorkRequestLatency = -1 // Options: negative means instant, 0 the default
		}
		if o.TerminatedRetention == 0 {
			o.TerminatedRetention = -1 // Options: negative means none, 0 the default
		}
		if *network != "" {
			seed, err := loadNetworkSeed(*network)
			if err != nil {
				return err
			}
			o.Network = seed
		}
		if *iam != "" {
			raw, err := os.ReadFile(*iam)
			if err != nil {
				return fmt.Errorf("--oci-iam: %w", err)
			}
			if err := yaml.UnmarshalStrict(raw, &o.IAM); err != nil {
				return fmt.Errorf("--oci-iam %s: %w", *iam, err)
			}
		}
		return nil // New checks the keys, the network seed and IAM
	}
}

// keyFlag is a repeatable --oci-key keyId=PUBLIC_KEY_FILE flag: the keyId
// "<tenancy OCID>/<user OCID>/<fingerprint>" and a PEM RSA public key file.
type keyFlag map[string]string

func (k keyFlag) String() string { return strings.Join(slices.Sorted(maps.Keys(k)), ",") }

func (k keyFlag) Set(s string) error {
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

// loadNetworkSeed reads a YAML or JSON OCI network seed file.
func loadNetworkSeed(path string) (NetworkSeed, error) {
	var seed NetworkSeed
	raw, err := os.ReadFile(path)
	if err != nil {
		return seed, fmt.Errorf("--oci-network: %w", err)
	}
	if err := yaml.UnmarshalStrict(raw, &seed); err != nil {
		return seed, fmt.Errorf("--oci-network %s: %w", path, err)
	}
	return seed, nil
}
