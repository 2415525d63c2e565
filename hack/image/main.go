package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Usage (see `make image`):
//
//	go run . --bin-dir ../../bin --out ../../bin/image --repo ghcr.io/ccmkit --version v1.2.3 --revision <sha> [--push]
//
// --bin-dir holds linux_amd64/ and linux_arm64/, each with both binaries.
func main() {
	binDir := flag.String("bin-dir", "bin", "directory with linux_amd64/ and linux_arm64/ holding the static binaries")
	out := flag.String("out", "bin/image", "where to write the OCI layouts and docker-load tarballs")
	repo := flag.String("repo", "ghcr.io/ccmkit", "registry and namespace; images are <repo>/<binary>:<version>")
	version := flag.String("version", "devel", "the image tag and org.opencontainers.image.version")
	revision := flag.String("revision", "unknown", "org.opencontainers.image.revision")
	source := flag.String("source", "https://github.com/ccmkit/ccm", "org.opencontainers.image.source")
	push := flag.Bool("push", os.Getenv("IMAGE_PUSH") == "1", "push the multi-platform indexes to the registry (default: $IMAGE_PUSH=1)")
	sbomDir := flag.String("sbom-dir", "", "if set, attach to each image in its OCI layout the SBOM of its binary from this directory (<binary>-linux-<arch>.cdx.json, as `make release` writes them)")
	flag.Parse()
	if err := run(*binDir, *out, *repo, *version, *revision, *source, *sbomDir, *push); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(binDir, out, repo, version, revision, source, sbomDir string, push bool) error {
	for _, bin := range []string{"cloud-controller-manager", "cloudsim"} {
		spec := Spec{Name: bin, Binaries: map[string]string{}, Labels: map[string]string{
			"org.opencontainers.image.title":    bin,
			"org.opencontainers.image.source":   source,
			"org.opencontainers.image.version":  version,
			"org.opencontainers.image.revision": revision,
			"org.opencontainers.image.licenses": "Apache-2.0",
		}}
		for _, p := range Platforms {
			spec.Binaries[p.OS+"/"+p.Architecture] = filepath.Join(binDir, p.OS+"_"+p.Architecture, bin)
		}
		idx, err := BuildIndex(spec)
		if err != nil {
			return err
		}
		ref, err := name.NewTag(repo + "/" + bin + ":" + version)
		if err != nil {
			return fmt.Errorf("image reference for %s: %w", bin, err)
		}
		dir := filepath.Join(out, bin)
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		lp, err := layout.Write(dir, empty.Index)
		if err != nil {
			return fmt.Errorf("OCI layout %s: %w", dir, err)
		}
		if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref.String()})); err != nil {
			return fmt.Errorf("OCI layout %s: %w", dir, err)
		}
		digest, err := idx.Digest()
		if err != nil {
			return err
		}
		fmt.Printf("%s: index %s (OCI layout %s)\n", ref, digest, dir)
		if sbomDir != "" {
			if err := AttachSBOMs(lp, idx, bin, sbomDir); err != nil {
				return err
			}
		}
		// docker load takes one platform per tarball.
		for _, p := range Platforms {
			img, err := imageFor(idx, p.Architecture)
			if err != nil {
				return err
			}
			path := filepath.Join(out, fmt.Sprintf("%s-%s-%s.tar", bin, p.OS, p.Architecture))
			if err := tarball.WriteToFile(path, ref, img); err != nil {
				return fmt.Errorf("docker tarball %s: %w", path, err)
			}
			fmt.Printf("  %s/%s: docker load -i %s\n", p.OS, p.Architecture, path)
		}
		if push {
			if err := remote.WriteIndex(ref, idx, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
				return fmt.Errorf("pushing %s: %w", ref, err)
			}
			fmt.Printf("  pushed %s\n", ref)
		}
	}
	return nil
}
