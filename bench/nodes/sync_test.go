package nodes

import (
	"strconv"
	"testing"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// TestSyncLine: the status sync's log line gives its node count, duration
// and, from klog's header, its start; a line without the header has no start.
func TestSyncLine(t *testing.T) {
	now := time.Date(2026, 11, 26, 6, 0, 0, 0, time.Local)
	for _, tc := range []struct {
		line      string
		nodes     int
		duration  time.Duration
		start     time.Time
		wantStart bool
	}{
		{"I1126 05:17:40.576042   24819 node_controller.go:274] Update 5000 nodes status took 3.281721071s.",
			5000, 3281721071 * time.Nanosecond, time.Date(2026, 11, 26, 5, 17, 37, 294320929, time.Local), true},
		{"Update 12 nodes status took 100ms.", 12, 100 * time.Millisecond, time.Time{}, false},
		// A date after now (Nov 26) is last year's.
		{"I1231 23:59:59.000000   1 node_controller.go:274] Update 1 nodes status took 1s.",
			1, time.Second, time.Date(2025, 12, 31, 23, 59, 58, 0, time.Local), true},
	} {
		m := syncLine.FindStringSubmatch(tc.line)
		if m == nil {
			t.Fatalf("%q: no match", tc.line)
		}
		if m[2] != strconv.Itoa(tc.nodes) {
			t.Errorf("%q: nodes %s, want %d", tc.line, m[2], tc.nodes)
		}
		if d, _ := time.ParseDuration(m[3]); d != tc.duration {
			t.Errorf("%q: duration %s, want %s", tc.line, d, tc.duration)
		}
		end, ok := klogTime(m[1], now)
		if ok != tc.wantStart {
			t.Fatalf("%q: klog time found %v, want %v", tc.line, ok, tc.wantStart)
		}
		if ok && !end.Add(-tc.duration).Equal(tc.start) {
			t.Errorf("%q: start %s, want %s", tc.line, end.Add(-tc.duration), tc.start)
		}
	}
}

// TestDescribeBefore: the last DescribeInstances answer before a time.
func TestDescribeBefore(t *testing.T) {
	var c callCounter
	if got := c.describeBefore(time.Now()); !got.IsZero() {
		t.Fatalf("no calls: %s, want the zero time", got)
	}
	c.record(cloudsim.Call{Action: "DescribeInstances"})
	first := time.Now()
	time.Sleep(2 * time.Millisecond)
	c.record(cloudsim.Call{Action: "DescribeRegions"}) // not a DescribeInstances
	mid := time.Now()
	time.Sleep(2 * time.Millisecond)
	c.record(cloudsim.Call{Action: "DescribeInstances"})
	if got := c.describeBefore(mid); got.After(first) || got.IsZero() {
		t.Errorf("before the second call: %s, want the first (at or before %s)", got, first)
	}
	if got := c.describeBefore(time.Now().Add(time.Second)); !got.After(mid) {
		t.Errorf("after both: %s, want the second (after %s)", got, mid)
	}
	if c.describe.Load() != 2 {
		t.Errorf("describe count %d, want 2", c.describe.Load())
	}
}
