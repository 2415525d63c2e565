package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// buildCloudsim builds the repository's cloudsim into dir as `make
// release` does (CGO off, -trimpath), and returns its path.
func buildCloudsim(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "cloudsim-linux-"+runtime.GOARCH)
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./cmd/cloudsim")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/cloudsim: %v\n%s", err, b)
	}
	return out
}

// goVersionModules is what `go version -m` shows of the binary: the main
// module and every dependency, "path version" (a replaced dependency as
// the replacement it was built from).
func goVersionModules(t *testing.T, binary string) (main string, deps []string) {
	t.Helper()
	b, err := exec.Command("go", "version", "-m", binary).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 2 && f[0] == "mod":
			main = f[1]
		case len(f) >= 3 && f[0] == "dep":
			deps = append(deps, f[1]+" "+f[2])
		case len(f) >= 3 && f[0] == "=>": // the replacement of the dep above
			deps[len(deps)-1] = f[1] + " " + f[2]
		}
	}
	return main, deps
}

// TestSBOMListsTheBinarysModules: the SBOM of a real binary names its main
// module and exactly the dependencies `go version -m` shows, with their
// versions.
func TestSBOMListsTheBinarysModules(t *testing.T) {
	dir := t.TempDir()
	binary := buildCloudsim(t, dir)
	mainMod, deps := goVersionModules(t, binary)
	if mainMod != "github.com/ccmkit/ccm" || len(deps) < 20 {
		t.Fatalf("go version -m: main %q, %d deps; want github.com/ccmkit/ccm and its dependencies", mainMod, len(deps))
	}
	if err := WriteSBOMs(dir, "v9.9.9-test", "2026-11-28T12:00:00Z"); err != nil {
		t.Fatal(err)
	}
	if err := WriteSums(dir); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(binary + SBOMSuffix)
	if err != nil {
		t.Fatal(err)
	}
	var bom struct {
		BOMFormat, SpecVersion, SerialNumber string
		Metadata                             struct {
			Timestamp string
			Component struct{ Name, Version, Type string }
		}
		Components []struct{ Name, Version, Purl string }
	}
	if err := json.Unmarshal(raw, &bom); err != nil {
		t.Fatalf("the SBOM is not JSON: %v", err)
	}
	if bom.BOMFormat != "CycloneDX" || bom.Metadata.Component.Name != mainMod || bom.Metadata.Component.Version != "v9.9.9-test" ||
		bom.Metadata.Timestamp != "2026-11-28T12:00:00Z" || !strings.HasPrefix(bom.SerialNumber, "urn:uuid:") {
		t.Errorf("SBOM header: %s %s, main %+v, at %s, serial %s", bom.BOMFormat, bom.SpecVersion, bom.Metadata.Component, bom.Metadata.Timestamp, bom.SerialNumber)
	}
	var listed []string
	for _, c := range bom.Components {
		if c.Name == "std" {
			continue // the standard library, which go version -m shows as the Go version
		}
		listed = append(listed, c.Name+" "+c.Version)
	}
	slices.Sort(listed)
	slices.Sort(deps)
	if !slices.Equal(listed, deps) {
		for _, d := range deps {
			if !slices.Contains(listed, d) {
				t.Errorf("go version -m shows %s; the SBOM does not list it", d)
			}
		}
		for _, l := range listed {
			if !slices.Contains(deps, l) {
				t.Errorf("the SBOM lists %s; go version -m does not show it", l)
			}
		}
	}

	sums, err := os.ReadFile(filepath.Join(dir, SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{filepath.Base(binary), filepath.Base(binary) + SBOMSuffix} {
		if !strings.Contains(string(sums), "  "+name+"\n") {
			t.Errorf("SHA256SUMS does not cover %s:\n%s", name, sums)
		}
	}
	check := exec.Command("sha256sum", "-c", SumsFile)
	check.Dir = dir
	if b, err := check.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c: %v\n%s", err, b)
	}
}

// TestReproducible: two builds and two runs give the same SHA256SUMS.
func TestReproducible(t *testing.T) {
	var sums [2]string
	for i := range sums {
		dir := t.TempDir()
		buildCloudsim(t, dir)
		if err := WriteSBOMs(dir, "", time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC).Format(time.RFC3339)); err != nil {
			t.Fatal(err)
		}
		if err := WriteSums(dir); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, SumsFile))
		if err != nil {
			t.Fatal(err)
		}
		sums[i] = string(b)
	}
	if sums[0] != sums[1] {
		t.Errorf("two runs differ:\n%s\n%s", sums[0], sums[1])
	}
}
