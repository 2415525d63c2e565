package lb

import (
	"encoding/json"
	"strings"
	"testing"
)

// Both fan-out sections summarize their runs alike, against their floor,
// under the JSON keys the files have always had.
func TestSpreadFanout(t *testing.T) {
	runs := []FanoutRun{
		{Seconds: 6, WritesTotal: 100, InitializedSeconds: 1},
		{Seconds: 9, WritesTotal: 120, InitializedSeconds: 3},
		{Seconds: 7.5, WritesTotal: 100, InitializedSeconds: 2},
	}
	s := spreadFanout(runs, 5, 100)
	if s.Seconds.Median != 7.5 || s.Seconds.Min != 6 || s.Seconds.Max != 9 {
		t.Errorf("seconds %+v, want median 7.5 (6-9)", s.Seconds)
	}
	if s.TimeRatio.Median != 1.5 || s.WriteRatio.Median != 1 || s.WriteRatio.Max != 1.2 || s.Initialized.Median != 2 {
		t.Errorf("ratios %+v %+v, initialized %+v", s.TimeRatio, s.WriteRatio, s.Initialized)
	}
	for _, r := range []any{&FanoutResult{FanoutSpread: s}, &OCIFanoutResult{FanoutSpread: s}} {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{`"seconds":`, `"time_vs_floor":`, `"writes":`, `"writes_vs_floor":`, `"initialized_seconds":`} {
			if !strings.Contains(string(b), key) {
				t.Errorf("%T JSON lacks %s", r, key)
			}
		}
	}
}
