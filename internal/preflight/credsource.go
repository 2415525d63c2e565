package preflight

import (
	"time"
)

// CheckCredentialSource is the check that names the credentials in use:
// where they come from and, for temporary ones, when they expire.
const CheckCredentialSource = "credential source"

// DescribeCredentials is the credential source check's detail: the
// source's description, then "temporary, expires <time> (in <d>)" or "does
// not expire". now is the local clock (time.Now if nil).
func DescribeCredentials(source string, expiry time.Time, now func() time.Time) string {
	if expiry.IsZero() {
		return source + "; does not expire"
	}
	if now == nil {
		now = time.Now
	}
	return source + "; temporary, expires " + expiry.UTC().Format(time.RFC3339) +
		" (in " + expiry.Sub(now()).Round(time.Second).String() + ")"
}
