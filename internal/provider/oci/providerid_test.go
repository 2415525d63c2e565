package oci

import (
	"strings"
	"testing"

	"github.com/ccmkit/ccm/internal/oci/config"
	"github.com/ccmkit/ccm/internal/oci/config/configtest"
)

func TestParseProviderID(t *testing.T) {
	id := instanceOCID(1)
	tests := []struct {
		in, want, err string
	}{
		{in: "oci://" + id, want: id},
		{in: id, want: id},
		{in: "oci://ocid1.instance.oc1.phx.abyhqljrx", want: "ocid1.instance.oc1.phx.abyhqljrx"},
		{in: "oci://ocid1.instance.oc1..aaaa", want: "ocid1.instance.oc1..aaaa"},
		{in: "oci://ocid1.vnic.oc1.phx.x", err: "not an instance OCID"},
		{in: "oci://", err: "not an instance OCID"},
		{in: "aws:///us-east-1a/i-1", err: "not an OCI providerID"},
		{in: "ocid1.instance", err: "not an OCI providerID"},
	}
	for _, tt := range tests {
		got, err := parseProviderID(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parse(%q) err = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parse(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if formatProviderID(id) != "oci://"+id {
		t.Error("format")
	}
}

// The upstream crash: a config without a loadBalancer section must work.
func TestNewWithMinimalConfig(t *testing.T) {
	cfg, err := config.Load(strings.NewReader(configtest.Valid("")))
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if _, ok := c.LoadBalancer(); !ok {
		t.Error("no LoadBalancer without a loadBalancer section")
	}
}
