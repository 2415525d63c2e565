package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccmkit/ccm/internal/annotations"
)

// docs/annotations.md must be what the generator writes from names.go.
func TestDocIsUpToDate(t *testing.T) {
	want, err := render("..", annotations.Descriptors(), peers...)
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
			_, err := render(writeNames(t, "package annotations\n\n"+tc.src), nil)
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
	out, err := render(path, nil)
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
			_, err := render(path, nil, tc.catalog)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
	out, err := render(path, nil, catalog(a, annotations.PeerAnnotation{Name: "peer.io/b", Note: "planned | later"}))
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
	if _, err := render("..", annotations.Descriptors(), c); err != nil {
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

// A descriptor's Type and Default come from it, never from its comment,
// and annotations.Descriptors() must list exactly the declared ones.
func TestRenderTyped(t *testing.T) {
	const decl = `package annotations

// Section
var (
	// Alpha does a.
	//
%s	// Providers: all
	Alpha = Enum{Name: "x/a", Values: []string{"lb", "nlb"}, Default: "lb"}
)
`
	alpha := annotations.Enum{Name: "x/a", Values: []string{"lb", "nlb"}, Default: "lb"}
	tests := []struct {
		name, lines string
		descs       []annotations.Descriptor
		wantErr     string
	}{
		{"hand-written Type", "\t// Type: enum (lb, nlb)\n", []annotations.Descriptor{alpha}, `its descriptor states the Type; remove the doc comment's "Type:" line`},
		{"hand-written Default", "\t// Default: lb\n", []annotations.Descriptor{alpha}, `remove the doc comment's "Default:" line`},
		{"not listed", "", nil, "Alpha (x/a) is a typed descriptor missing from annotations.Descriptors()"},
		{"listed, not declared", "", []annotations.Descriptor{alpha, annotations.Bool{Name: "x/b"}}, "lists x/b, which no documented descriptor declares"},
		{"DefaultDoc disagrees", "", []annotations.Descriptor{annotations.Enum{Name: "x/a", Default: "lb", DefaultDoc: "nlb"}}, "does not begin with the Default lb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(writeNames(t, fmt.Sprintf(decl, tc.lines)), tc.descs)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
	out, err := render(writeNames(t, fmt.Sprintf(decl, "")), []annotations.Descriptor{alpha})
	if err != nil {
		t.Fatal(err)
	}
	wantAll(t, out, "| [`x/a`](#xa) | enum (lb, nlb) | lb | all |\n", "- Type: enum (lb, nlb)\n- Default: lb\n- Providers: all\n")
}
