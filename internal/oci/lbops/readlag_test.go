package lbops

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// Reads that lag writes (cloudsim's read lag): the GET after a create's
// work request succeeded may answer 404 for the new load balancer. That
// must not count as "its retry token's load balancer is gone": the next
// token would make a second one. With readLagWindow the create asks to be
// retried until it shows, and exactly one is made; with the window at 0
// (trusting every answer) this test sees a duplicate.
func TestLaggingReadsMakeNoDuplicate(t *testing.T) {
	for _, kind := range []Kind{KindLB, KindNLB} {
		for _, tc := range []struct {
			name          string
			window        time.Duration
			wantDuplicate bool
		}{
			{name: "read lag window", window: 30 * time.Second},
			{name: "no window", window: 0, wantDuplicate: true},
		} {
			t.Run(string(kind)+" "+tc.name, func(t *testing.T) {
				// Each write becomes visible at a random moment within the
				// lag (cloudsim's model), so one run without the window shows
				// the duplicate only when the new load balancer stayed hidden
				// past the read after its work request: a few runs, each on a
				// fresh cloud, must show it once. With the window, none may.
				attempts := 1
				if tc.wantDuplicate {
					attempts = 5
				}
				got := 0
				for range attempts {
					if got = ensureUnderLag(t, kind, tc.window, tc.wantDuplicate); got > 1 {
						break
					}
				}
				if (got > 1) != tc.wantDuplicate || got == 0 {
					t.Fatalf("%d load balancers for one Service; want a duplicate: %v", got, tc.wantDuplicate)
				}
			})
		}
	}
}

// ensureUnderLag ensures one Service on a fresh cloudsim whose reads lag
// its writes by up to 2 s, retrying as the service controller would, and
// returns how many load balancers it ended with.
func ensureUnderLag(t *testing.T, kind Kind, window time.Duration, wantDuplicate bool) int {
	t.Helper()
	env := newLBEnvWith(t, func(o *cloudsim.Options) { o.ReadLag = 2 * time.Second })
	o := newTestOps(env)
	o.readLagWindow = window
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, err := o.Ensure(context.Background(), desired(kind, "10.0.0.1"))
		if err == nil || (wantDuplicate && len(env.balancers(kind)) > 1) {
			break
		}
		// The service controller retries every error; with the window the
		// only one is a RetryError while the new one is not visible.
		var retry *api.RetryError
		if (window > 0 && !errors.As(err, &retry)) || time.Now().After(deadline) {
			t.Fatalf("Ensure: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return len(env.balancers(KindLB)) + len(env.balancers(KindNLB))
}
