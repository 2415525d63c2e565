package report

import "testing"

func TestAllMet(t *testing.T) {
	for _, tc := range []struct {
		targets map[string]bool
		want    bool
	}{
		{nil, true},
		{map[string]bool{"a": true, "b": true}, true},
		{map[string]bool{"a": true, "b": false}, false},
	} {
		if got := AllMet(tc.targets); got != tc.want {
			t.Errorf("AllMet(%v) = %v, want %v", tc.targets, got, tc.want)
		}
	}
}
