package main

import (
	"fmt"
	"strings"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
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
func demoRole() cloudsim.TencentRole {
	return cloudsim.TencentRole{Name: demoRoleName, SessionDurationSeconds: 3600}
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
	// The CAM policy the role (or key) is allowed: the shipped policy
	// (docs/credentials.md) once cloudsim enforces policies.
	// TODO(lead): print the policy the principal runs under here when the
	// policy work (issue 29, item 4) lands.
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
