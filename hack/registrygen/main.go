// Command registrygen writes every list that names each cloud, from the
// cloud's own packages, so that adding a cloud is adding its packages and
// running `make generate` (docs/architecture.md, "Adding a third cloud"):
//
//   - internal/provider/zz_generated.providers.go: provider.All, one entry per
//     provider package internal/provider/<dir>, that is, one declaring
//     `const ProviderName`; it must also declare `const ConfigFile` (a string
//     literal: the chart's default file name for its cloud config) and
//     `var ConfigType` (its cloud config's struct type, whose field comments
//     are its key table in docs/configuration.md); a provider that may be
//     built as soon as the flags are parsed declares `const EarlyStart`
//     (provider.Provider.EarlyStart);
//   - charts/cloud-controller-manager/templates/_providers.tpl: the chart's
//     provider names, each with its ConfigFile;
//   - pkg/cloudsim/zz_generated.dialects.go: cloudsim's registry of dialects,
//     the Sim's typed handles and their accessors, and the XxxOptions
//     aliases, one per dialect package pkg/cloudsim/<dir>, that is, one whose
//     constructor carries the directive `//cloudsim:dialect Xxx` (Xxx names
//     the Options field and the Sim method);
//   - the "dialect options" section of the Options struct in
//     pkg/cloudsim/cloudsim.go (a struct literal cannot set an embedded
//     struct's fields, so the fields are written into the struct itself).
//
// Usage:
//
//	go run ./hack/registrygen          # rewrite the stale files
//	go run ./hack/registrygen -check   # exit 1 naming the stale files
//
// It reads the packages' syntax only (go/parser): whether the names it
// finds have the right types is left to the compiler, which checks the
// generated code.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/ccmkit/ccm/hack/internal/modroot"
)

func main() {
	root := flag.String("root", defaultRoot(), "the repository's root directory")
	check := flag.Bool("check", false, "only report the files that are stale")
	flag.Parse()

	files, err := generate(*root)
	if err != nil {
		fail(err)
	}
	stale, err := staleFiles(*root, files)
	if err != nil {
		fail(err)
	}
	if *check {
		if len(stale) > 0 {
			fail(fmt.Errorf("stale: %v: run `make generate` (go run ./hack/registrygen)", stale))
		}
		return
	}
	for _, rel := range stale {
		if err := os.WriteFile(filepath.Join(*root, rel), files[rel], 0o644); err != nil {
			fail(err)
		}
		fmt.Println("registrygen: wrote", rel)
	}
}

// staleFiles names, in order, the files of want whose content on disk
// differs (or that are missing).
func staleFiles(root string, want map[string][]byte) ([]string, error) {
	var stale []string
	for rel, content := range want {
		got, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		if !bytes.Equal(got, content) {
			stale = append(stale, rel)
		}
	}
	sort.Strings(stale)
	return stale, nil
}

// defaultRoot is the checkout the working directory is in.
func defaultRoot() string {
	root, err := modroot.Find()
	if err != nil {
		return "."
	}
	return root
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "registrygen:", err)
	os.Exit(1)
}
