package main

import "testing"

func TestVersionRequested(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"--version"}, true},
		{[]string{"--cloud-provider=oci", "--version=true"}, true},
		{[]string{"--version=raw"}, true},
		{[]string{"--version=false"}, false},
		{[]string{"--cloud-provider=oci"}, false},
		{[]string{"--", "--version"}, false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := versionRequested(tt.args); got != tt.want {
			t.Errorf("versionRequested(%q) = %v, want %v", tt.args, got, tt.want)
		}
	}
}
