// Package deploy carries the shipped manifests into the binary, so that
// `cloud-controller-manager preflight` checks the RBAC that deploy/rbac.yaml
// grants, not a copy that could drift from it.
package deploy

import _ "embed"

// RBAC is deploy/rbac.yaml.
//
//go:embed rbac.yaml
var RBAC []byte
