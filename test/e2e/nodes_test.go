//go:build e2e

package e2e

import "strings"

// The node scenarios (initialization, mapping, other network, termination,
// shutdown, cloud faults, wrong credentials, malformed config) are one table
// run against every cloud: see conformance_test.go, with each cloud's
// specifics (Tencent's mappings, faults and error codes as they were here)
// in cloud_tencent_test.go and cloud_oci_test.go.

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
