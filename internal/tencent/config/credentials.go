package config

import (
	"errors"
	"regexp"
	"strings"
	"time"

	"github.com/ccmkit/ccm/internal/cloudconfig"
)

// Credential sources, the values of credential_source.
const (
	// CredentialSourceKey: an API key pair (secret_id, secret_key). When
	// either comes from a file, the files are re-read when they change.
	CredentialSourceKey = "key"
	// CredentialSourceCVMRole: the CAM role bound to the instance, whose
	// temporary credentials the metadata service hands out.
	CredentialSourceCVMRole = "cvm-role"
	// CredentialSourceWebIdentity: a projected ServiceAccount token
	// exchanged at STS AssumeRoleWithWebIdentity for a role's temporary
	// credentials (the OIDC pattern TKE documents for workloads).
	CredentialSourceWebIdentity = "web-identity"
)

// Environment variables of the credential settings. The TKE_* names are
// what TKE's pod identity webhook injects into a Pod whose ServiceAccount
// is annotated with a role (and what the SDK's
// DefaultTkeOIDCRoleArnProvider reads); they rank below the CCM's own.
const (
	EnvCredentialSource       = envPrefix + "CREDENTIAL_SOURCE"
	EnvCVMRoleName            = envPrefix + "CVM_ROLE_NAME"
	EnvMetadataEndpoint       = envPrefix + "METADATA_ENDPOINT"
	EnvWebIdentityTokenFile   = envPrefix + "WEB_IDENTITY_TOKEN_FILE"
	EnvWebIdentityRoleArn     = envPrefix + "WEB_IDENTITY_ROLE_ARN"
	EnvWebIdentityProviderID  = envPrefix + "WEB_IDENTITY_PROVIDER_ID"
	EnvWebIdentitySessionName = envPrefix + "WEB_IDENTITY_SESSION_NAME"
	EnvWebIdentityDuration    = envPrefix + "WEB_IDENTITY_DURATION"
	EnvSTSEndpoint            = envPrefix + "STS_ENDPOINT"

	EnvTKEWebIdentityTokenFile = "TKE_WEB_IDENTITY_TOKEN_FILE"
	EnvTKEIdentityTokenFile    = "TKE_IDENTITY_TOKEN_FILE"
	EnvTKERoleArn              = "TKE_ROLE_ARN"
	EnvTKEProviderID           = "TKE_PROVIDER_ID"
)

// Defaults of the credential settings.
const (
	// DefaultMetadataEndpoint is the instance metadata service
	// (tencentcloud-sdk-go common/cvm_role_provider.go).
	DefaultMetadataEndpoint = "http://metadata.tencentyun.com"
	// DefaultSTSEndpoint is STS's API endpoint (AssumeRoleWithWebIdentity
	// reference: "Domain name for API request: sts.tencentcloudapi.com").
	DefaultSTSEndpoint = "https://sts.tencentcloudapi.com"
	// DefaultWebIdentitySessionName names the CCM's role sessions.
	DefaultWebIdentitySessionName = "ccmkit-cloud-controller-manager"
	// DefaultWebIdentityDuration is STS's documented default
	// DurationSeconds, 7,200 s.
	DefaultWebIdentityDuration = 2 * time.Hour
	// MaxWebIdentityDuration is the documented maximum, 43,200 s.
	MaxWebIdentityDuration = 12 * time.Hour
)

var (
	// roleNamePattern: CAM role names (CreateRole: letters, digits and
	// +=,.@_-).
	roleNamePattern = regexp.MustCompile(`^[\w+=,.@-]{1,128}$`)
	// roleArnPattern: qcs::cam::uin/<uin>:roleName/<name>, or :role/<id>.
	roleArnPattern = regexp.MustCompile(`^qcs::cam::uin/[0-9]+:(roleName|role)/\S+$`)
	// sessionNamePattern: RoleSessionName "[\w+=,.@-]*", 2-128 characters
	// (STS AssumeRole reference).
	sessionNamePattern = regexp.MustCompile(`^[\w+=,.@-]{2,128}$`)
)

