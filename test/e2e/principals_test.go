//go:build e2e

package e2e

import (
	"fmt"
	"sync"

	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// Scenarios that run several CCM processes give each its own SecretId, so
// that cloudsim's calls can be told apart per process.
var haSecretIDs = []string{"AKIDccmkitHAPROCESS0A00000000000000", "AKIDccmkitHAPROCESS0B00000000000000"}

// metricsSecretID is the principal of the CCM whose metrics are checked.
const metricsSecretID = "AKIDccmkitMETRICS00000000000000000"

// upstreamMetricsSecretID is the principal of the leader-electing CCM of
// TestUpstreamMetricsServed.
const upstreamMetricsSecretID = "AKIDccmkitUPSTREAMMETRICS000000000"

func credentials() map[string]string {
	creds := map[string]string{secretID: secretKey, metricsSecretID: secretKey, upstreamMetricsSecretID: secretKey}
	for _, id := range haSecretIDs {
		creds[id] = secretKey
	}
	return creds
}

var principals struct {
	sync.Mutex
	calls   map[string]int            // principal -> calls
	actions map[string]map[string]int // principal -> action -> calls
}

// recordPrincipal counts cloudsim calls per caller key id (never a secret).
func recordPrincipal(c cloudsim.Call) {
	principals.Lock()
	defer principals.Unlock()
	if principals.calls == nil {
		principals.calls, principals.actions = map[string]int{}, map[string]map[string]int{}
	}
	principals.calls[c.Principal]++
	if principals.actions[c.Principal] == nil {
		principals.actions[c.Principal] = map[string]int{}
	}
	principals.actions[c.Principal][c.Action]++
}

func callsBy(principal string) int {
	principals.Lock()
	defer principals.Unlock()
	return principals.calls[principal]
}

func principalSummary() string {
	principals.Lock()
	defer principals.Unlock()
	return fmt.Sprint(principals.calls)
}

// actionCallsBy returns cloudsim's count of action calls made by principal.
func actionCallsBy(principal, action string) int {
	principals.Lock()
	defer principals.Unlock()
	return principals.actions[principal][action]
}
