package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/ccmkit/ccm/internal/cloudconfig"
)

// keyRows reads the key table of the struct type typeName from the Go
// source of the package in dir: a row per key, from the field's doc comment
// as cloudconfig.KeyDoc describes, in the order of the fields (a section's
// keys where the section is). It is an error for a key to have no row.
func keyRows(dir, typeName string) ([]cloudconfig.KeyDoc, error) {
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	structs := map[string]*ast.StructType{}
	for _, file := range files {
		ast.Inspect(file, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if st, ok := ts.Type.(*ast.StructType); ok {
					structs[ts.Name.Name] = st
				}
			}
			return true
		})
	}
	st, ok := structs[typeName]
	if !ok {
		return nil, fmt.Errorf("%s: no struct type %s", dir, typeName)
	}
	r := rowReader{structs: structs}
	r.walk(st, "")
	if len(r.problems) > 0 {
		return nil, fmt.Errorf("%s: %s", dir, strings.Join(r.problems, "; "))
	}
	return r.rows, nil
}

type rowReader struct {
	structs  map[string]*ast.StructType
	rows     []cloudconfig.KeyDoc
	problems []string
}

// walk adds the rows of st's keys, each prefixed with prefix. A field
// whose type is a struct of this package with keys is a section; any
// other field is one key (as cloudconfig.LeafKeys).
func (r *rowReader) walk(st *ast.StructType, prefix string) {
	for _, f := range st.Fields.List {
		if f.Tag == nil || len(f.Names) == 0 {
			continue
		}
		tag, _ := strconv.Unquote(f.Tag.Value)
		name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		key := prefix + name
		if id, ok := f.Type.(*ast.Ident); ok {
			if sub, ok := r.structs[id.Name]; ok && r.hasKeys(sub) {
				r.walk(sub, key+".")
				continue
			}
		}
		r.add(key, f.Doc.Text())
	}
}

func (r *rowReader) hasKeys(st *ast.StructType) bool {
	for _, f := range st.Fields.List {
		if f.Tag != nil && strings.Contains(f.Tag.Value, `json:"`) && !strings.Contains(f.Tag.Value, `json:"-"`) {
			return true
		}
	}
	return false
}

var tagLine = regexp.MustCompile(`^(Required|Env|Row): (.+)$`)

// add reads one field's comment: its first paragraph is the row's
// meaning, with tag lines; later paragraphs are notes for the code.
func (r *rowReader) add(key, comment string) {
	first, _, _ := strings.Cut(strings.TrimSpace(comment), "\n\n")
	row := cloudconfig.KeyDoc{Keys: []string{key}, Required: "no"}
	var doc []string
	joins := ""
	for _, line := range strings.Split(first, "\n") {
		m := tagLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			if line = strings.TrimSpace(line); line != "" {
				doc = append(doc, line)
			}
			continue
		}
		v := strings.TrimSuffix(m[2], ".")
		switch m[1] {
		case "Required":
			row.Required = v
		case "Env":
			row.Env = strings.Split(v, ", ")
		case "Row":
			joins = v
		}
	}
	row.Doc = strings.TrimSuffix(strings.Join(doc, " "), ".")
	switch {
	case joins != "":
		for i := range r.rows {
			if r.rows[i].Keys[0] == joins {
				r.rows[i].Keys = append(r.rows[i].Keys, key)
				return
			}
		}
		r.problems = append(r.problems, fmt.Sprintf("key %s: Row: %s names no earlier key with a row", key, joins))
	case row.Doc == "":
		r.problems = append(r.problems, fmt.Sprintf("key %s has no doc comment (see the package doc of internal/cloudconfig, KeyDoc)", key))
	default:
		r.rows = append(r.rows, row)
	}
}
