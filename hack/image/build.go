// Package main builds the CCM's and cloudsim's container images without a
// Docker engine: from the static binaries `make image` cross-compiles, one
// layer holding the binary, on no base image at all (no shell, no
// packages). The binaries embed their CA roots
// (golang.org/x/crypto/x509roots/fallback), so the image needs no CA file.
//
// It lives in its own module so that go-containerregistry stays out of the
// CCM's go.mod.
package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// epoch is every timestamp in the image: the same binaries give the same
// digest, whenever and wherever they are built.
var epoch = time.Unix(0, 0).UTC()

// nonRoot is distroless's "nonroot" user, which the chart's securityContext
// also names.
const nonRoot = "65532:65532"

// Spec says what one image holds.
type Spec struct {
	Name     string            // the binary's name: "cloud-controller-manager" or "cloudsim"
	Binaries map[string]string // platform ("linux/amd64") -> path of the static binary
	Labels   map[string]string // OCI labels (org.opencontainers.image.*)
}

// Platforms are the platforms every image is built for.
var Platforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}

// BuildIndex returns the multi-platform index of spec: one image per
// platform, each a single layer with /<name>, run as nonRoot.
func BuildIndex(spec Spec) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range Platforms {
		key := p.OS + "/" + p.Architecture
		bin, ok := spec.Binaries[key]
		if !ok {
			return nil, fmt.Errorf("image %s: no binary for %s", spec.Name, key)
		}
		img, err := buildImage(spec, p, bin)
		if err != nil {
			return nil, fmt.Errorf("image %s for %s: %w", spec.Name, key, err)
		}
		plat := p
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &plat}})
	}
	return idx, nil
}

func buildImage(spec Spec, p v1.Platform, bin string) (v1.Image, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	layerTar, err := singleFileTar("/"+spec.Name, data)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: epoch}, CreatedBy: "hack/image: COPY " + spec.Name + " /" + spec.Name}})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = p.OS, p.Architecture
	cfg.Created = v1.Time{Time: epoch}
	cfg.Config.User = nonRoot
	cfg.Config.Entrypoint = []string{"/" + spec.Name}
	cfg.Config.Labels = spec.Labels
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, err
	}
	return mutate.CreatedAt(img, v1.Time{Time: epoch})
}

// singleFileTar is a tar stream with one root-owned, world-executable file
// at path, with fixed timestamps.
func singleFileTar(path string, data []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{Name: path[1:], Mode: 0o755, Size: int64(len(data)), ModTime: epoch,
		Typeflag: tar.TypeReg, Uid: 0, Gid: 0, Format: tar.FormatUSTAR}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// imageFor is the image of idx for linux/<arch>.
func imageFor(idx v1.ImageIndex, arch string) (v1.Image, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.OS == "linux" && d.Platform.Architecture == arch {
			return idx.Image(d.Digest)
		}
	}
	return nil, fmt.Errorf("no linux/%s image in the index", arch)
}

// nameTag parses an image reference with a tag.
func nameTag(ref string) (name.Tag, error) { return name.NewTag(ref) }
