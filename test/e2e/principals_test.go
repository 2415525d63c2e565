//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// Scenarios that run several CCM processes give each its own SecretId, so
// that cloudsim's calls can be told apart per process.
var haSecretIDs = []string{"AKIDccmkitHAPROCESS0A00000000000000", "AKIDccmkitHAPROCESS0B00000000000000"}

// metricsSecretID is the principal of the CCM whose metrics are checked.
const metricsSecretID = "AKIDccmkitMETRICS00000000000000000"

// upstreamMetricsSecretID is the principal of the leader-electing CCM of
// TestUpstreamMetricsServed.
const upstreamMetricsSecretID = "AKIDccmkitUPSTREAMMETRICS000000000"

// leastPrivSecretIDs are the principals of TestLeastPrivilege's rows, each
// under the shipped policy minus one action.
var leastPrivSecretIDs = []string{"AKIDccmkitLEASTPRIV0A0000000000000", "AKIDccmkitLEASTPRIV0B0000000000000",
	"AKIDccmkitLEASTPRIV0C0000000000000", "AKIDccmkitLEASTPRIV0D0000000000000"}

// upgradeSecretIDs are the principals of TestUpgradeUnderTraffic's four
// CCM processes: two of the previous release, two of this build.
var upgradeSecretIDs = []string{"AKIDccmkitUPGRADE0OLDA0000000000000", "AKIDccmkitUPGRADE0OLDB0000000000000",
	"AKIDccmkitUPGRADE0NEWA0000000000000", "AKIDccmkitUPGRADE0NEWB0000000000000"}

func credentials() map[string]string {
	creds := map[string]string{secretID: secretKey, metricsSecretID: secretKey, upstreamMetricsSecretID: secretKey,
		incumbentSecretID: secretKey, takeoverSecretID: secretKey, takeoverTKESecretID: secretKey, seedRoutesSecretID: secretKey}
	ids := append(slices.Clone(haSecretIDs), leastPrivSecretIDs...)
	for _, id := range append(ids, upgradeSecretIDs...) {
		creds[id] = secretKey
	}
	return creds
}

var principals struct {
	sync.Mutex
	calls     map[string]int            // principal -> calls
	actions   map[string]map[string]int // principal -> action -> calls
	lastWrite map[string]time.Time      // principal -> when its last write call ended
	failed    map[string]map[string]int // principal -> error code -> calls
	lastCall  map[string]time.Time      // principal -> when its last call ended
	// Tencent subjects (cloudsim's SubjectOf: a key's SecretId, or
	// role/<name> for a role's temporary credentials): result codes, and
	// the SecretIds each used.
	subjectCodes map[string]map[string]int
	subjectKeys  map[string]map[string]bool
	// logged are the principals whose every call is kept in log
	// (logCallsOf), for tests that count calls by result and time.
	logged map[string]bool
	log    []cloudsim.Call
}

// recordPrincipal counts cloudsim calls per caller key id (never a secret).
func recordPrincipal(c cloudsim.Call) {
	subject := ""
	if c.Dialect == "tencent" && c.Principal != "" && suite.sim != nil {
		subject = suite.sim.Tencent().SubjectOf(c.Principal)
	}
	principals.Lock()
	defer principals.Unlock()
	if principals.calls == nil {
		principals.calls, principals.actions, principals.lastWrite = map[string]int{}, map[string]map[string]int{}, map[string]time.Time{}
		principals.lastCall, principals.subjectCodes, principals.subjectKeys = map[string]time.Time{}, map[string]map[string]int{}, map[string]map[string]bool{}
	}
	if subject != "" {
		if principals.subjectCodes[subject] == nil {
			principals.subjectCodes[subject], principals.subjectKeys[subject] = map[string]int{}, map[string]bool{}
		}
		principals.subjectCodes[subject][c.Code]++
		principals.subjectKeys[subject][c.Principal] = true
	}
	principals.lastCall[c.Principal] = time.Now()
	if !strings.HasPrefix(c.Action, "Describe") {
		principals.lastWrite[c.Principal] = time.Now()
	}
	principals.calls[c.Principal]++
	if c.Code != "OK" {
		if principals.failed == nil {
			principals.failed = map[string]map[string]int{}
		}
		if principals.failed[c.Principal] == nil {
			principals.failed[c.Principal] = map[string]int{}
		}
		principals.failed[c.Principal][c.Code]++
	}
	if principals.actions[c.Principal] == nil {
		principals.actions[c.Principal] = map[string]int{}
	}
	principals.actions[c.Principal][c.Action]++
	if principals.logged[c.Principal] {
		principals.log = append(principals.log, c)
	}
}

// logCallsOf keeps every call of these principals from now on (callsOf).
func logCallsOf(ids ...string) {
	principals.Lock()
	defer principals.Unlock()
	if principals.logged == nil {
		principals.logged = map[string]bool{}
	}
	for _, id := range ids {
		principals.logged[id] = true
	}
}

// callsOf returns the logged calls of the principals that ended at or
// after since.
func callsOf(ids []string, since time.Time) []cloudsim.Call {
	principals.Lock()
	defer principals.Unlock()
	var out []cloudsim.Call
	for _, c := range principals.log {
		if slices.Contains(ids, c.Principal) && !c.Time.Before(since) {
			out = append(out, c)
		}
	}
	return out
}

// isCloudWrite reports whether a cloud action changes something: every
// action of both clouds that is not a read (Describe*, Inquiry* and Check*
// on Tencent; Get* and List* on OCI, whose actions cloudsim names
// "oci:[nlb:]Op").
func isCloudWrite(action string) bool {
	op := strings.TrimPrefix(strings.TrimPrefix(action, simoci.ActionPrefix), "nlb:")
	for _, read := range []string{"Describe", "Inquiry", "Check", "Get", "List"} {
		if strings.HasPrefix(op, read) {
			return false
		}
	}
	return true
}

// lastWriteBy is when principal's last cloud write ended (zero: none).
func lastWriteBy(principal string) time.Time {
	principals.Lock()
	defer principals.Unlock()
	return principals.lastWrite[principal]
}

// lastCallBy is when principal's last call ended (zero: none).
func lastCallBy(principal string) time.Time {
	principals.Lock()
	defer principals.Unlock()
	return principals.lastCall[principal]
}

// subjectCodes returns the result codes of the calls made as subject
// (result code -> calls), and how many SecretIds those calls used.
func subjectCodes(subject string) (map[string]int, int) {
	principals.Lock()
	defer principals.Unlock()
	codes := map[string]int{}
	for code, n := range principals.subjectCodes[subject] {
		codes[code] = n
	}
	return codes, len(principals.subjectKeys[subject])
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

// failedBy returns the error codes of principal's failed calls, with
// their counts (empty: none failed).
func failedBy(principal string) map[string]int {
	principals.Lock()
	defer principals.Unlock()
	out := map[string]int{}
	for code, n := range principals.failed[principal] {
		out[code] = n
	}
	return out
}
