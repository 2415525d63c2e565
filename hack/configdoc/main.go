// Command configdoc writes the key tables of docs/configuration.md from the
// providers' ConfigKeys (package provider lists every provider). Only the sections between the "BEGIN GENERATED" and
// "END GENERATED" comments change; the prose around them is hand-written.
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

	"github.com/ccmkit/ccm/hack/internal/modroot"
	"github.com/ccmkit/ccm/internal/cloudconfig"
	"github.com/ccmkit/ccm/pkg/provider"
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
	var err error
	for _, p := range provider.All {
		doc = cloudconfig.AppendSection(doc, "`"+p.Name+"` keys", p.Name+" keys")
		if doc, err = cloudconfig.ReplaceSection(doc, p.Name+" keys", cloudconfig.KeyTable(p.ConfigKeys)); err != nil {
			return nil, fmt.Errorf("provider %s: %w", p.Name, err)
		}
	}
	return doc, nil
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
