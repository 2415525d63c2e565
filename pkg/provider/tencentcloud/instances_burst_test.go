package tencentcloud

import (
	"testing"
	"time"
)

// A burst of initializations may be served from one listing up to the
// status sync's 5 minutes, never the lifecycle checks' answers.
func TestBurstGrace(t *testing.T) {
	tests := []struct {
		ttl, want time.Duration
	}{
		{ttl: 60 * time.Second, want: 4 * time.Minute}, // the default: a listing serves up to 5m
		{ttl: 2 * time.Minute, want: 3 * time.Minute},  // the cap is the total age
		{ttl: 10 * time.Minute, want: 0},               // longer than the cap: nothing to add
		{ttl: maxStateAge, want: 0},                    // also the lifecycle checks' max age
		{ttl: maxStateAge + time.Second, want: 4*time.Minute + 49*time.Second},
		{ttl: 0, want: 0}, // caching off
	}
	for _, tt := range tests {
		if got := burstGrace(tt.ttl); got != tt.want {
			t.Errorf("burstGrace(%s) = %s, want %s", tt.ttl, got, tt.want)
		}
	}
}
