package cvmlookup

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"
)

// The provider reads these fields of an instance (internal/provider/tencentcloud
// instances.go: the id, name and state for the mapping and the lifecycle,
// zone and type for the labels, the addresses; the VPC here). kept must
// carry each, and nothing else.
func TestKeptIsWhatTheProviderReads(t *testing.T) {
	full := &cvm.Instance{
		InstanceId: common.StringPtr("ins-1"), InstanceName: common.StringPtr("n1"), InstanceState: common.StringPtr("RUNNING"),
		InstanceType: common.StringPtr("S5.LARGE8"), PrivateIpAddresses: common.StringPtrs([]string{"10.0.0.1"}),
		PublicIpAddresses:   common.StringPtrs([]string{"203.0.113.1"}),
		Placement:           &cvm.Placement{Zone: common.StringPtr("ap-guangzhou-3"), ProjectId: common.Int64Ptr(7)},
		VirtualPrivateCloud: &cvm.VirtualPrivateCloud{VpcId: common.StringPtr("vpc-1"), SubnetId: common.StringPtr("subnet-1")},
		OsName:              common.StringPtr("TencentOS"), Memory: common.Int64Ptr(8),
	}
	want := &cvm.Instance{
		InstanceId: full.InstanceId, InstanceName: full.InstanceName, InstanceState: full.InstanceState,
		InstanceType: full.InstanceType, PrivateIpAddresses: full.PrivateIpAddresses, PublicIpAddresses: full.PublicIpAddresses,
		Placement: &cvm.Placement{Zone: full.Placement.Zone}, VirtualPrivateCloud: &cvm.VirtualPrivateCloud{VpcId: full.VirtualPrivateCloud.VpcId},
	}
	if got := kept(full); !reflect.DeepEqual(got, want) {
		t.Errorf("kept = %s, want %s", js(got), js(want))
	}
	if got := kept(&cvm.Instance{InstanceId: full.InstanceId}); got.Placement != nil || got.VirtualPrivateCloud != nil {
		t.Errorf("kept made up a placement or VPC: %s", js(got))
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
