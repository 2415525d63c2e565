package cloudsim

import "github.com/ccmkit/ccm/pkg/cloudsim/tencent"

// TencentRole is a CAM role (TencentOptions.Roles, sim.Tencent().CAM()).
type TencentRole = tencent.Role

// TencentOIDCProvider is a CAM OIDC identity provider, whose tokens STS
// AssumeRoleWithWebIdentity accepts.
type TencentOIDCProvider = tencent.OIDCProvider

// TencentRoleArn returns the ARN of a role in cloudsim's account.
func TencentRoleArn(name string) string { return tencent.RoleArn(name) }
