// Package ctxwait waits the way every poll and backoff loop of the CCM
// waits: for a duration, or until the context ends, whichever comes first.
package ctxwait

import (
	"context"
	"time"
)

// Sleep waits for d, or returns ctx's error as soon as ctx ends. A d of
// zero or less only checks ctx.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
