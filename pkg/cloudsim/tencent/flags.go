package tencent

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// AddFlags defines the Tencent dialect's command-line flags on fs, writing
// into o; call the returned function once fs is parsed.
func (o *CloudOptions) AddFlags(fs *flag.FlagSet) core.FinishFlags {
	creds := fs.String("credentials", "", "accepted Tencent credentials, SecretId:SecretKey[,SecretId:SecretKey] (default $CLOUDSIM_CREDENTIALS)")
	var policies []string
	fs.Func("cam-policy", "attach a CAM policy file to a subject, <SecretId or role/RoleName>=<file> (repeatable; a subject without one has full access)", func(v string) error {
		policies = append(policies, v)
		return nil
	})
	sgSeed := fs.String("security-groups", "", "YAML or JSON Tencent security group seed: {\"securityGroups\": [...]}, loaded before --seed")
	fs.DurationVar(&o.TaskLatency, "task-latency", DefaultTaskLatency, "how long each asynchronous CLB task runs (0: done before the call returns)")
	fs.IntVar(&o.CLBQuotaOpen, "clb-quota-open", DefaultCLBQuota, "OPEN (public) load balancers allowed per region")
	fs.IntVar(&o.CLBQuotaInternal, "clb-quota-internal", DefaultCLBQuota, "INTERNAL load balancers allowed per region")
	fs.IntVar(&o.CLBTargetQuota, "clb-target-quota", DefaultTargetQuota, "targets per CLB listener (TOTAL_TARGET_BIND_QUOTA; a ticket raises it on Tencent Cloud)")
	fs.IntVar(&o.CLBDeleteFrequencyLimit, "clb-delete-frequency-limit", DefaultDeleteFrequencyLimit, "DeleteLoadBalancer refuses (FailedOperation.FrequencyCheckRisk) the deletion that makes this many load balancers deleted in a region within --clb-delete-frequency-window")
	fs.DurationVar(&o.CLBDeleteFrequencyWindow, "clb-delete-frequency-window", DefaultDeleteFrequencyWindow, "the sliding window of --clb-delete-frequency-limit")
	metadataRole := fs.String("metadata-role", "", "a CAM role, NAME[:SESSION-SECONDS], bound to the instance the metadata service (/latest/meta-data/) answers for: its temporary credentials last SESSION-SECONDS (default 7200)")
	fs.BoolVar(&o.CLBNullHealthCheckFields, "clb-null-health-check-fields", false, "DescribeListeners answers null for every health check field the SDK says may be null, whatever the check type")
	return func(getenv func(string) string) error {
		credSrc := "--credentials"
		if *creds == "" {
			*creds, credSrc = getenv("CLOUDSIM_CREDENTIALS"), "CLOUDSIM_CREDENTIALS"
		}
		credentials, err := ParseCredentials(*creds)
		if err != nil {
			return fmt.Errorf("%s: %w", credSrc, err)
		}
		o.Credentials = credentials
		if o.CLBQuotaOpen < 1 || o.CLBQuotaInternal < 1 || o.CLBTargetQuota < 1 {
			return errors.New("--clb-quota-open, --clb-quota-internal and --clb-target-quota must be at least 1")
		}
		if o.CLBDeleteFrequencyLimit < 1 || o.CLBDeleteFrequencyWindow <= 0 {
			return errors.New("--clb-delete-frequency-limit must be at least 1 and --clb-delete-frequency-window positive")
		}
		if o.TaskLatency == 0 {
			o.TaskLatency = -1 // CloudOptions: negative means instant, 0 the default
		}
		for _, p := range policies {
			subject, path, ok := strings.Cut(p, "=")
			if !ok || subject == "" || path == "" {
				return fmt.Errorf("--cam-policy %q: want <subject>=<file>", p)
			}
			doc, err := os.ReadFile(path)
			if err != nil {
				return fmt.Errorf("--cam-policy: %w", err)
			}
			if o.Policies == nil {
				o.Policies = map[string][]json.RawMessage{}
			}
			o.Policies[subject] = append(o.Policies[subject], doc)
		}
		if *metadataRole != "" {
			role, err := parseMetadataRole(*metadataRole)
			if err != nil {
				return fmt.Errorf("--metadata-role: %w", err)
			}
			o.Roles, o.MetadataRole = append(o.Roles, role), role.Name
		}
		if *sgSeed != "" {
			if o.SecurityGroups, err = LoadSecurityGroups(*sgSeed); err != nil {
				return fmt.Errorf("--security-groups: %w", err)
			}
		}
		return nil
	}
}

// ParseCredentials parses "id:key[,id:key]". Errors never include a key.
func ParseCredentials(s string) (map[string]string, error) {
	out := map[string]string{}
	for i, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		id, key, ok := strings.Cut(pair, ":")
		id, key = strings.TrimSpace(id), strings.TrimSpace(key)
		if !ok || id == "" || key == "" {
			return nil, fmt.Errorf("credential %d is not of the form SecretId:SecretKey", i+1)
		}
		out[id] = key
	}
	return out, nil
}

// parseMetadataRole parses NAME[:SESSION-SECONDS].
func parseMetadataRole(s string) (Role, error) {
	name, secs, hasSecs := strings.Cut(strings.TrimSpace(s), ":")
	r := Role{Name: name}
	if hasSecs {
		n, err := strconv.ParseInt(secs, 10, 64)
		if err != nil || n < 1 {
			return Role{}, fmt.Errorf("session seconds %q: want a positive integer", secs)
		}
		r.SessionDurationSeconds = n
	}
	if !roleNamePattern.MatchString(r.Name) {
		return Role{}, fmt.Errorf("role name %q: want 1-128 letters, digits or +=,.@_-", r.Name)
	}
	return r, nil
}

// SecurityGroupSeed is a security group seed file: {"securityGroups":
// [...]} (a bare list is accepted too).
type SecurityGroupSeed struct {
	SecurityGroups []SecurityGroup `json:"securityGroups"`
}

// LoadSecurityGroups reads a YAML or JSON security group seed file.
func LoadSecurityGroups(path string) ([]SecurityGroup, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("security groups: %w", err)
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("security groups %s: %w: %v", path, core.ErrInvalid, err)
	}
	var list []SecurityGroup
	if err := yaml.UnmarshalStrict(js, &list); err == nil {
		return list, nil
	}
	var seed SecurityGroupSeed
	if err := yaml.UnmarshalStrict(js, &seed); err != nil {
		return nil, fmt.Errorf("security groups %s: %w: %v", path, core.ErrInvalid, err)
	}
	return seed.SecurityGroups, nil
}
