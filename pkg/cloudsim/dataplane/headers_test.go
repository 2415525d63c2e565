package dataplane

import (
	"net/http"
	"reflect"
	"testing"
)

func TestApplyHeaderEdits(t *testing.T) {
	tests := []struct {
		name  string
		in    http.Header
		edits []HeaderEdit
		want  http.Header
	}{
		{"set replaces every occurrence", http.Header{"X-Env": {"a", "b"}},
			[]HeaderEdit{{Op: HeaderSet, Name: "x-env", Value: "prod"}}, http.Header{"X-Env": {"prod"}}},
		{"set adds", http.Header{}, []HeaderEdit{{Op: HeaderSet, Name: "x-env", Value: "prod"}}, http.Header{"X-Env": {"prod"}}},
		{"remove", http.Header{"X-Debug": {"1", "2"}, "X-Keep": {"k"}},
			[]HeaderEdit{{Op: HeaderRemove, Name: "x-debug"}}, http.Header{"X-Keep": {"k"}}},
		{"extend", http.Header{"X-Path": {"v"}},
			[]HeaderEdit{{Op: HeaderExtend, Name: "X-Path", Prefix: "<", Suffix: ">"}}, http.Header{"X-Path": {"<v>"}}},
		{"extend of an absent header", http.Header{}, []HeaderEdit{{Op: HeaderExtend, Name: "X-Path", Prefix: "<"}}, http.Header{}},
		{"in order", http.Header{},
			[]HeaderEdit{{Op: HeaderSet, Name: "a", Value: "1"}, {Op: HeaderExtend, Name: "a", Suffix: "2"}, {Op: HeaderRemove, Name: "b"}},
			http.Header{"A": {"12"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			applyHeaderEdits(tt.in, tt.edits)
			if !reflect.DeepEqual(tt.in, tt.want) {
				t.Errorf("headers %v, want %v", tt.in, tt.want)
			}
		})
	}
}
