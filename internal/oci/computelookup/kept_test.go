package computelookup

import (
	"reflect"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"
)

// The provider reads these fields of an instance (internal/provider/oci
// instances.go: the id, name and state for the mapping and the lifecycle,
// compartment, region, domains and shape for the providerID and the labels;
// the creation time and domain here). kept must carry each, and nothing else.
func TestKeptIsWhatTheProviderReads(t *testing.T) {
	created := common.SDKTime{Time: time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)}
	full := core.Instance{
		Id: common.String("ocid1.instance.oc1..a"), DisplayName: common.String("n1"), LifecycleState: core.InstanceLifecycleStateRunning,
		CompartmentId: common.String("ocid1.compartment.oc1..c"), Region: common.String("us-ashburn-1"),
		AvailabilityDomain: common.String("AD-1"), FaultDomain: common.String("FAULT-DOMAIN-2"),
		Shape: common.String("VM.Standard.E4.Flex"), TimeCreated: &created,
		Metadata:     map[string]string{"user_data": "I2Nsb3VkLWNvbmZpZwo=", "ssh_authorized_keys": "ssh-ed25519 AAAA"},
		FreeformTags: map[string]string{"team": "a"}, ImageId: common.String("ocid1.image.oc1..i"),
	}
	want := core.Instance{
		Id: full.Id, DisplayName: full.DisplayName, LifecycleState: full.LifecycleState, CompartmentId: full.CompartmentId,
		Region: full.Region, AvailabilityDomain: full.AvailabilityDomain, FaultDomain: full.FaultDomain,
		Shape: full.Shape, TimeCreated: full.TimeCreated,
	}
	if got := kept(full); !reflect.DeepEqual(got, want) {
		t.Errorf("kept = %v, want %v", got, want)
	}
}
