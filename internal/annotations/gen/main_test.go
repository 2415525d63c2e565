package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccmkit/ccm/internal/annotations"
)

// docs/annotations.md must be what the generator writes from names.go.
func TestDocIsUpToDate(t *testing.T) {
	want, err := render("..", peers...)
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
			_, err := render(writeNames(t, "package annotations\n\n"+tc.src))
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
	path := writeNames(t, src)
	out, err := render(path)
	if err != nil {
		t.Fatal(err)
	}
	wantAll(t, out,
		"## Section one\n\nIntro text.\n",
		"### `p.io/a`\n\nEnables `p.io/b`; see `p.io/b`.\n",
		"### `p.io/b`\n\nWritten by us.\n",
		"- Read-only: written by the CCM\n",
		"| [`p.io/a`](#pioa) | bool | true | all |\n",
	)
}

// A peer catalog must agree with what is declared: supported means
// declared, and everything declared under the peer's prefixes is listed.
func TestRenderChecksPeerCatalog(t *testing.T) {
	src := `package annotations

// Ours
const (
	// Alpha is ours under the peer's name.
	//
	// Type: bool
	// Default: true
	// Providers: all
	Alpha Name = "peer.io/a"
)
`
	path := writeNames(t, src)
	catalog := func(entries ...annotations.PeerAnnotation) annotations.PeerCatalog {
		return annotations.PeerCatalog{Title: "Peer", Source: "peer v1", Prefixes: []string{"peer.io/"}, Entries: entries}
	}
	a := annotations.PeerAnnotation{Name: "peer.io/a", Supported: true}
	tests := []struct {
		name    string
		catalog annotations.PeerCatalog
		wantErr string
	}{
		{"supported but undeclared", catalog(a, annotations.PeerAnnotation{Name: "peer.io/b", Supported: true}), "peer.io/b is marked supported, but no annotation constant declares it"},
		{"declared but missing", catalog(annotations.PeerAnnotation{Name: "peer.io/b", Note: "planned"}), "Alpha (peer.io/a) is declared under the peer's prefix peer.io/ but missing"},
		{"declared but unsupported", catalog(annotations.PeerAnnotation{Name: "peer.io/a", Note: "no"}), "peer.io/a is declared here, but marked not supported"},
		{"no reason", catalog(a, annotations.PeerAnnotation{Name: "peer.io/b"}), "peer.io/b is not supported and needs a note"},
		{"twice", catalog(a, a), "peer.io/a is listed twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(path, tc.catalog)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
	out, err := render(path, catalog(a, annotations.PeerAnnotation{Name: "peer.io/b", Note: "planned | later"}))
	if err != nil {
		t.Fatal(err)
	}
	wantAll(t, out,
		"\n## Peer\n\nEvery Service annotation of peer v1: 1 supported here",
		"| [`peer.io/a`](#peerioa) | supported |  |\n",
		"| `peer.io/b` | not supported | planned \\| later |\n",
	)
}

// The real OCI catalog: the 47 names of oracle/oci-cloud-controller-manager
// v1.35.0, and it passes the checks against what we declare.
func TestOCIPeerCatalog(t *testing.T) {
	c := annotations.OCIPeerCatalog()
	if len(c.Entries) != 47 {
		t.Errorf("the OCI catalog has %d entries, want the 47 Service annotations of the public OCI CCM v1.35.0", len(c.Entries))
	}
	if _, err := render("..", c); err != nil {
		t.Fatal(err)
	}
}

// writeNames writes src as names.go in a fresh directory and returns its path.
func writeNames(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "names.go")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// wantAll fails for each of wants that out lacks.
func wantAll(t *testing.T, out []byte, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
