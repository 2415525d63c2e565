package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// SBOMMediaType is CycloneDX JSON's media type (registered with IANA), the
// artifactType of an image's SBOM.
const SBOMMediaType = "application/vnd.cyclonedx+json"

// emptyJSON is the OCI empty descriptor's content: the config of an
// artifact that has none (image-spec v1.1, manifest.md, "Guidance for an
// Empty Descriptor").
var emptyJSON = []byte("{}")

// sbomPath is where `make release` leaves the SBOM of a platform's binary
// (hack/release): <dir>/<name>-<os>-<arch>.cdx.json.
func sbomPath(dir, name string, p v1.Platform) string {
	return filepath.Join(dir, fmt.Sprintf("%s-%s-%s.cdx.json", name, p.OS, p.Architecture))
}

// AttachSBOMs adds to the layout lp, for each platform image of idx, the
// SBOM of its binary as an artifact that refers to the image, as OCI
// image-spec v1.1 prescribes for artifacts that describe an image
// (manifest.md: "subject", "artifactType"; the image has only its binary,
// so the binary's SBOM is the image's). A registry that implements the
// referrers API (distribution-spec v1.1) lists it for the image's digest
// once pushed; in the layout it is an entry of index.json.
func AttachSBOMs(lp layout.Path, idx v1.ImageIndex, name, sbomDir string) error {
	m, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	for _, d := range m.Manifests {
		if d.Platform == nil {
			continue
		}
		sbom, err := os.ReadFile(sbomPath(sbomDir, name, *d.Platform))
		if err != nil {
			return fmt.Errorf("SBOM of image %s for %s/%s: %w", name, d.Platform.OS, d.Platform.Architecture, err)
		}
		subject := v1.Descriptor{MediaType: d.MediaType, Size: d.Size, Digest: d.Digest}
		desc, err := writeSBOMArtifact(lp, subject, sbom, filepath.Base(sbomPath("", name, *d.Platform)))
		if err != nil {
			return fmt.Errorf("SBOM of image %s for %s/%s: %w", name, d.Platform.OS, d.Platform.Architecture, err)
		}
		fmt.Printf("  %s/%s: SBOM %s refers to %s\n", d.Platform.OS, d.Platform.Architecture, desc.Digest, d.Digest)
	}
	return nil
}

// writeSBOMArtifact writes the artifact manifest and its blobs into lp and
// lists it in index.json.
func writeSBOMArtifact(lp layout.Path, subject v1.Descriptor, sbom []byte, title string) (v1.Descriptor, error) {
	cfg, err := writeBlob(lp, types.OCIEmptyJSON, emptyJSON)
	if err != nil {
		return v1.Descriptor{}, err
	}
	cfg.Data = emptyJSON
	layer, err := writeBlob(lp, SBOMMediaType, sbom)
	if err != nil {
		return v1.Descriptor{}, err
	}
	layer.Annotations = map[string]string{"org.opencontainers.image.title": title}
	manifest := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  SBOMMediaType,
		Config:        cfg,
		Layers:        []v1.Descriptor{layer},
		Subject:       &subject,
		// Fixed, as every timestamp of the images: reproducible digests.
		Annotations: map[string]string{"org.opencontainers.image.created": epoch.Format(time.RFC3339)},
	}
	raw, err := json.Marshal(manifest)
	if err != nil {
		return v1.Descriptor{}, err
	}
	desc, err := writeBlob(lp, types.OCIManifestSchema1, raw)
	if err != nil {
		return v1.Descriptor{}, err
	}
	desc.ArtifactType = SBOMMediaType
	return desc, lp.AppendDescriptor(desc)
}

func writeBlob(lp layout.Path, mt types.MediaType, b []byte) (v1.Descriptor, error) {
	h, n, err := v1.SHA256(bytes.NewReader(b))
	if err != nil {
		return v1.Descriptor{}, err
	}
	if err := lp.WriteBlob(h, io.NopCloser(bytes.NewReader(b))); err != nil {
		return v1.Descriptor{}, err
	}
	return v1.Descriptor{MediaType: mt, Size: n, Digest: h}, nil
}
