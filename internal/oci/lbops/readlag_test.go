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
				env := newLBEnvWith(t, func(o *cloudsim.Options) { o.ReadLag = 2 * time.Second })
				o := newTestOps(env)
				o.readLagWindow = tc.window
				deadline := time.Now().Add(15 * time.Second)
				for {
					_, err := o.Ensure(context.Background(), desired(kind, "10.0.0.1"))
					if err == nil || (tc.wantDuplicate && len(env.balancers(kind)) > 1) {
						break
					}
					// The service controller retries every error; with the window the
					// only one is a RetryError while the new one is not visible.
					var retry *api.RetryError
					if (tc.window > 0 && !errors.As(err, &retry)) || time.Now().After(deadline) {
						t.Fatalf("Ensure: %v", err)
					}
					time.Sleep(100 * time.Millisecond)
				}
				if got := len(env.balancers(KindLB)) + len(env.balancers(KindNLB)); (got > 1) != tc.wantDuplicate || got == 0 {
					t.Fatalf("%d load balancers for one Service; want a duplicate: %v", got, tc.wantDuplicate)
				}
			})
		}
	}
}
