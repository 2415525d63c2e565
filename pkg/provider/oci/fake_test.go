package oci

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/oracle/oci-go-sdk/v65/core"

	"github.com/ccmkit/ccm/internal/oci/config/configtest"
)

// Test OCIDs.
const (
	testCompartment = configtest.Compartment
	testVCN         = configtest.VCN
	testSubnet      = configtest.Subnet
	otherVCN        = configtest.OtherVCN
	otherSubnet     = configtest.OtherSubnet
	testRegion      = configtest.Region
)

func instanceOCID(n int) string { return fmt.Sprintf("ocid1.instance.oc1.iad.aaaainstance%04d", n) }

// svcErr is an OCI service error, as the SDK returns them.
type svcErr struct {
	status int
	code   string
}

func (e svcErr) Error() string           { return fmt.Sprintf("Service error: %d %s", e.status, e.code) }
func (e svcErr) GetHTTPStatusCode() int  { return e.status }
func (e svcErr) GetMessage() string      { return "injected " + e.code }
func (e svcErr) GetCode() string         { return e.code }
func (e svcErr) GetOpcRequestID() string { return "req-1" }

var (
	err404 = svcErr{http.StatusNotFound, "NotAuthorizedOrNotFound"}
	err401 = svcErr{http.StatusUnauthorized, "NotAuthenticated"}
	err429 = svcErr{http.StatusTooManyRequests, "TooManyRequests"}
	err500 = svcErr{http.StatusInternalServerError, "InternalServerError"}
)

// fakeVM is one instance of the fake cloud with its primary VNIC.
type fakeVM struct {
	ins      core.Instance
	vnic     core.Vnic
	attached bool
}

// fakeOCI fakes the Compute and VirtualNetwork APIs the node code uses:
// instances in compartments, one primary VNIC each, subnets in VCNs,
// paginated lists, injected errors and call counts.
type fakeOCI struct {
	mu      sync.Mutex
	vms     []*fakeVM         // in creation order
	subnets map[string]string // subnet -> VCN
	// errs injects an error per operation ("*" for all).
	errs map[string]error
	// hidden instances answer 404 to GetInstance but show in listings.
	hidden map[string]bool
	calls  map[string]int
}

func newFake() *fakeOCI {
	return &fakeOCI{
		subnets: map[string]string{testSubnet: testVCN, otherSubnet: otherVCN},
		errs:    map[string]error{}, hidden: map[string]bool{}, calls: map[string]int{},
	}
}

type vmOpt func(*fakeVM)

func withState(s core.InstanceLifecycleStateEnum) vmOpt {
	return func(v *fakeVM) { v.ins.LifecycleState = s }
}
func withSubnet(s string) vmOpt              { return func(v *fakeVM) { v.vnic.SubnetId = &s } }
func withCompartment(c string) vmOpt         { return func(v *fakeVM) { v.ins.CompartmentId = &c } }
func withPublicIP(ip string) vmOpt           { return func(v *fakeVM) { v.vnic.PublicIp = &ip } }
func withFaultDomain(fd string) vmOpt        { return func(v *fakeVM) { v.ins.FaultDomain = &fd } }
func withAD(ad string) vmOpt                 { return func(v *fakeVM) { v.ins.AvailabilityDomain = &ad } }
func detached() vmOpt                        { return func(v *fakeVM) { v.attached = false } }
func ptr[T any](v T) *T                      { return &v }
func (f *fakeOCI) count(op string) int       { f.mu.Lock(); defer f.mu.Unlock(); return f.calls[op] }
func (f *fakeOCI) setErr(op string, e error) { f.mu.Lock(); f.errs[op] = e; f.mu.Unlock() }

// add adds a RUNNING instance n named name with private IP ip.
func (f *fakeOCI) add(n int, name, ip string, opts ...vmOpt) *fakeVM {
	id := instanceOCID(n)
	vm := &fakeVM{
		ins: core.Instance{
			Id: ptr(id), DisplayName: ptr(name), CompartmentId: ptr(testCompartment),
			AvailabilityDomain: ptr("Uocm:US-ASHBURN-AD-1"), FaultDomain: ptr("FAULT-DOMAIN-2"),
			LifecycleState: core.InstanceLifecycleStateRunning, Region: ptr("iad"), Shape: ptr("VM.Standard.E4.Flex"),
		},
		vnic: core.Vnic{
			Id: ptr(fmt.Sprintf("ocid1.vnic.oc1.iad.aaaavnic%04d", n)), PrivateIp: ptr(ip), IsPrimary: ptr(true),
			SubnetId: ptr(testSubnet), HostnameLabel: ptr(fmt.Sprintf("host-%d", n)),
		},
		attached: true,
	}
	for _, o := range opts {
		o(vm)
	}
	f.mu.Lock()
	f.vms = append(f.vms, vm)
	f.mu.Unlock()
	return vm
}

