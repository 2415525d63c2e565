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

func credentials() map[string]string {
	creds := map[string]string{secretID: secretKey}
	for _, id := range haSecretIDs {
		creds[id] = secretKey
	}
	return creds
}

var principals struct {
	sync.Mutex
	calls map[string]int
}

// recordPrincipal counts cloudsim calls per caller key id (never a secret).
func recordPrincipal(c cloudsim.Call) {
	principals.Lock()
	defer principals.Unlock()
	if principals.calls == nil {
		principals.calls = map[string]int{}
	}
	principals.calls[c.Principal]++
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
