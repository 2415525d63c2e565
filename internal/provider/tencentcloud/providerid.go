package tencentcloud

import (
	"fmt"
	"regexp"
	"strings"
)

// Provider ID formats. We write tencentcloud:///<zone>/<ins-id> (the seed
// project's format, so existing nodes keep their IDs). We also read managed
// TKE's qcloud:///<zone or numeric zone id>/<ins-id> and a bare instance id,
// because nodes that joined under those conventions must keep working.
const (
	providerIDPrefix       = ProviderName + ":///"
	legacyProviderIDPrefix = "qcloud:///"
)

var (
	// instanceIDPattern is the shape of every CVM instance id, e.g. ins-dyzp06q6.
	instanceIDPattern = regexp.MustCompile(`^ins-[a-z0-9]{8}$`)
	// zonePattern accepts zone names (ap-guangzhou-3) and TKE's numeric zone
	// ids (100003). It is deliberately loose about the shape but excludes
	// anything that could confuse the path split: '/', spaces, upper case.
	zonePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
)

// parsedProviderID is what a node's spec.providerID says about its instance.
type parsedProviderID struct {
	// Zone is empty for a bare instance id.
	Zone       string
	InstanceID string
}

// isInstanceID reports whether s has the shape of a CVM instance id.
func isInstanceID(s string) bool {
	return instanceIDPattern.MatchString(s)
}

// formatProviderID returns the providerID we set on nodes.
func formatProviderID(zone, instanceID string) string {
	return providerIDPrefix + zone + "/" + instanceID
}

// parseProviderID accepts tencentcloud:///<zone>/<ins-id>,
// qcloud:///<zone-or-numeric-zone-id>/<ins-id> and a bare ins-xxxxxxxx.
func parseProviderID(providerID string) (parsedProviderID, error) {
	if isInstanceID(providerID) {
		return parsedProviderID{InstanceID: providerID}, nil
	}
	rest, ok := strings.CutPrefix(providerID, providerIDPrefix)
	if !ok {
		rest, ok = strings.CutPrefix(providerID, legacyProviderIDPrefix)
	}
	if !ok {
		return parsedProviderID{}, fmt.Errorf("providerID %q: not a Tencent Cloud providerID (want %s<zone>/<ins-id>)",
			providerID, providerIDPrefix)
	}
	zone, id, ok := strings.Cut(rest, "/")
	if !ok {
		return parsedProviderID{}, fmt.Errorf("providerID %q: want %s<zone>/<ins-id>", providerID, providerIDPrefix)
	}
	if !zonePattern.MatchString(zone) {
		return parsedProviderID{}, fmt.Errorf("providerID %q: zone %q must be a zone name like ap-guangzhou-3 or a numeric zone id",
			providerID, zone)
	}
	if !isInstanceID(id) {
		return parsedProviderID{}, fmt.Errorf("providerID %q: instance id %q must be ins- followed by 8 lowercase letters or digits",
			providerID, id)
	}
	return parsedProviderID{Zone: zone, InstanceID: id}, nil
}
