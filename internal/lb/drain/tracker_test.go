package drain

import (
	"testing"
	"time"
)

func TestTrackerDue(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	tr := NewTracker(func() time.Time { return now })
	steps := []struct {
		name    string
		advance time.Duration
		key     string
		period  time.Duration
		forget  string
		due     bool
		at      time.Duration // after the start
	}{
		{name: "first sight starts the drain", key: "lb/l/a", period: 30 * time.Second, due: false, at: 30 * time.Second},
		{name: "not yet", advance: 29 * time.Second, key: "lb/l/a", period: 30 * time.Second, due: false, at: 30 * time.Second},
		{name: "due at the period", advance: time.Second, key: "lb/l/a", period: 30 * time.Second, due: true, at: 30 * time.Second},
		{name: "a shorter period counts from the same start", key: "lb/l/a", period: 10 * time.Second, due: true, at: 10 * time.Second},
		{name: "no period: due at once", key: "lb/l/b", period: 0, due: true, at: 30 * time.Second},
		{name: "forgotten (wanted again): starts over", forget: "lb/l/a", key: "lb/l/a", period: 30 * time.Second, due: false, at: 60 * time.Second},
	}
	start := now
	for _, s := range steps {
		now = now.Add(s.advance)
		if s.forget != "" {
			tr.Forget(s.forget)
		}
		due, at := tr.Due(s.key, s.period)
		if due != s.due || !at.Equal(start.Add(s.at)) {
			t.Errorf("%s: Due = %v at +%s, want %v at +%s", s.name, due, at.Sub(start), s.due, s.at)
		}
	}
	if tr.Len() != 1 {
		t.Errorf("draining: %d, want 1 (a period of 0 tracks nothing)", tr.Len())
	}
	tr.Due("lb2/l/a", time.Minute)
	tr.ForgetPrefix("lb/")
	if tr.Len() != 1 {
		t.Errorf("after ForgetPrefix(lb/): %d draining, want 1 (lb2's)", tr.Len())
	}
}