// credentialSettings reads credential_source and the settings of the
// role sources, and decides the source. keySet says whether any part of
// the key pair was given. Two sources configured at once is an error
// naming both, unless credential_source picks one: then only TKE's
// injected environment may name another (it is ignored), since a webhook,
// not the CCM's own config, put it there.
func (l *loader) credentialSettings(file map[string]string, cfg *Config, keySet bool) {
	source := l.plain(file, "credential_source", EnvCredentialSource)
	roleName := l.plain(file, "cvm_role_name", EnvCVMRoleName)
	metadata := l.plain(file, "metadata_endpoint", EnvMetadataEndpoint)
	tokenFile := l.firstOf(file, "web_identity_token_file", EnvWebIdentityTokenFile, EnvTKEWebIdentityTokenFile, EnvTKEIdentityTokenFile)
	roleArn := l.firstOf(file, "web_identity_role_arn", EnvWebIdentityRoleArn, EnvTKERoleArn)
	providerID := l.firstOf(file, "web_identity_provider_id", EnvWebIdentityProviderID, EnvTKEProviderID)
	session := l.plain(file, "web_identity_session_name", EnvWebIdentitySessionName)
	duration := l.plain(file, "web_identity_duration", EnvWebIdentityDuration)
	sts := l.plain(file, "sts_endpoint", EnvSTSEndpoint)

	web := []sourced{tokenFile, roleArn, providerID}
	configured := map[string]string{} // source -> the keys that name it, for messages
	if keySet {
		configured[CredentialSourceKey] = "secret_id/secret_key"
	}
	if roleName.value != "" {
		configured[CredentialSourceCVMRole] = "cvm_role_name" + roleName.suffix()
	}
	var webKeys, webOwn []string
	for i, v := range web {
		if v.value == "" {
			continue
		}
		name := []string{"web_identity_token_file", "web_identity_role_arn", "web_identity_provider_id"}[i] + v.suffix()
		webKeys = append(webKeys, name)
		if !strings.HasPrefix(v.from, "TKE_") {
			webOwn = append(webOwn, name)
		}
	}
	if len(webKeys) > 0 {
		configured[CredentialSourceWebIdentity] = strings.Join(webKeys, ", ")
	}

	switch s := strings.ToLower(source.value); s {
	case "":
		l.inferSource(cfg, configured)
	case CredentialSourceKey, CredentialSourceCVMRole, CredentialSourceWebIdentity:
		cfg.CredentialSource = s
		for _, other := range []string{CredentialSourceKey, CredentialSourceCVMRole, CredentialSourceWebIdentity} {
			keys, ok := configured[other]
			if other == s || !ok || (other == CredentialSourceWebIdentity && len(webOwn) == 0) {
				continue
			}
			l.Addf("credential_source %s%s, but %s (credential source %s) is set too: set the keys of one source only",
				s, source.suffix(), keys, other)
		}
	default:
		l.Addf("credential_source %q%s: must be %s, %s or %s", source.value, source.suffix(),
			CredentialSourceKey, CredentialSourceCVMRole, CredentialSourceWebIdentity)
	}

	// Settings of one source are refused with another: a metadata
	// endpoint that is never asked is a mistake worth naming.
	only := func(v sourced, key, want string) {
		if v.value != "" && cfg.CredentialSource != "" && cfg.CredentialSource != want {
			l.Addf("%s%s is for credential source %s, not %s", key, v.suffix(), want, cfg.CredentialSource)
		}
	}
	only(metadata, "metadata_endpoint", CredentialSourceCVMRole)
	only(session, "web_identity_session_name", CredentialSourceWebIdentity)
	only(duration, "web_identity_duration", CredentialSourceWebIdentity)
	only(sts, "sts_endpoint", CredentialSourceWebIdentity)

	switch cfg.CredentialSource {
	case CredentialSourceCVMRole:
		cfg.CVMRoleName = roleName.value
		if roleName.value != "" && !roleNamePattern.MatchString(roleName.value) {
			l.Addf("cvm_role_name %q%s: must be a CAM role name (letters, digits and +=,.@_-)", roleName.value, roleName.suffix())
		}
		cfg.MetadataEndpoint = l.endpoint(metadata, "metadata_endpoint", DefaultMetadataEndpoint)
	case CredentialSourceWebIdentity:
		l.webIdentity(cfg, tokenFile, roleArn, providerID, session, duration, sts)
	}
}

