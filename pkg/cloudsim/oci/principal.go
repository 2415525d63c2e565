package oci

import "github.com/ccmkit/ccm/internal/cloudpolicy/ociiam"

// Principal is who signed a request, as IAM sees it.
type Principal = ociiam.Principal

// principalOf is the principal of a verified keyId: for an API key
// "<tenancy>/<user>/<fingerprint>", its user. Instance principals (keyId
// "ST$<token>") fill InstanceID and CompartmentID here.
func (d *Dialect) principalOf(keyID string) Principal {
	tenancy, user, _, _ := splitKeyID(keyID)
	return Principal{Tenancy: tenancy, User: user}
}
