package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// TestAttachSBOMs: each platform image of the layout gets one SBOM
// artifact (artifactType CycloneDX, the empty config) whose subject is
// that image's manifest and whose layer is that platform's SBOM, byte for
// byte; attaching twice gives the same digests.
func TestAttachSBOMs(t *testing.T) {
	dir := t.TempDir()
	bins, sboms := map[string]string{}, map[v1.Hash][]byte{}
	for _, p := range Platforms {
		bin := filepath.Join(dir, "bin-"+p.Architecture)
		if err := os.WriteFile(bin, []byte("binary for "+p.Architecture), 0o755); err != nil {
			t.Fatal(err)
		}
		bins[p.OS+"/"+p.Architecture] = bin
		if err := os.WriteFile(sbomPath(dir, "demo", p), []byte(`{"bomFormat":"CycloneDX","arch":"`+p.Architecture+`"}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := BuildIndex(Spec{Name: "demo", Binaries: bins})
	if err != nil {
		t.Fatal(err)
	}
	images, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range images.Manifests {
		b, err := os.ReadFile(sbomPath(dir, "demo", *d.Platform))
		if err != nil {
			t.Fatal(err)
		}
		sboms[d.Digest] = b
	}

	var digests [2][]v1.Hash
	for run := range digests {
		lp, err := layout.Write(filepath.Join(dir, "layout", string(rune('a'+run))), empty.Index)
		if err != nil {
			t.Fatal(err)
		}
		if err := lp.AppendIndex(idx); err != nil {
			t.Fatal(err)
		}
		if err := AttachSBOMs(lp, idx, "demo", dir); err != nil {
			t.Fatal(err)
		}
		top, err := lp.ImageIndex()
		if err != nil {
			t.Fatal(err)
		}
		m, err := top.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		found := map[v1.Hash]bool{}
		for _, d := range m.Manifests {
			if d.ArtifactType != SBOMMediaType {
				continue
			}
			digests[run] = append(digests[run], d.Digest)
			rc, err := lp.Blob(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(rc)
			rc.Close()
			var am v1.Manifest
			if err := json.Unmarshal(raw, &am); err != nil {
				t.Fatal(err)
			}
			if am.Subject == nil || sboms[am.Subject.Digest] == nil || am.ArtifactType != SBOMMediaType ||
				am.Config.MediaType != "application/vnd.oci.empty.v1+json" || am.Config.Size != 2 || len(am.Layers) != 1 {
				t.Fatalf("SBOM artifact %s: %s", d.Digest, raw)
			}
			lrc, err := lp.Blob(am.Layers[0].Digest)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(lrc)
			lrc.Close()
			if string(got) != string(sboms[am.Subject.Digest]) {
				t.Errorf("the SBOM of image %s is %s, want %s", am.Subject.Digest, got, sboms[am.Subject.Digest])
			}
			found[am.Subject.Digest] = true
		}
		if len(found) != len(Platforms) {
			t.Fatalf("SBOM artifacts for %d images, want one per platform (%d)", len(found), len(Platforms))
		}
	}
	if len(digests[0]) != len(digests[1]) || digests[0][0] != digests[1][0] || digests[0][1] != digests[1][1] {
		t.Errorf("two runs: SBOM artifact digests %v and %v, want equal", digests[0], digests[1])
	}
}