// inferSource picks the one source configured.
func (l *loader) inferSource(cfg *Config, configured map[string]string) {
	var names []string
	for _, s := range []string{CredentialSourceKey, CredentialSourceCVMRole, CredentialSourceWebIdentity} {
		if keys, ok := configured[s]; ok {
			names = append(names, keys+" (credential source "+s+")")
			cfg.CredentialSource = s
		}
	}
	switch {
	case len(names) > 1:
		cfg.CredentialSource = ""
		l.Addf("two credential sources are configured: %s: set the keys of one source only, or credential_source",
			strings.Join(names, " and "))
	case len(names) == 0 && !l.fileUnparsed:
		l.Addf("credentials: required: set secret_id and secret_key (or their _file variants), "+
			"credential_source %s (with cvm_role_name optional), or web_identity_token_file, web_identity_role_arn "+
			"and web_identity_provider_id (see docs/credentials.md)", CredentialSourceCVMRole)
	}
}

// webIdentity checks the web-identity settings: all three of the token
// file (readable now), the role ARN and the provider id.
func (l *loader) webIdentity(cfg *Config, tokenFile, roleArn, providerID, session, duration, sts sourced) {
	cfg.WebIdentityTokenFile, cfg.WebIdentityRoleArn, cfg.WebIdentityProviderID = tokenFile.value, roleArn.value, providerID.value
	for _, v := range []struct {
		sourced
		key, env string
	}{
		{tokenFile, "web_identity_token_file", EnvWebIdentityTokenFile},
		{roleArn, "web_identity_role_arn", EnvWebIdentityRoleArn},
		{providerID, "web_identity_provider_id", EnvWebIdentityProviderID},
	} {
		if v.value == "" {
			l.Addf("%s: required with credential source %s (set %s in the cloud config or %s)", v.key, CredentialSourceWebIdentity, v.key, v.env)
		}
	}
	if tokenFile.value != "" {
		if _, err := readToken(tokenFile.value); err != nil {
			l.Addf("web_identity_token_file %s%s: %v", tokenFile.value, tokenFile.suffix(), err)
		}
	}
	if roleArn.value != "" && !roleArnPattern.MatchString(roleArn.value) {
		l.Addf("web_identity_role_arn %q%s: must look like qcs::cam::uin/<account uin>:roleName/<role name>", roleArn.value, roleArn.suffix())
	}
	cfg.WebIdentitySessionName = session.value
	if cfg.WebIdentitySessionName == "" {
		cfg.WebIdentitySessionName = DefaultWebIdentitySessionName
	} else if !sessionNamePattern.MatchString(session.value) {
		l.Addf("web_identity_session_name %q%s: must be 2-128 letters, digits or +=,.@_-", session.value, session.suffix())
	}
	cfg.WebIdentityDuration = l.duration(duration, "web_identity_duration", DefaultWebIdentityDuration, time.Second,
		`must be a duration like "2h" or "30m", at most 12h`)
	if cfg.WebIdentityDuration > MaxWebIdentityDuration {
		l.Addf("web_identity_duration %q%s: must be at most 12h (STS's maximum)", duration.value, duration.suffix())
	}
	cfg.STSEndpoint = l.endpoint(sts, "sts_endpoint", DefaultSTSEndpoint)
}

// endpoint checks an endpoint override (scheme://host[:port]), or returns
// def when unset.
func (l *loader) endpoint(v sourced, key, def string) string {
	if v.value == "" {
		return def
	}
	if _, _, err := parseEndpoint(v.value); err != nil {
		l.Addf("%s %q%s: %v", key, v.value, v.suffix(), err)
	}
	return strings.TrimSuffix(v.value, "/")
}

// firstOf resolves a setting from several environment variables, in
// order, then the file.
func (l *loader) firstOf(file map[string]string, key string, envs ...string) sourced {
	for _, env := range envs {
		if v := strings.TrimSpace(l.getenv(env)); v != "" {
			return sourced{value: v, from: env}
		}
	}
	return sourced{value: file[key]}
}

// maxTokenSize bounds a web identity token file: a ServiceAccount token is
// a few kilobytes.
const maxTokenSize = 64 << 10

// readToken reads a web identity token file: a regular file (the kubelet's
// symlinks are followed), not empty.
func readToken(path string) (string, error) {
	data, err := cloudconfig.ReadSmallFile(path, maxTokenSize, "a token")
	if err != nil {
		return "", err
	}
	token := strings.TrimSpace(data)
	if token == "" {
		return "", errors.New("file is empty")
	}
	return token, nil
}

// ReadWebIdentityToken reads the token file the way Load checks it: the
// credentials package re-reads it at every refresh.
func ReadWebIdentityToken(path string) (string, error) { return readToken(path) }
