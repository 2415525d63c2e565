// Package modroot finds the checkout the hack commands work on.
//
// The commands run as `go run ./hack/x` from the checkout's root and as
// tests in their own directories, sometimes built with -trimpath (make
// unit), where runtime.Caller names no directory on disk. The working
// directory is right in every case: the root is the nearest directory above
// it with this module's go.mod.
package modroot

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Module is the module whose checkout Find looks for.
const Module = "github.com/ccmkit/ccm"

// Find is the root of the checkout the working directory is in.
func Find() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the %s checkout: %w", Module, err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if moduleOf(filepath.Join(dir, "go.mod")) == Module {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no go.mod of module %s in %s or above it", Module, wd)
		}
	}
}

// moduleOf is the module path that a go.mod declares ("" if none).
func moduleOf(gomod string) string {
	f, err := os.Open(gomod)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