func (f *fakeOCI) setState(n int, s core.InstanceLifecycleStateEnum) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, vm := range f.vms {
		if *vm.ins.Id == instanceOCID(n) {
			vm.ins.LifecycleState = s
		}
	}
}

func (f *fakeOCI) remove(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.vms = slices.DeleteFunc(f.vms, func(vm *fakeVM) bool { return *vm.ins.Id == instanceOCID(n) })
}

// enter counts the call and returns its injected error, if any.
func (f *fakeOCI) enter(op string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[op]++
	if e, ok := f.errs[op]; ok {
		return e
	}
	return f.errs["*"]
}

// page cuts items to one page of the request's limit, OCI style.
func page[T any](items []T, limit *int, pageTok *string) ([]T, *string) {
	start := 0
	if pageTok != nil {
		start, _ = strconv.Atoi(*pageTok)
	}
	n := len(items)
	if limit != nil && *limit > 0 {
		n = *limit
	}
	end := min(start+n, len(items))
	if start > len(items) {
		start = len(items)
	}
	if end < len(items) {
		return items[start:end], ptr(strconv.Itoa(end))
	}
	return items[start:end], nil
}

func (f *fakeOCI) GetInstance(_ context.Context, req core.GetInstanceRequest) (core.GetInstanceResponse, error) {
	if err := f.enter("GetInstance"); err != nil {
		return core.GetInstanceResponse{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hidden[*req.InstanceId] {
		return core.GetInstanceResponse{}, err404
	}
	for _, vm := range f.vms {
		if *vm.ins.Id == *req.InstanceId {
			return core.GetInstanceResponse{Instance: vm.ins}, nil
		}
	}
	return core.GetInstanceResponse{}, err404
}

func (f *fakeOCI) ListInstances(_ context.Context, req core.ListInstancesRequest) (core.ListInstancesResponse, error) {
	if err := f.enter("ListInstances"); err != nil {
		return core.ListInstancesResponse{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var items []core.Instance
	for _, vm := range f.vms {
		if *vm.ins.CompartmentId != *req.CompartmentId {
			continue
		}
		if req.DisplayName != nil && *vm.ins.DisplayName != *req.DisplayName {
			continue
		}
		items = append(items, vm.ins)
	}
	items, next := page(items, req.Limit, req.Page)
	return core.ListInstancesResponse{Items: items, OpcNextPage: next}, nil
}

func (f *fakeOCI) ListVnicAttachments(_ context.Context, req core.ListVnicAttachmentsRequest) (core.ListVnicAttachmentsResponse, error) {
	if err := f.enter("ListVnicAttachments"); err != nil {
		return core.ListVnicAttachmentsResponse{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var items []core.VnicAttachment
	for _, vm := range f.vms {
		if *vm.ins.CompartmentId != *req.CompartmentId || (req.InstanceId != nil && *req.InstanceId != *vm.ins.Id) {
			continue
		}
		state := core.VnicAttachmentLifecycleStateAttached
		if !vm.attached {
			state = core.VnicAttachmentLifecycleStateDetached
		}
		items = append(items, core.VnicAttachment{
			Id: ptr("att-" + *vm.vnic.Id), InstanceId: vm.ins.Id, VnicId: vm.vnic.Id, LifecycleState: state,
			CompartmentId: vm.ins.CompartmentId, SubnetId: vm.vnic.SubnetId,
		})
	}
	items, next := page(items, req.Limit, req.Page)
	return core.ListVnicAttachmentsResponse{Items: items, OpcNextPage: next}, nil
}

func (f *fakeOCI) GetVnic(_ context.Context, req core.GetVnicRequest) (core.GetVnicResponse, error) {
	if err := f.enter("GetVnic"); err != nil {
		return core.GetVnicResponse{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, vm := range f.vms {
		if *vm.vnic.Id == *req.VnicId {
			return core.GetVnicResponse{Vnic: vm.vnic}, nil
		}
	}
	return core.GetVnicResponse{}, err404
}

func (f *fakeOCI) GetSubnet(_ context.Context, req core.GetSubnetRequest) (core.GetSubnetResponse, error) {
	if err := f.enter("GetSubnet"); err != nil {
		return core.GetSubnetResponse{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	vcn, ok := f.subnets[*req.SubnetId]
	if !ok {
		return core.GetSubnetResponse{}, err404
	}
	return core.GetSubnetResponse{Subnet: core.Subnet{Id: req.SubnetId, VcnId: &vcn}}, nil
}
