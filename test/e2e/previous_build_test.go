//go:build e2e

package e2e

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// previousRelease is the commit of the previous release, the version
// TestUpgradeUnderTraffic upgrades from. There are no release tags yet: it
// is the main branch before this round's work. Once a release is made,
// move it to that release's tag or commit, so that the next release is
// tested upgrading from what users run (docs/operations.md).
const previousRelease = "e91a259e04ec339db47b7199d0eca079e3478129"

// previousCCM returns the CCM binary built from previousRelease, building
// it from the repository's own history (git archive, then go build with
// the module cache) once and caching it by commit under the user's cache
// directory, as the control plane's binaries are (make tools): CI runs in
// fresh clones, and a build takes about 2 minutes on 2 cores.
func previousCCM(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(cacheDir(), "ccm-"+previousRelease, "cloud-controller-manager")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	root := repoRoot()
	if err := exec.Command("git", "-C", root, "cat-file", "-e", previousRelease+"^{commit}").Run(); err != nil {
		shallow, _ := exec.Command("git", "-C", root, "rev-parse", "--is-shallow-repository").Output()
		hint := "fetch it (git fetch origin " + previousRelease + ")"
		if strings.TrimSpace(string(shallow)) == "true" {
			// Not a fault of the code under test: a shallow clone has no
			// history to build from, and no cached build came before it.
			t.Skipf("NOT RUN: the previous release %s is not in this shallow clone and not cached in %s: run git fetch --unshallow",
				previousRelease, filepath.Dir(bin))
		}
		t.Fatalf("the previous release %s is not in this repository's history: %s", previousRelease, hint)
	}
	src := t.TempDir()
	if err := extractCommit(root, previousRelease, src); err != nil {
		t.Fatalf("extract the previous release %s: %v", previousRelease, err)
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	// Built beside the cached path and renamed into it, so that a build
	// cut short never leaves a broken binary in the cache.
	tmp := fmt.Sprintf("%s.tmp-%d", bin, os.Getpid())
	ldflags := fmt.Sprintf("-X github.com/ccmkit/ccm/internal/buildinfo.version=%s -X github.com/ccmkit/ccm/internal/buildinfo.revision=%s",
		previousRelease[:7], previousRelease)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", tmp, "./cmd/cloud-controller-manager")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-mod=readonly")
	t.Logf("building the previous release %s into %s", previousRelease[:7], bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		_ = os.Remove(tmp)
		t.Fatalf("build the previous release %s: %v\n%s", previousRelease, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// cacheDir is ccmkit's directory in the user's cache, as the Makefile's.
func cacheDir() string {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "ccmkit")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "ccmkit")
}

// extractCommit writes the tree of commit into dir (git archive: no
// worktree is added to the repository).
func extractCommit(repo, commit, dir string) error {
	cmd := exec.Command("git", "-C", repo, "archive", "--format=tar", commit)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	extractErr := untar(out, dir)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git archive: %w: %s", err, stderr.String())
	}
	return extractErr
}

func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		path := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(path, filepath.Clean(dir)+string(filepath.Separator)) {
			return fmt.Errorf("archive entry %q leaves the directory", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr) //nolint:gosec // our own repository's files
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.Symlink(h.Linkname, path); err != nil {
				return err
			}
		}
	}
}
