package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// providerPkg is one provider package, internal/provider/<dir>.
type providerPkg struct {
	Dir, Pkg, ImportPath string
	Name                 string // the value of ProviderName: --cloud-provider
	ConfigFile           string // the value of ConfigFile
	EarlyStart           bool   // it declares const EarlyStart (Provider.EarlyStart)
}

// dialectPkg is one cloudsim dialect package, pkg/cloudsim/<dir>.
type dialectPkg struct {
	Dir, Pkg, ImportPath string
	GoName               string // from the directive: the Options field and Sim method ("Tencent")
	Ctor                 string // the constructor marked with the directive ("NewCloud")
	Opts                 string // its options type ("CloudOptions")
	Handle               string // the type it returns a pointer to ("Cloud")
}

// dialectDirective marks a dialect's constructor.
const dialectDirective = "//cloudsim:dialect"

// goPackage is the parsed non-test Go files of one directory.
type goPackage struct {
	dir   string // relative to the root, slash-separated
	name  string
	fset  *token.FileSet
	files []*ast.File
}

// parseDirs parses each directory directly under root/rel that holds Go
// files, in name order.
func parseDirs(root, rel string) ([]goPackage, error) {
	entries, err := os.ReadDir(filepath.Join(root, rel))
	if err != nil {
		return nil, err
	}
	var pkgs []goPackage
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := rel + "/" + e.Name()
		p, err := parsePackage(root, dir)
		if err != nil {
			return nil, err
		}
		if len(p.files) > 0 {
			pkgs = append(pkgs, p)
		}
	}
	return pkgs, nil
}

func parsePackage(root, dir string) (goPackage, error) {
	p := goPackage{dir: dir, fset: token.NewFileSet()}
	paths, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(dir), "*.go"))
	if err != nil {
		return p, err
	}
	sort.Strings(paths)
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(p.fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return p, err
		}
		p.name = f.Name.Name
		p.files = append(p.files, f)
	}
	return p, nil
}

// stringConst returns the value of the package's top-level constant name,
// which must be a string literal (this generator reads syntax, not types).
func (p goPackage) stringConst(name string) (value string, found bool, err error) {
	for _, f := range p.files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if id.Name != name {
						continue
					}
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							v, err := strconv.Unquote(lit.Value)
							return v, true, err
						}
					}
					return "", true, fmt.Errorf("%s: const %s must be a string literal (hack/registrygen reads it)", p.fset.Position(id.Pos()), name)
				}
			}
		}
	}
	return "", false, nil
}

// declares reports whether the package declares a top-level tok (const or
// var) called name.
func (p goPackage) declares(tok token.Token, name string) bool {
	for _, f := range p.files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != tok {
				continue
			}
			for _, spec := range gd.Specs {
				for _, id := range spec.(*ast.ValueSpec).Names {
					if id.Name == name {
						return true
					}
				}
			}
		}
	}
	return false
}

