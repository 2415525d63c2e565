package main

import (
	"bytes"
	"os"
	"testing"
)

// docs/configuration.md must hold what the generator writes from the
// providers' ConfigKeys.
func TestDocIsUpToDate(t *testing.T) {
	got, err := os.ReadFile(defaultDoc())
	if err != nil {
		t.Fatal(err)
	}
	want, err := render(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("docs/configuration.md is stale: run `go run ./hack/configdoc` and commit the result")
	}
}
