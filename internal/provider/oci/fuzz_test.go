package oci

import (
	"strings"
	"testing"
)

// FuzzParseProviderID: any string is parsed or refused; never a panic, and
// an accepted id is an instance OCID.
func FuzzParseProviderID(f *testing.F) {
	for _, s := range []string{"oci://ocid1.instance.oc1.iad.aaaa", "ocid1.instance.oc1..bbbb", "oci://", "aws:///x", "", "oci://ocid1.vcn.oc1..x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := parseProviderID(s)
		if err == nil && !strings.HasPrefix(id, "ocid1.instance.") {
			t.Fatalf("parseProviderID(%q) = %q: not an instance OCID", s, id)
		}
	})
}
