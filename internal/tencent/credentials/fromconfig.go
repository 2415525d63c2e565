package credentials

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/ccmkit/ccm/internal/tencent/config"
)

// FromConfig returns the source the config names (config.Load has
// checked it). transport carries STS calls.
func FromConfig(cfg *config.Config, transport http.RoundTripper) (Source, error) {
	switch cfg.CredentialSource {
	case config.CredentialSourceCVMRole:
		return CVMRole{Endpoint: strings.TrimSuffix(cfg.MetadataEndpoint, "/"), RoleName: cfg.CVMRoleName}, nil
	case config.CredentialSourceWebIdentity:
		host, scheme, err := config.ParseEndpoint(cfg.STSEndpoint)
		if err != nil {
			return nil, fmt.Errorf("sts_endpoint %q: %w", cfg.STSEndpoint, err)
		}
		return WebIdentity{
			Region: cfg.Region, TokenFile: cfg.WebIdentityTokenFile,
			RoleArn: cfg.WebIdentityRoleArn, ProviderID: cfg.WebIdentityProviderID, Session: cfg.WebIdentitySessionName,
			Duration: cfg.WebIdentityDuration, Endpoint: host, Scheme: scheme, Transport: transport,
		}, nil
	case config.CredentialSourceKey, "": // "": a Config built in code, with a key
		id := KeyPart{Value: string(cfg.SecretID), File: cfg.SecretIDFile}
		key := KeyPart{Value: string(cfg.SecretKey), File: cfg.SecretKeyFile}
		if id.File == "" && key.File == "" {
			return Static{SecretID: id.Value, SecretKey: key.Value}, nil
		}
		return KeyFiles{SecretID: id, SecretKey: key}, nil
	}
	return nil, fmt.Errorf("credential_source %q: must be %s, %s or %s", cfg.CredentialSource,
		config.CredentialSourceKey, config.CredentialSourceCVMRole, config.CredentialSourceWebIdentity)
}
