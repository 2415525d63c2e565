package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docs/annotations.md must be what the generator writes from names.go.
func TestDocIsUpToDate(t *testing.T) {
	want, err := render("..")
	if err != nil {
		t.Fatal(err)
	}
	docPath := filepath.Join("..", "..", "..", "docs", "annotations.md")
	got, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatalf("%v (run: go generate ./internal/annotations)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("docs/annotations.md is stale: run `go generate ./internal/annotations` and commit the result")
	}
}

func TestRenderRejectsUndocumented(t *testing.T) {
	tests := []struct {
		name, src, wantErr string
	}{
		{"no doc", "// T\nconst (\n\tA Name = \"x/a\"\n)\n", "has no doc comment"},
		{"no default", "// T\nconst (\n\t// Does a.\n\t//\n\t// Type: bool\n\t// Providers: all\n\tA Name = \"x/a\"\n)\n", `lacks a "Default:" line`},
		{"no section title", "const (\n\t// Does a.\n\t//\n\t// Type: bool\n\t// Default: true\n\t// Providers: all\n\tA Name = \"x/a\"\n)\n", "const block without a doc comment"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "names.go")
			if err := os.WriteFile(path, []byte("package annotations\n\n"+tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := render(path)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestRenderLinksAndFields(t *testing.T) {
	src := `package annotations

const Prefix = "p.io/"

// Section one
//
// Intro text.
const (
	// Alpha enables Beta; see Beta.
	//
	// Type: bool
	// Default: true
	// Providers: all
	Alpha Name = Prefix + "a"

	// Beta is written by us.
	//
	// Type: string
	// Default: none
	// Read-only: written by the CCM
	// Providers: all
	Beta Name = Prefix + "b"
)
`
	path := filepath.Join(t.TempDir(), "names.go")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := render(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Section one\n\nIntro text.\n",
		"### `p.io/a`\n\nEnables `p.io/b`; see `p.io/b`.\n",
		"### `p.io/b`\n\nWritten by us.\n",
		"- Read-only: written by the CCM\n",
		"| [`p.io/a`](#pioa) | bool | true | all |\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
