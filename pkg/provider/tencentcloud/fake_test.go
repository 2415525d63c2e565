package tencentcloud

import (
	"context"
	"slices"
	"sync"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	tcerr "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/errors"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/internal/tencent/config"
)

const (
	testRegion = "ap-guangzhou"
	testVPC    = "vpc-aaaa1111"
	otherVPC   = "vpc-bbbb2222"
)

// fakeCVM is an in-memory DescribeInstances with the documented limits.
// Set respond to answer (or fail) regardless of the model.
type fakeCVM struct {
	mu        sync.Mutex
	instances []*cvm.Instance
	calls     []*cvm.DescribeInstancesRequest
	respond   func(req *cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error)
}

func (f *fakeCVM) DescribeInstancesWithContext(_ context.Context, req *cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, req)
	if f.respond != nil {
		return f.respond(req)
	}
	return f.model(req)
}

func sdkErr(code string) error {
	return tcerr.NewTencentCloudSDKError(code, "fake "+code, "req-1")
}

func (f *fakeCVM) model(req *cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) {
	limit := int64(20)
	if req.Limit != nil {
		limit = *req.Limit
	}
	if limit < 0 || limit > 100 {
		return nil, sdkErr("InvalidParameterValue.LimitExceeded")
	}
	if len(req.InstanceIds) > 0 && len(req.Filters) > 0 {
		return nil, sdkErr("InvalidParameterCoexist")
	}
	if len(req.InstanceIds) > 100 || len(req.Filters) > 10 {
		return nil, sdkErr("InvalidParameterValue.LimitExceeded")
	}
	var match []*cvm.Instance
	for _, ins := range f.instances {
		ok, err := matches(ins, req)
		if err != nil {
			return nil, err
		}
		if ok {
			match = append(match, ins)
		}
	}
	offset := int64(0)
	if req.Offset != nil {
		offset = *req.Offset
	}
	page := match[min(offset, int64(len(match))):min(offset+limit, int64(len(match)))]
	return answer(int64(len(match)), page...), nil
}

func matches(ins *cvm.Instance, req *cvm.DescribeInstancesRequest) (bool, error) {
	if len(req.InstanceIds) > 0 {
		return slices.Contains(common.StringValues(req.InstanceIds), *ins.InstanceId), nil
	}
	for _, flt := range req.Filters {
		vals := common.StringValues(flt.Values)
		if len(vals) > 5 {
			return false, sdkErr("InvalidFilterValue.LimitExceeded")
		}
		var have []string
		switch *flt.Name {
		case "vpc-id":
			have = []string{instanceVPC(ins)}
		case "private-ip-address":
			have = common.StringValues(ins.PrivateIpAddresses)
		case "instance-name":
			have = []string{deref(ins.InstanceName)}
		default:
			return false, sdkErr("InvalidFilter")
		}
		if !slices.ContainsFunc(have, func(h string) bool { return slices.Contains(vals, h) }) {
			return false, nil
		}
	}
	return true, nil
}

func answer(total int64, set ...*cvm.Instance) *cvm.DescribeInstancesResponse {
	resp := cvm.NewDescribeInstancesResponse()
	resp.Response = &cvm.DescribeInstancesResponseParams{
		TotalCount:  common.Int64Ptr(total),
		InstanceSet: set,
		RequestId:   common.StringPtr("req-1"),
	}
	return resp
}

// ins describes a test instance.
type ins struct {
	id, name, zone, vpc, state, typ string
	private, public                 []string
}

func (s ins) build() *cvm.Instance {
	i := &cvm.Instance{
		InstanceId:         common.StringPtr(s.id),
		InstanceName:       common.StringPtr(s.name),
		InstanceType:       common.StringPtr(s.typ),
		InstanceState:      common.StringPtr(s.state),
		PrivateIpAddresses: common.StringPtrs(s.private),
		PublicIpAddresses:  common.StringPtrs(s.public),
		Placement:          &cvm.Placement{Zone: common.StringPtr(s.zone)},
		VirtualPrivateCloud: &cvm.VirtualPrivateCloud{
			VpcId: common.StringPtr(s.vpc),
		},
	}
	if s.vpc == "" {
		i.VirtualPrivateCloud.VpcId = common.StringPtr(testVPC)
	}
	if s.zone == "" {
		i.Placement.Zone = common.StringPtr("ap-guangzhou-3")
	}
	if s.state == "" {
		i.InstanceState = common.StringPtr("RUNNING")
	}
	if s.typ == "" {
		i.InstanceType = common.StringPtr("S5.MEDIUM4")
	}
	return i
}

func newFake(specs ...ins) *fakeCVM {
	f := &fakeCVM{}
	for _, s := range specs {
		f.instances = append(f.instances, s.build())
	}
	return f
}

func newTestInstances(api instanceAPI) *instances { return newTestInstancesWith(api, nil) }

// newTestInstancesWith lets a test change the config first, e.g. to turn
// the inventory off or shorten its TTL.
func newTestInstancesWith(api instanceAPI, change func(*config.Config)) *instances {
	cfg := &config.Config{Region: testRegion, VpcID: testVPC, InstanceCacheTTL: config.DefaultInstanceCacheTTL}
	if change != nil {
		change(cfg)
	}
	return newCloud(cfg, api).instances
}

func testNode(name, providerID string, addrs ...v1.NodeAddress) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1.NodeSpec{ProviderID: providerID},
		Status:     v1.NodeStatus{Addresses: addrs},
	}
}

func internalIP(a string) v1.NodeAddress { return v1.NodeAddress{Type: v1.NodeInternalIP, Address: a} }
func hostnameAddr(a string) v1.NodeAddress {
	return v1.NodeAddress{Type: v1.NodeHostName, Address: a}
}

// Credentials of the right shape for tests that load a config.
const (
	testSecretID  = "AKIDtestsecretid0000000000000000000"
	testSecretKey = "testsecretkey000000000000000000k"
)
