package core

import (
	"crypto/rand"
	"regexp"
)

// OCI resource ids (OCIDs) have the form
//
//	ocid1.<resource type>.<realm>.[region][.future use].<unique id>
//
// The fleet stores them for the OCI dialect (Instance.OCID, and VCN and
// subnet OCIDs in VpcID and SubnetID), so their format is checked here.
var ocidRe = regexp.MustCompile(`^ocid1\.([a-z0-9]+)\.[a-z0-9]+\.[a-z0-9-]*(?:\.[a-z0-9-]*)?\.[a-z0-9]+$`)

// ValidOCID reports whether s is an OCID of the given resource type
// ("instance", "vcn", "subnet", "compartment", ...).
func ValidOCID(s, resourceType string) bool {
	if len(s) > 255 {
		return false
	}
	m := ocidRe.FindStringSubmatch(s)
	return m != nil && m[1] == resourceType
}

// NewOCID returns a new random OCID of a resource type, in the commercial
// realm (oc1) and without a region: "ocid1.<type>.oc1..aaaaaaaa<52 base32>".
// The unique part has the length and alphabet of real OCIDs.
func NewOCID(resourceType string) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	b := make([]byte, 52)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return "ocid1." + resourceType + ".oc1..aaaaaaaa" + string(b)
}
