package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestPreflightCommandLine(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-cloud.yaml")
	cases := []struct {
		name   string
		args   []string
		exit   int
		output string // in stdout+stderr
	}{
		{"no flags", nil, 2, "--cloud-provider and --cloud-config are required"},
		{"bad cluster CIDR", []string{"--cloud-provider=tencentcloud", "--cloud-config=x", "--cluster-cidr=10.0.0.0"}, 2, `--cluster-cidr "10.0.0.0"`},
		{"unknown provider", []string{"--cloud-provider=aws", "--cloud-config=x"}, 1, `--cloud-provider="aws" is not one of [oci tencentcloud]`},
		{"config file missing, upstream flags ignored", []string{"--cloud-provider=tencentcloud", "--cloud-config=" + missing, "--leader-elect=true", "--v=2"}, 1, "cannot read --cloud-config"},
		{"help", []string{"--help"}, 0, "Usage: cloud-controller-manager preflight"},
	}
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runPreflight(tc.args, &stdout, &stderr)
			out := stdout.String() + stderr.String()
			if code != tc.exit || !strings.Contains(out, tc.output) {
				t.Errorf("exit %d, want %d; output lacks %q:\n%s", code, tc.exit, tc.output, out)
			}
		})
	}
	if !preflightRequested([]string{"preflight", "--cloud-provider=oci"}) || preflightRequested([]string{"--cloud-provider=oci"}) {
		t.Error("preflightRequested")
	}
}
