package main

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// TestImages builds the cloudsim image from the real command, for both
// platforms, the way `make image` does, and reads it back: what the index,
// the configs and the layers hold, that a second build gives the same
// digest, and that the amd64 binary taken out of its layer runs.
func TestImages(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("runs the linux/amd64 binary it builds") // CI is linux/amd64
	}
	dir := t.TempDir()
	bins := map[string]string{}
	for _, p := range Platforms {
		out := filepath.Join(dir, p.OS+"_"+p.Architecture, "cloudsim")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-X github.com/ccmkit/ccm/internal/buildinfo.version=v9.9.9-test",
			"-o", out, "./cmd/cloudsim")
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building cloudsim for %s/%s: %v\n%s", p.OS, p.Architecture, err, b)
		}
		bins[p.OS+"/"+p.Architecture] = out
	}
	labels := map[string]string{"org.opencontainers.image.version": "v9.9.9-test", "org.opencontainers.image.revision": "abc"}
	spec := Spec{Name: "cloudsim", Binaries: bins, Labels: labels}
	idx, err := BuildIndex(spec)
	if err != nil {
		t.Fatal(err)
	}
	again, err := BuildIndex(spec)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := idx.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Fatalf("two builds of the same binaries: digests %s and %s, want equal", d1, d2)
	}

	// Through the OCI layout and back, as a registry or `crane` would see it.
	lp, err := layout.Write(filepath.Join(dir, "layout"), idx)
	if err != nil {
		t.Fatal(err)
	}
	read, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := read.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 2 {
		t.Fatalf("index has %d manifests, want 2 (amd64, arm64)", len(m.Manifests))
	}
	for _, p := range Platforms {
		img, err := imageFor(read, p.Architecture)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Architecture != p.Architecture || cfg.OS != "linux" || cfg.Config.User != "65532:65532" ||
			strings.Join(cfg.Config.Entrypoint, " ") != "/cloudsim" || cfg.Config.Labels["org.opencontainers.image.version"] != "v9.9.9-test" ||
			!cfg.Created.IsZero() && cfg.Created.Unix() != 0 {
			t.Errorf("%s config: arch %s os %s user %q entrypoint %v labels %v created %v", p.Architecture, cfg.Architecture, cfg.OS,
				cfg.Config.User, cfg.Config.Entrypoint, cfg.Config.Labels, cfg.Created)
		}
		files := layerFiles(t, img)
		if len(files) != 1 || files[0].Name != "cloudsim" || files[0].Mode != 0o755 || files[0].Uid != 0 || files[0].ModTime.Unix() != 0 {
			t.Fatalf("%s layer: %+v, want only cloudsim, 0755, root-owned, at the epoch (no shell, no packages)", p.Architecture, files)
		}
		if p.Architecture == "amd64" {
			runFromLayer(t, img, dir)
		}
	}

	// The docker-load tarball carries the tag and the same image.
	img, _ := imageFor(idx, "amd64")
	ref, err := nameTag("ghcr.io/ccmkit/cloudsim:v9.9.9-test")
	if err != nil {
		t.Fatal(err)
	}
	tarPath := filepath.Join(dir, "cloudsim.tar")
	if err := tarball.WriteToFile(tarPath, ref, img); err != nil {
		t.Fatal(err)
	}
	loaded, err := tarball.ImageFromPath(tarPath, &ref)
	if err != nil {
		t.Fatal(err)
	}
	// docker load's format rewrites the manifest, not the config or layers.
	if a, b := configName(t, img), configName(t, loaded); a != b {
		t.Errorf("docker tarball image config %s, want %s", b, a)
	}
}

// runFromLayer unpacks the image's layer into an empty directory and runs
// its entrypoint with --version there: nothing else is in the image.
func runFromLayer(t *testing.T, img v1.Image, dir string) {
	t.Helper()
	root := filepath.Join(dir, "rootfs")
	layers, _ := img.Layers()
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(h.Name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, h.Name), b, os.FileMode(h.Mode)); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(filepath.Join(root, "cloudsim"), "--version")
	cmd.Dir, cmd.Env = root, []string{}
	out, err := cmd.Output()
	if err != nil || !strings.HasPrefix(string(out), "version v9.9.9-test, commit ") {
		t.Fatalf("cloudsim --version from the layer: %q, %v", out, err)
	}
}

func layerFiles(t *testing.T, img v1.Image) []*tar.Header {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %d, %v: want exactly one", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var out []*tar.Header
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h)
	}
}

func configName(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	return d
}
