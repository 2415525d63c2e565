package oci

import (
	"strings"

	"github.com/ccmkit/ccm/internal/cloudpolicy/ociiam"
)

// Principal is who signed a request, as IAM sees it: one identity per
// call.
//
//   - An API key (keyId "<tenancy>/<user>/<fingerprint>") is a user.
//   - A security token (keyId "ST$<token>") issued by the federation
//     endpoint (federation.go) is an instance principal: its instance, in
//     its compartment, which dynamic-group matching rules such as
//     instance.compartment.id = '<ocid>' select.
type Principal = ociiam.Principal

// caller is an authenticated request's principal and the keyId it signed
// with ("" for a security token).
type caller struct {
	Principal
	KeyID string
}

// principalOf is the principal of a verified keyId of an API key: its
// user.
func (d *Dialect) principalOf(keyID string) Principal {
	tenancy, user, _, _ := splitKeyID(keyID)
	return Principal{Tenancy: tenancy, User: user}
}

// callerOfKey is the caller of a verified API key.
func (d *Dialect) callerOfKey(keyID string) caller {
	return caller{Principal: d.principalOf(keyID), KeyID: keyID}
}

// callerOfToken is the instance a verified security token was issued to.
func callerOfToken(c tokenClaims) caller {
	return caller{Principal: Principal{Tenancy: c.Tenant, InstanceID: c.Instance, CompartmentID: c.Compartment}}
}

// String names the caller in the call log: the keyId for an API key (it
// holds no secret), the instance OCID for an instance principal (never the
// token, which is a credential).
func (c caller) String() string {
	if c.InstanceID != "" {
		return c.InstanceID
	}
	return c.KeyID
}

// isSecurityToken reports whether keyId carries a security token.
func isSecurityToken(keyID string) bool { return strings.HasPrefix(keyID, securityTokenPrefix) }
