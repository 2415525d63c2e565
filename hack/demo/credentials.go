package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ccmkit/ccm/deploy"
	"github.com/ccmkit/ccm/internal/cloudpolicy/cam"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// The Tencent demo's credentials: keyless by default, as production
// should run (docs/credentials.md).
const (
	credentialsCVMRole = "cvm-role"
	credentialsKey     = "key"
	// demoRoleName is the CAM role bound to the demo's "CVM": cloudsim's
	// metadata service hands out its temporary credentials.
	demoRoleName = "ccm-demo-node"
)

// tencentCredentials is --credentials.
var tencentCredentials = credentialsCVMRole

// demoRole is the role, with a one-hour session (the CCM refreshes its
// credentials at half of it).
func demoRole() tencent.Role {
	return tencent.Role{Name: demoRoleName, SessionDurationSeconds: 3600}
}

// credentialConfig is the cloud config's credential part.
func credentialConfig(simURL string) string {
	if tencentCredentials == credentialsKey {
		return fmt.Sprintf("secret_id: %s\nsecret_key: %s\n", demoSecretID, demoSecretKey)
	}
	// No key: the role is found at the metadata service; its endpoint is
	// cloudsim's here, http://metadata.tencentyun.com on a real CVM.
	return fmt.Sprintf("credential_source: cvm-role\nmetadata_endpoint: %s\n", simURL)
}

// announceCredentials says what the CCM will sign its calls with.
func announceCredentials() {
	if tencentCredentials == credentialsKey {
		step("credentials: a key pair in the cloud config (--credentials=key)")
	} else {
		step("credentials: no key; the CVM's CAM role %s, from cloudsim's metadata service (the cloud config names only credential_source: cvm-role)", demoRoleName)
	}
	actions, statements := policySize()
	step("permissions: the shipped CAM policy, deploy/policies/tencentcloud-cam-policy.json (%d actions in %d statements), attached to %s; cloudsim refuses anything else (AuthFailure.UnauthorizedOperation)",
		actions, statements, demoSubject())
}

// demoSubject is who the CCM is to CAM: the role, or the key's SecretId.
func demoSubject() string {
	if tencentCredentials == credentialsKey {
		return demoSecretID
	}
	return "role/" + demoRoleName
}

// demoPolicies attaches the shipped CAM policy to the CCM's subject.
func demoPolicies() map[string][]json.RawMessage {
	return map[string][]json.RawMessage{demoSubject(): {deploy.TencentCAMPolicy}}
}

// policySize counts the shipped policy's actions and statements.
func policySize() (actions, statements int) {
	p, err := cam.Parse(deploy.TencentCAMPolicy)
	if err != nil {
		return 0, 0
	}
	for _, st := range p.Statements {
		actions += len(st.Actions)
	}
	return actions, len(p.Statements)
}

// reportCredentials prints the source the CCM logged, and what cloudsim
// saw: the calls made as the role and the credentials it issued.
func reportCredentials(ccm *testcluster.Process, sim *cloudsim.Sim) {
	for _, line := range strings.Split(ccm.Output(), "\n") {
		if _, rest, ok := strings.Cut(line, `"Tencent Cloud credentials loaded" `); ok {
			step("the CCM says: credentials loaded: %s", rest)
			break
		}
	}
	if tencentCredentials == credentialsCVMRole {
		step("cloudsim issued %d temporary credentials for role %s (they expire in an hour; the CCM refreshes them at half-life)",
			sim.Tencent().CAM().Issued(demoRoleName), demoRoleName)
	}
}
