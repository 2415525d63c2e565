package oci

import (
	"fmt"

	"github.com/ccmkit/ccm/internal/oci/config/configtest"
)

// Test OCIDs, for the tests that need no cloud (the ones that do run
// cloudsim: cloudsim_test.go).
const (
	testCompartment = configtest.Compartment
	testVCN         = configtest.VCN
	testSubnet      = configtest.Subnet
	otherSubnet     = configtest.OtherSubnet
)

func instanceOCID(n int) string { return fmt.Sprintf("ocid1.instance.oc1.iad.aaaainstance%04d", n) }
