package main

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ccmkit/ccm/internal/cloudconfig"
	"github.com/ccmkit/ccm/internal/provider"
)

// Every key of every provider's config has a row, read from the source
// (the same keys, in the same order, as the decoder's struct tags give),
// and every row has a meaning.
func TestEveryKeyHasARow(t *testing.T) {
	for _, p := range provider.All {
		rows, err := providerRows(p)
		if err != nil {
			t.Errorf("%s: %v", p.Name, err)
			continue
		}
		var keys []string
		for _, r := range rows {
			keys = append(keys, r.Keys...)
			if r.Doc == "" || r.Required == "" {
				t.Errorf("%s: row %v has no meaning or no required column", p.Name, r.Keys)
			}
		}
		slices.Sort(keys)
		want := cloudconfig.LeafKeys(p.ConfigType)
		slices.Sort(want)
		if !slices.Equal(keys, want) {
			t.Errorf("%s: rows name keys %v, the config has %v", p.Name, keys, want)
		}
	}
}

const fixture = `package x

type Config struct {
	// the a, default ` + "`1`" + `.
	// Required: yes.
	// Env: X_A, X_B.
	//
	// Notes for the code, not rendered.
	A string ` + "`json:\"a\"`" + `
	// Row: a.
	//
	// AFile is a's file.
	AFile string ` + "`json:\"a_file,omitempty\"`" + `
	// In is a section.
	In Inner ` + "`json:\"in\"`" + `
	Skip string ` + "`json:\"-\"`" + `
}

type Inner struct {
	// the b; see
	// [x](x.md).
	B int ` + "`json:\"b\"`" + `
	LAST
}
`

func TestKeyRows(t *testing.T) {
	for _, tc := range []struct {
		name, last string
		want       []cloudconfig.KeyDoc
		wantErr    string
	}{
		{name: "documented", want: []cloudconfig.KeyDoc{
			{Keys: []string{"a", "a_file"}, Env: []string{"X_A", "X_B"}, Required: "yes", Doc: "the a, default `1`"},
			{Keys: []string{"in.b"}, Required: "no", Doc: "the b; see [x](x.md)"},
		}},
		{name: "a key without a comment", last: "C int `json:\"c\"`", wantErr: "key in.c has no doc comment"},
		{name: "a Row naming no earlier key", last: "// Row: nope.\n\tC int `json:\"c\"`", wantErr: "key in.c: Row: nope names no earlier key"},
		{name: "a Row after its key", last: "// Row: in.b.\n\tC int `json:\"c\"`", want: []cloudconfig.KeyDoc{
			{Keys: []string{"a", "a_file"}, Env: []string{"X_A", "X_B"}, Required: "yes", Doc: "the a, default `1`"},
			{Keys: []string{"in.b", "in.c"}, Required: "no", Doc: "the b; see [x](x.md)"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src := strings.Replace(fixture, "LAST", tc.last, 1)
			if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := keyRows(dir, "Config")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("rows\n%#v\nwant\n%#v", got, tc.want)
			}
		})
	}
}
