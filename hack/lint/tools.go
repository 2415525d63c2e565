//go:build tools

// Package lint pins golangci-lint in its own module, so its dependencies stay
// out of the CCM's go.mod and out of the kube tools module (hack/tools).
package lint

import _ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
