package modroot

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFindFromASubdirectory(t *testing.T) {
	root, err := Find() // the test runs in hack/internal/modroot
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "hack", "internal", "modroot", "modroot.go")); err != nil {
		t.Fatalf("Find = %s, not this checkout's root: %v", root, err)
	}
}

func TestModuleOf(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ gomod, want string }{
		{"module github.com/ccmkit/ccm\n\ngo 1.25\n", Module},
		{"// a comment\nmodule \"example.com/other\"\n", "example.com/other"},
		{"go 1.25\n", ""},
	} {
		p := filepath.Join(dir, "go.mod")
		if err := os.WriteFile(p, []byte(tc.gomod), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := moduleOf(p); got != tc.want {
			t.Errorf("moduleOf(%q) = %q, want %q", tc.gomod, got, tc.want)
		}
	}
	if got := moduleOf(filepath.Join(dir, "missing")); got != "" {
		t.Errorf("moduleOf(missing) = %q", got)
	}
}