// scanProviders finds the provider packages under internal/provider: those
// declaring ProviderName. Any other package there (a shared helper) is not
// a provider and is left out.
func scanProviders(root, module string) ([]providerPkg, error) {
	pkgs, err := parseDirs(root, "internal/provider")
	if err != nil {
		return nil, err
	}
	var out []providerPkg
	var errs []error
	for _, p := range pkgs {
		name, found, err := p.stringConst("ProviderName")
		if err != nil || !found {
			errs = append(errs, err) // nil when not found: not a provider
			continue
		}
		file, found, err := p.stringConst("ConfigFile")
		switch {
		case err != nil:
			errs = append(errs, err)
			continue
		case !found:
			errs = append(errs, fmt.Errorf("%s: a provider (it declares ProviderName) must declare const ConfigFile, its cloud config's file name", p.dir))
			continue
		}
		if !p.declares(token.VAR, "ConfigType") {
			errs = append(errs, fmt.Errorf("%s: a provider (it declares ProviderName) must declare var ConfigType, its cloud config's struct type", p.dir))
			continue
		}
		out = append(out, providerPkg{Dir: p.dir, Pkg: p.name, ImportPath: module + "/" + p.dir, Name: name, ConfigFile: file,
			EarlyStart: p.declares(token.CONST, "EarlyStart")})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, uniqueNames(out, func(p providerPkg) []string {
		return []string{"package " + p.Pkg, "ProviderName " + p.Name}
	})
}

// scanDialects finds the dialect packages under pkg/cloudsim: those with a
// constructor marked //cloudsim:dialect.
func scanDialects(root, module string) ([]dialectPkg, error) {
	pkgs, err := parseDirs(root, "pkg/cloudsim")
	if err != nil {
		return nil, err
	}
	var out []dialectPkg
	var errs []error
	for _, p := range pkgs {
		d, found, err := p.dialect()
		switch {
		case err != nil:
			errs = append(errs, err)
		case found:
			d.ImportPath = module + "/" + p.dir
			out = append(out, d)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// The generated file imports core and flag too; the package name is
	// also the Sim's field holding the handle.
	reserved := []dialectPkg{{Pkg: "core"}, {Pkg: "flag"}}
	return out, uniqueNames(append(reserved, out...), func(d dialectPkg) []string {
		return []string{"package " + d.Pkg, "Go name " + d.GoName}
	})
}

// dialect reads the package's //cloudsim:dialect constructor, which must be
// func(*core.Core, *dataplane.Plane, Opts) (*Handle, error) in a package
// that declares DialectName.
func (p goPackage) dialect() (dialectPkg, bool, error) {
	var found []dialectPkg
	for _, f := range p.files {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Doc == nil {
				continue
			}
			for _, c := range fd.Doc.List {
				rest, ok := strings.CutPrefix(c.Text, dialectDirective)
				if !ok {
					continue
				}
				where := p.fset.Position(c.Pos())
				goName := strings.TrimSpace(rest)
				if !token.IsIdentifier(goName) || !token.IsExported(goName) || rest == goName {
					return dialectPkg{}, false, fmt.Errorf("%s: want %q followed by the exported Go name of the dialect's Options field and Sim method, e.g. %q", where, dialectDirective, dialectDirective+" Tencent")
				}
				opts, handle, ok := dialectSignature(fd)
				if !ok {
					return dialectPkg{}, false, fmt.Errorf("%s: the %s constructor %s must be func(*core.Core, *dataplane.Plane, Options) (*Dialect, error), with Options and Dialect types of the package", where, dialectDirective, fd.Name.Name)
				}
				found = append(found, dialectPkg{Dir: p.dir, Pkg: p.name, GoName: goName, Ctor: fd.Name.Name, Opts: opts, Handle: handle})
			}
		}
	}
	switch {
	case len(found) == 0:
		return dialectPkg{}, false, nil
	case len(found) > 1:
		return dialectPkg{}, false, fmt.Errorf("%s: %d constructors carry %s; a dialect package has one", p.dir, len(found), dialectDirective)
	}
	if !p.declares(token.CONST, "DialectName") {
		return dialectPkg{}, false, fmt.Errorf("%s: a dialect package must declare const DialectName, its name in the registry and in call records", p.dir)
	}
	return found[0], true, nil
}

// dialectSignature returns the options and handle type names of a
// constructor func(*core.Core, *dataplane.Plane, Opts) (*Handle, error).
func dialectSignature(fd *ast.FuncDecl) (opts, handle string, ok bool) {
	if fd.Recv != nil || fd.Type.TypeParams != nil {
		return "", "", false
	}
	params := fieldTypes(fd.Type.Params)
	results := fieldTypes(fd.Type.Results)
	if len(params) != 3 || len(results) != 2 ||
		!isPtrTo(params[0], "core", "Core") || !isPtrTo(params[1], "dataplane", "Plane") ||
		!isIdent(results[1], "error") {
		return "", "", false
	}
	o, ok1 := params[2].(*ast.Ident)
	star, ok2 := results[0].(*ast.StarExpr)
	if !ok1 || !ok2 {
		return "", "", false
	}
	h, ok3 := star.X.(*ast.Ident)
	if !ok3 {
		return "", "", false
	}
	return o.Name, h.Name, true
}

// fieldTypes lists a parameter list's types, one per parameter.
func fieldTypes(fl *ast.FieldList) []ast.Expr {
	if fl == nil {
		return nil
	}
	var out []ast.Expr
	for _, f := range fl.List {
		n := max(len(f.Names), 1)
		for range n {
			out = append(out, f.Type)
		}
	}
	return out
}

func isPtrTo(e ast.Expr, pkg, name string) bool {
	star, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && isIdent(sel.X, pkg) && sel.Sel.Name == name
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// uniqueNames fails when two items share a name that must be unique in
// the generated code (an import name, a field, a provider name).
func uniqueNames[T any](items []T, names func(T) []string) error {
	seen := map[string]bool{}
	for _, it := range items {
		for _, n := range names(it) {
			if strings.HasSuffix(n, " ") {
				continue // an empty name: not given
			}
			if seen[n] {
				return fmt.Errorf("two packages have the same %s: the generated code needs it unique", n)
			}
			seen[n] = true
		}
	}
	return nil
}

// modulePath reads the module path from root/go.mod.
func modulePath(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("%s: no module line", filepath.Join(root, "go.mod"))
}
