package oci

import (
	"fmt"
	"strings"

	"github.com/ccmkit/ccm/internal/oci/config"
)

// providerIDPrefix is the scheme of the providerIDs we write: oci://<OCID>,
// the public OCI CCM's format, so that nodes it initialized keep theirs.
const providerIDPrefix = ProviderName + "://"

// instanceOCIDPattern is the shape of an instance OCID:
// ocid1.instance.<realm>.<region>[.future use].<unique id>.
var instanceOCIDPattern = config.OCIDPattern("instance")

// isInstanceOCID reports whether s has the shape of an instance OCID.
func isInstanceOCID(s string) bool { return instanceOCIDPattern.MatchString(s) }

// formatProviderID returns the providerID we set on nodes.
func formatProviderID(instanceID string) string { return providerIDPrefix + instanceID }

// parseProviderID accepts oci://<instance OCID> and a bare instance OCID
// (what kubelets started with --provider-id=<OCID> register), and returns
// the OCID.
func parseProviderID(providerID string) (string, error) {
	id, ok := strings.CutPrefix(providerID, providerIDPrefix)
	if !ok {
		if isInstanceOCID(providerID) {
			return providerID, nil
		}
		return "", fmt.Errorf("providerID %q: not an OCI providerID (want %s<instance OCID>)", providerID, providerIDPrefix)
	}
	if !isInstanceOCID(id) {
		return "", fmt.Errorf("providerID %q: %q is not an instance OCID (ocid1.instance.<realm>.<region>.<unique id>)", providerID, id)
	}
	return id, nil
}
