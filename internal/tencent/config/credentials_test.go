package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestCredentialSources: the source is the one whose keys are set, or
// credential_source; two at once, or settings of another source, are
// errors naming both; the role sources' settings get their defaults.
func TestCredentialSources(t *testing.T) {
	token := writeFile(t, "eyJhbGciOiJSUzI1NiJ9.e30.sig\n")
	empty := writeFile(t, "\n")
	const base = "region: ap-guangzhou\nvpc_id: vpc-aaaa1111\n"
	const key = "secret_id: id\nsecret_key: key\n"
	web := "web_identity_token_file: " + token + "\nweb_identity_role_arn: qcs::cam::uin/100000000001:roleName/ccm\nweb_identity_provider_id: cluster\n"
	tkeEnv := map[string]string{EnvTKEWebIdentityTokenFile: token, EnvTKERoleArn: "qcs::cam::uin/1:roleName/ccm", EnvTKEProviderID: "cls-1"}
	tests := []struct {
		name    string
		file    string
		env     map[string]string
		want    Config // the credential fields compared
		wantErr []string
	}{
		{name: "key", file: base + key, want: Config{CredentialSource: CredentialSourceKey}},
		{name: "cvm role by name", file: base + "cvm_role_name: ccm-node\n",
			want: Config{CredentialSource: CredentialSourceCVMRole, CVMRoleName: "ccm-node", MetadataEndpoint: DefaultMetadataEndpoint}},
		{name: "cvm role discovered", file: base + "credential_source: cvm-role\nmetadata_endpoint: http://127.0.0.1:9/\n",
			want: Config{CredentialSource: CredentialSourceCVMRole, MetadataEndpoint: "http://127.0.0.1:9"}},
		{name: "web identity", file: base + web, want: Config{
			CredentialSource: CredentialSourceWebIdentity, WebIdentityTokenFile: token,
			WebIdentityRoleArn: "qcs::cam::uin/100000000001:roleName/ccm", WebIdentityProviderID: "cluster",
			WebIdentitySessionName: DefaultWebIdentitySessionName, WebIdentityDuration: DefaultWebIdentityDuration, STSEndpoint: DefaultSTSEndpoint,
		}},
		{name: "web identity from TKE's environment", file: base, env: tkeEnv, want: Config{
			CredentialSource: CredentialSourceWebIdentity, WebIdentityTokenFile: token,
			WebIdentityRoleArn: "qcs::cam::uin/1:roleName/ccm", WebIdentityProviderID: "cls-1",
			WebIdentitySessionName: DefaultWebIdentitySessionName, WebIdentityDuration: DefaultWebIdentityDuration, STSEndpoint: DefaultSTSEndpoint,
		}},
		{name: "the CCM's env wins over TKE's", file: base + "web_identity_duration: 30m\nsts_endpoint: http://127.0.0.1:8080\n",
			env: map[string]string{EnvTKEWebIdentityTokenFile: token, EnvTKERoleArn: "qcs::cam::uin/1:roleName/tke", EnvWebIdentityRoleArn: "qcs::cam::uin/1:roleName/ccm", EnvTKEProviderID: "cls-1"},
			want: Config{
				CredentialSource: CredentialSourceWebIdentity, WebIdentityTokenFile: token,
				WebIdentityRoleArn: "qcs::cam::uin/1:roleName/ccm", WebIdentityProviderID: "cls-1",
				WebIdentitySessionName: DefaultWebIdentitySessionName, WebIdentityDuration: 30 * time.Minute, STSEndpoint: "http://127.0.0.1:8080",
			}},
		{name: "credential_source ignores TKE's injected env", file: base + key + "credential_source: key\n", env: tkeEnv,
			want: Config{CredentialSource: CredentialSourceKey}},

		{name: "key and TKE env without a choice", file: base + key, env: tkeEnv, wantErr: []string{
			"two credential sources are configured: secret_id/secret_key (credential source key) and web_identity_token_file (from TKE_WEB_IDENTITY_TOKEN_FILE), web_identity_role_arn (from TKE_ROLE_ARN), web_identity_provider_id (from TKE_PROVIDER_ID) (credential source web-identity)",
		}},
		{name: "key and cvm role", file: base + key + "cvm_role_name: ccm-node\n", wantErr: []string{
			"two credential sources are configured: secret_id/secret_key (credential source key) and cvm_role_name (credential source cvm-role)",
		}},
		{name: "chosen source and another's keys", file: base + "credential_source: cvm-role\n" + key, wantErr: []string{
			"credential_source cvm-role, but secret_id/secret_key (credential source key) is set too",
		}},
		{name: "chosen web identity and an own-config cvm role", file: base + web + "credential_source: web-identity\ncvm_role_name: x\n", wantErr: []string{
			"credential_source web-identity, but cvm_role_name (credential source cvm-role) is set too",
		}},
		{name: "unknown source", file: base + "credential_source: instance\n", wantErr: []string{
			`credential_source "instance": must be key, cvm-role or web-identity`,
		}},
		{name: "half a key", file: base + "secret_id: id\n", wantErr: []string{"secret_key: required"}},
		{name: "settings of another source", file: base + key + "metadata_endpoint: http://x\nsts_endpoint: http://y\n", wantErr: []string{
			"metadata_endpoint is for credential source cvm-role, not key", "sts_endpoint is for credential source web-identity, not key",
		}},
		{name: "web identity incomplete", file: base + "web_identity_role_arn: arn:x\n", wantErr: []string{
			"web_identity_token_file: required with credential source web-identity",
			"web_identity_provider_id: required with credential source web-identity",
			`web_identity_role_arn "arn:x": must look like qcs::cam::uin/<account uin>:roleName/<role name>`,
		}},
		{name: "web identity bad values", file: base + strings.Replace(web, token, empty, 1) + "web_identity_duration: 13h\nweb_identity_session_name: a b\nsts_endpoint: sts\n", wantErr: []string{
			"web_identity_token_file " + empty + ": file is empty",
			`web_identity_duration "13h": must be at most 12h`,
			`web_identity_session_name "a b": must be 2-128 letters`,
			`sts_endpoint "sts": must be a URL`,
		}},
		{name: "bad role name", file: base + "cvm_role_name: 'a role'\n", wantErr: []string{`cvm_role_name "a role": must be a CAM role name`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(strings.NewReader(tt.file), envOf(tt.env))
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("no error, want %q", tt.wantErr)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %v\nlacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := Config{
				CredentialSource: cfg.CredentialSource, CVMRoleName: cfg.CVMRoleName, MetadataEndpoint: cfg.MetadataEndpoint,
				WebIdentityTokenFile: cfg.WebIdentityTokenFile, WebIdentityRoleArn: cfg.WebIdentityRoleArn,
				WebIdentityProviderID: cfg.WebIdentityProviderID, WebIdentitySessionName: cfg.WebIdentitySessionName,
				WebIdentityDuration: cfg.WebIdentityDuration, STSEndpoint: cfg.STSEndpoint,
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
