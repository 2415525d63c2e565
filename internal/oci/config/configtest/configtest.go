// Package configtest gives tests a valid OCI cloud config: one API key per
// process (generating one is slow under -race) and the OCIDs it names.
package configtest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
	"sync"

	"github.com/ccmkit/ccm/internal/oci/config"
)

// The OCIDs of Valid's config, and others beside them for negative cases.
const (
	Tenancy     = "ocid1.tenancy.oc1..aaaatenancy"
	User        = "ocid1.user.oc1..aaaauser"
	Compartment = "ocid1.compartment.oc1..aaaacompartment"
	VCN         = "ocid1.vcn.oc1.iad.aaaavcn"
	Subnet      = "ocid1.subnet.oc1.iad.aaaasubnet"
	OtherVCN    = "ocid1.vcn.oc1.iad.aaaaother"
	OtherSubnet = "ocid1.subnet.oc1.iad.aaaaothersubnet"
	Region      = "us-ashburn-1"
)

var key = sync.OnceValues(func() (*rsa.PrivateKey, string) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	p := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	return k, string(p)
})

// Key is the API key of Valid's config.
func Key() *rsa.PrivateKey { k, _ := key(); return k }

// PEM is Key in PEM.
func PEM() string { _, p := key(); return p }

// Fingerprint is Key's fingerprint.
func Fingerprint() string { return config.Fingerprint(Key()) }

// Indent indents every line of s by n spaces, for a YAML block scalar.
func Indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+pad)
}

// Valid returns a complete config with extra appended (YAML).
func Valid(extra string) string {
	return fmt.Sprintf(`auth:
  region: %s
  tenancy: %s
  user: %s
  fingerprint: %s
  key: |
%s
compartment: %s
vcn: %s
`, Region, Tenancy, User, Fingerprint(), Indent(PEM(), 4), Compartment, VCN) + extra
}
