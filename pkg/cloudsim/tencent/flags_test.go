package tencent

import (
	"strings"
	"testing"
)

func TestParseCredentials(t *testing.T) {
	tests := []struct {
		in      string
		want    map[string]string
		wantErr bool
	}{
		{"", map[string]string{}, false},
		{"AKID1:key1", map[string]string{"AKID1": "key1"}, false},
		{"AKID1:key1, AKID2:k:e:y", map[string]string{"AKID1": "key1", "AKID2": "k:e:y"}, false},
		{"AKID1", nil, true},
		{":key", nil, true},
		{"AKID1:", nil, true},
	}
	for _, tt := range tests {
		got, err := ParseCredentials(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("%q: err %v", tt.in, err)
			continue
		}
		if err != nil && strings.Contains(err.Error(), "key") && strings.Contains(tt.in, ":key") {
			t.Errorf("%q: error leaks the key: %v", tt.in, err)
		}
		if !tt.wantErr && len(got) != len(tt.want) {
			t.Errorf("%q: got %v", tt.in, got)
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("%q: got %v", tt.in, got)
			}
		}
	}
}
