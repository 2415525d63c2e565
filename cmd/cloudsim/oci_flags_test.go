package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunBadOCIConfig(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pem")
	badNet := filepath.Join(dir, "net.yaml")
	unknownField := filepath.Join(dir, "unknown.yaml")
	for path, body := range map[string]string{
		junk:         "not a key",
		badNet:       "vcns:\n- id: vcn-1\n",
		unknownField: "vpcs: []\n",
	} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--oci-key", "no-equals"}, "PUBLIC_KEY_FILE"},
		{[]string{"--oci-key", "t/u/f=" + filepath.Join(dir, "missing.pem")}, "missing.pem"},
		{[]string{"--oci-key", "t/u/f=" + junk}, "PEM"},
		{[]string{"--oci-network", badNet}, "not a VCN OCID"},
		{[]string{"--oci-network", unknownField}, "vpcs"},
	}
	for _, tt := range tests {
		var stderr syncBuffer
		err := run(context.Background(), append([]string{"--listen", "127.0.0.1:0"}, tt.args...), func(string) string { return "" }, io.Discard, &stderr)
		if err == nil || !strings.Contains(err.Error()+stderr.String(), tt.want) {
			t.Errorf("%v: err %v, want %q", tt.args, err, tt.want)
		}
	}
}
