// Command configdoc writes the key tables of docs/configuration.md from the
// doc comments of the fields of each provider's ConfigType (package
// provider lists every provider), read from the Go source of its config
// package (keys.go; the convention is cloudconfig.KeyDoc's). Only the
// sections between the "BEGIN GENERATED" and "END GENERATED" comments
// change; the prose around them is hand-written.
//
//	go run ./hack/configdoc            # rewrite docs/configuration.md
//	go run ./hack/configdoc -check     # exit 1 if it is stale
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/ccmkit/ccm/hack/internal/modroot"
	"github.com/ccmkit/ccm/internal/cloudconfig"
	"github.com/ccmkit/ccm/internal/provider"
)

func main() {
	path := flag.String("doc", defaultDoc(), "the Markdown file to update")
	check := flag.Bool("check", false, "only report whether the file is up to date")
	flag.Parse()

	old, err := os.ReadFile(*path)
	if err != nil {
		fail(err)
	}
	doc, err := render(old)
	if err != nil {
		fail(fmt.Errorf("%s: %w", *path, err))
	}
	switch {
	case bytes.Equal(old, doc):
		return
	case *check:
		fail(fmt.Errorf("%s is stale: run go run ./hack/configdoc", *path))
	}
	if err := os.WriteFile(*path, doc, 0o644); err != nil {
		fail(err)
	}
}

// render returns doc with every generated section rewritten: one per
// provider, "<name> keys", added at the end for a provider that has none.
func render(doc []byte) ([]byte, error) {
	for _, p := range provider.All {
		rows, err := providerRows(p)
		if err != nil {
			return nil, err
		}
		doc = cloudconfig.AppendSection(doc, "`"+p.Name+"` keys", p.Name+" keys")
		if doc, err = cloudconfig.ReplaceSection(doc, p.Name+" keys", cloudconfig.KeyTable(rows)); err != nil {
			return nil, fmt.Errorf("provider %s: %w", p.Name, err)
		}
	}
	return doc, nil
}

// providerRows reads p's key table from the source of its config package.
func providerRows(p provider.Provider) ([]cloudconfig.KeyDoc, error) {
	rows, err := keyRows(sourceDir(p.ConfigType), p.ConfigType.Name())
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", p.Name, err)
	}
	return rows, nil
}

// sourceDir is the directory of t's package in the checkout the working
// directory is in.
func sourceDir(t reflect.Type) string {
	root, err := modroot.Find()
	if err != nil {
		root = "."
	}
	module := strings.TrimSuffix(reflect.TypeFor[cloudconfig.KeyDoc]().PkgPath(), "/internal/cloudconfig")
	return filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(t.PkgPath(), module+"/")))
}

// defaultDoc is docs/configuration.md of the checkout the working directory
// is in.
func defaultDoc() string {
	root, err := modroot.Find()
	if err != nil {
		return "docs/configuration.md"
	}
	return filepath.Join(root, "docs", "configuration.md")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "configdoc:", err)
	os.Exit(1)
}
