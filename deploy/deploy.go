// Package deploy carries the shipped manifests and cloud policies into the
// binary, so that `cloud-controller-manager preflight` checks the RBAC that
// deploy/rbac.yaml grants and the cloud permissions deploy/policies grants,
// not copies that could drift from them.
package deploy

import (
	_ "embed"
	"strings"
)

// RBAC is deploy/rbac.yaml.
//
//go:embed rbac.yaml
var RBAC []byte

// TencentCAMPolicy is deploy/policies/tencentcloud-cam-policy.json: the
// CAM policy the Tencent provider needs, action by action.
//
//go:embed policies/tencentcloud-cam-policy.json
var TencentCAMPolicy []byte

// OCIPolicy is deploy/policies/oci-policy.txt: the OCI IAM statements the
// OCI provider needs, once for a dynamic group and once for a group, with
// the placeholders OCIPolicyFor fills in.
//
//go:embed policies/oci-policy.txt
var OCIPolicy string

// The placeholders of OCIPolicy.
const (
	OCIDynamicGroupPlaceholder = "<dynamic-group>"
	OCIGroupPlaceholder        = "<group>"
	OCICompartmentPlaceholder  = "<compartment>"
)

// OCIPolicyFor returns OCIPolicy's statements for one subject kind,
// "group" or "dynamic-group", naming subject and compartment (a name, or
// "id <ocid>"): the policy as an operator would paste it.
func OCIPolicyFor(kind, subject, compartment string) string {
	prefix := "Allow " + kind + " "
	var b strings.Builder
	for line := range strings.Lines(OCIPolicy) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, prefix+"<") {
			continue
		}
		line = strings.NewReplacer(OCIDynamicGroupPlaceholder, subject, OCIGroupPlaceholder, subject, OCICompartmentPlaceholder, compartment).Replace(line)
		b.WriteString(line + "\n")
	}
	return b.String()
}
