package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The generated files in the tree must be what the generator writes from
// the packages: `go test ./...` (make test, CI) fails otherwise.
func TestGeneratedFilesAreUpToDate(t *testing.T) {
	root := defaultRoot()
	files, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	stale, err := staleFiles(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range stale {
		t.Errorf("%s is stale: run `make generate` (go run ./hack/registrygen) and commit the result", rel)
	}
}

// A small tree with one provider and one dialect, foo, beside packages
// that are neither.
var fooTree = map[string]string{
	"go.mod": "module example.com/m\n\ngo 1.26\n",
	"internal/provider/foo/cloud.go": `package foo

import (
	"reflect"

	"example.com/m/internal/foo/config"
)

const ProviderName = "foo"

const ConfigFile = "foo.yaml"

var ConfigType = reflect.TypeFor[config.Config]()
`,
	"internal/provider/foo/cloud_test.go": "package foo\n\nconst ProviderName = \"not this one\"\n",
	"internal/provider/shared/shared.go":  "package shared\n\n// Helper is not a provider: no ProviderName.\nfunc Helper() {}\n",
	"pkg/cloudsim/core/core.go":           "package core\n\ntype Core struct{}\n",
	"pkg/cloudsim/foo/dialect.go": `package foo

const DialectName = "foo"

type Options struct{}

type Dialect struct{}

// New builds the dialect.
//
//cloudsim:dialect Foo
func New(c *core.Core, plane *dataplane.Plane, opts Options) (*Dialect, error) { return nil, nil }
`,
	"pkg/cloudsim/cloudsim.go": `package cloudsim

type Options struct {
	Region string

	// BEGIN GENERATED: dialect options (go run ./hack/registrygen)
	Old OldOptions
	// END GENERATED: dialect options
}
`,
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, content := range files {
		path := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestGenerateFindsANewCloud(t *testing.T) {
	files, err := generate(writeTree(t, fooTree))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		providersGo: {
			`"example.com/m/internal/provider/foo"`,
			"{Name: foo.ProviderName, ConfigFile: foo.ConfigFile, ConfigType: foo.ConfigType},",
		},
		providersTpl: {`"foo": "foo.yaml"`},
		dialectsGo: {
			`"example.com/m/pkg/cloudsim/core"`,
			`"example.com/m/pkg/cloudsim/foo"`,
			"type FooOptions = foo.Options",
			"foo *foo.Dialect",
			"func (s *Sim) Foo() *foo.Dialect { return s.foo }",
			"name: foo.DialectName,",
			"d, err := foo.New(s.core, s.plane, opts.Foo)",
			"return opts.Foo.AddFlags(fs)",
		},
		cloudsimGo: {"\tFoo FooOptions // the foo dialect (pkg/cloudsim/foo)\n\t// END GENERATED"},
	}
	for rel, lines := range want {
		for _, l := range lines {
			if !strings.Contains(string(files[rel]), l) {
				t.Errorf("%s lacks %q:\n%s", rel, l, files[rel])
			}
		}
	}
	for rel, absent := range map[string]string{providersGo: "shared", dialectsGo: "not this one", cloudsimGo: "OldOptions"} {
		if strings.Contains(string(files[rel]), absent) {
			t.Errorf("%s holds %q:\n%s", rel, absent, files[rel])
		}
	}
}

// A provider that declares EarlyStart is listed with it; one that does
// not (foo above) is listed without, and so false.
func TestGenerateEarlyStart(t *testing.T) {
	tree := map[string]string{}
	for k, v := range fooTree {
		tree[k] = v
	}
	tree["internal/provider/foo/early.go"] = "package foo\n\nconst EarlyStart = true\n"
	files, err := generate(writeTree(t, tree))
	if err != nil {
		t.Fatal(err)
	}
	if want := "{Name: foo.ProviderName, ConfigFile: foo.ConfigFile, ConfigType: foo.ConfigType, EarlyStart: foo.EarlyStart},"; !strings.Contains(string(files[providersGo]), want) {
		t.Errorf("%s:\n%s\nwant a line %s", providersGo, files[providersGo], want)
	}
}

func TestGenerateRejectsBrokenConventions(t *testing.T) {
	tests := []struct {
		name    string
		change  map[string]string // files replaced in fooTree ("" deletes)
		wantErr string
	}{
		{"provider without ConfigFile", map[string]string{
			"internal/provider/foo/cloud.go": "package foo\n\nconst ProviderName = \"foo\"\n\nvar ConfigType = 1\n",
		}, "internal/provider/foo: a provider (it declares ProviderName) must declare const ConfigFile"},
		{"provider without ConfigType", map[string]string{
			"internal/provider/foo/cloud.go": "package foo\n\nconst ProviderName = \"foo\"\n\nconst ConfigFile = \"f\"\n",
		}, "must declare var ConfigType"},
		{"ConfigFile not a literal", map[string]string{
			"internal/provider/foo/cloud.go": "package foo\n\nconst ProviderName = \"foo\"\n\nconst ConfigFile = config.File\n\nvar ConfigType = 1\n",
		}, "const ConfigFile must be a string literal"},
		{"two providers, one name", map[string]string{
			"internal/provider/bar/cloud.go": "package bar\n\nconst ProviderName = \"foo\"\n\nconst ConfigFile = \"f\"\n\nvar ConfigType = 1\n",
		}, `two packages have the same ProviderName foo`},
		{"directive without a name", map[string]string{
			"pkg/cloudsim/foo/dialect.go": "package foo\n\nconst DialectName = \"foo\"\n\n//cloudsim:dialect\nfunc New(c *core.Core, p *dataplane.Plane, o Options) (*Dialect, error)\n",
		}, "followed by the exported Go name"},
		{"constructor without the data plane", map[string]string{
			"pkg/cloudsim/foo/dialect.go": "package foo\n\nconst DialectName = \"foo\"\n\n//cloudsim:dialect Foo\nfunc New(c *core.Core, o Options) (*Dialect, error)\n",
		}, "constructor New must be func(*core.Core, *dataplane.Plane, Options) (*Dialect, error)"},
		{"dialect without DialectName", map[string]string{
			"pkg/cloudsim/foo/dialect.go": "package foo\n\n//cloudsim:dialect Foo\nfunc New(c *core.Core, p *dataplane.Plane, o Options) (*Dialect, error)\n",
		}, "pkg/cloudsim/foo: a dialect package must declare const DialectName"},
		{"a dialect package named core", map[string]string{
			"pkg/cloudsim/foo/dialect.go": "package core\n\nconst DialectName = \"foo\"\n\n//cloudsim:dialect Foo\nfunc New(c *core.Core, p *dataplane.Plane, o Options) (*Dialect, error)\n",
		}, "two packages have the same package core"},
		{"no section in cloudsim.go", map[string]string{
			"pkg/cloudsim/cloudsim.go": "package cloudsim\n\ntype Options struct{}\n",
		}, `pkg/cloudsim/cloudsim.go: no line "// BEGIN GENERATED: dialect options`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree := map[string]string{}
			for k, v := range fooTree {
				tree[k] = v
			}
			for k, v := range tc.change {
				tree[k] = v
			}
			_, err := generate(writeTree(t, tree))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}
