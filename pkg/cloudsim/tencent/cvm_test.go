package tencent

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"
)

func filter(name string, values ...string) *cvm.Filter {
	return &cvm.Filter{Name: common.StringPtr(name), Values: common.StringPtrs(values)}
}

func resultIDs(resp *cvm.DescribeInstancesResponse) []string {
	var out []string
	for _, in := range resp.Response.InstanceSet {
		out = append(out, *in.InstanceId)
	}
	return out
}

func TestDescribeInstancesValidation(t *testing.T) {
	e := newEnv(t, core.Config{})
	cl := e.client(t, testID, testKey)
	manyFilters := make([]*cvm.Filter, 11)
	for i := range manyFilters {
		manyFilters[i] = filter("zone", "ap-guangzhou-3")
	}
	tests := []struct {
		name     string
		req      func(r *cvm.DescribeInstancesRequest)
		wantCode string
	}{
		// "参数不支持同时指定InstanceIds和Filters" (DescribeInstancesRequestParams);
		// InvalidParameter is in the action's documented codes (cvm client.go),
		// InvalidParameterCombination is not.
		{"ids and filters together", func(r *cvm.DescribeInstancesRequest) {
			r.InstanceIds = common.StringPtrs([]string{"ins-aaaaaaaa"})
			r.Filters = []*cvm.Filter{filter("zone", "ap-guangzhou-3")}
		}, "InvalidParameter"},
		{"100 ids is fine", func(r *cvm.DescribeInstancesRequest) { r.InstanceIds = common.StringPtrs(ids(100)) }, ""},
		{"101 ids", func(r *cvm.DescribeInstancesRequest) { r.InstanceIds = common.StringPtrs(ids(101)) }, "InvalidParameterValue.LimitExceeded"},
		{"malformed id", func(r *cvm.DescribeInstancesRequest) { r.InstanceIds = common.StringPtrs([]string{"i-123"}) }, "InvalidInstanceId.Malformed"},
		{"upper-case id", func(r *cvm.DescribeInstancesRequest) { r.InstanceIds = common.StringPtrs([]string{"ins-AAAAAAAA"}) }, "InvalidInstanceId.Malformed"},
		{"10 filters is fine", func(r *cvm.DescribeInstancesRequest) { r.Filters = manyFilters[:10] }, ""},
		{"11 filters", func(r *cvm.DescribeInstancesRequest) { r.Filters = manyFilters }, "InvalidFilterValue.LimitExceeded"},
		{"5 values is fine", func(r *cvm.DescribeInstancesRequest) {
			r.Filters = []*cvm.Filter{filter("instance-name", "a", "b", "c", "d", "e")}
		}, ""},
		{"6 values", func(r *cvm.DescribeInstancesRequest) {
			r.Filters = []*cvm.Filter{filter("instance-name", "a", "b", "c", "d", "e", "f")}
		}, "InvalidFilterValue.LimitExceeded"},
		{"unknown filter", func(r *cvm.DescribeInstancesRequest) { r.Filters = []*cvm.Filter{filter("color", "red")} }, "InvalidFilter"},
		{"empty tag key", func(r *cvm.DescribeInstancesRequest) { r.Filters = []*cvm.Filter{filter("tag:", "x")} }, "InvalidFilter"},
		{"filter without values", func(r *cvm.DescribeInstancesRequest) { r.Filters = []*cvm.Filter{filter("zone")} }, "InvalidParameterValue"},
		{"malformed instance-id filter", func(r *cvm.DescribeInstancesRequest) { r.Filters = []*cvm.Filter{filter("instance-id", "x")} }, "InvalidInstanceId.Malformed"},
		{"malformed private ip", func(r *cvm.DescribeInstancesRequest) {
			r.Filters = []*cvm.Filter{filter("private-ip-address", "10.0.0.300")}
		}, "InvalidParameterValue.IPAddressMalformed"},
		{"malformed vpc id", func(r *cvm.DescribeInstancesRequest) { r.Filters = []*cvm.Filter{filter("vpc-id", "vpc-1")} }, "InvalidParameterValue.VpcIdMalformed"},
		{"malformed subnet id", func(r *cvm.DescribeInstancesRequest) { r.Filters = []*cvm.Filter{filter("subnet-id", "sn")} }, "InvalidParameterValue.SubnetIdMalformed"},
		{"malformed creation time", func(r *cvm.DescribeInstancesRequest) {
			r.Filters = []*cvm.Filter{filter("creation-start-time", "yesterday")}
		}, "InvalidParameterValue.InvalidTimeFormat"},
		{"limit 100 is fine", func(r *cvm.DescribeInstancesRequest) { r.Limit = common.Int64Ptr(100) }, ""},
		{"limit 101", func(r *cvm.DescribeInstancesRequest) { r.Limit = common.Int64Ptr(101) }, "InvalidParameterValue.LimitExceeded"},
		{"negative limit", func(r *cvm.DescribeInstancesRequest) { r.Limit = common.Int64Ptr(-1) }, "InvalidParameterValue"},
		{"negative offset", func(r *cvm.DescribeInstancesRequest) { r.Offset = common.Int64Ptr(-1) }, "InvalidParameterValue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := cvm.NewDescribeInstancesRequest()
			tt.req(req)
			_, err := cl.DescribeInstances(req)
			if got := sdkCode(err); got != tt.wantCode {
				t.Fatalf("code = %q, want %q (%v)", got, tt.wantCode, err)
			}
		})
	}
}

func TestDescribeInstancesFilters(t *testing.T) {
	e := newEnv(t, core.Config{})
	e.mustAdd(t,
		core.Instance{ID: "ins-00000001", Name: "node-a", Zone: "ap-guangzhou-3", PrivateIP: "10.0.0.1", VpcID: "vpc-aaaaaaaa", SubnetID: "subnet-aaaaaaaa", Tags: map[string]string{"cluster": "one", "role": "worker"}},
		core.Instance{ID: "ins-00000002", Name: "node-b", Zone: "ap-guangzhou-4", PrivateIP: "10.0.0.2", PublicIP: "203.0.113.2", VpcID: "vpc-aaaaaaaa", SubnetID: "subnet-bbbbbbbb", State: "STOPPED", Tags: map[string]string{"cluster": "two"}},
		// Same private IP as ins-00000001, in another VPC.
		core.Instance{ID: "ins-00000003", Name: "node-c", Zone: "ap-guangzhou-3", PrivateIP: "10.0.0.1", VpcID: "vpc-bbbbbbbb", Type: "S5.2XLARGE16"},
		// Another region: never visible from ap-guangzhou.
		core.Instance{ID: "ins-00000004", Name: "node-a", Zone: "ap-shanghai-2", PrivateIP: "10.0.0.4", VpcID: "vpc-aaaaaaaa"},
	)
	cl := e.client(t, testID, testKey)
	tests := []struct {
		name    string
		ids     []string
		filters []*cvm.Filter
		want    []string
	}{
		{"no filter: this region only", nil, nil, []string{"ins-00000001", "ins-00000002", "ins-00000003"}},
		{"ids, unknown ones absent", []string{"ins-00000003", "ins-ffffffff", "ins-00000001"}, nil, []string{"ins-00000001", "ins-00000003"}},
		{"id in other region absent", []string{"ins-00000004"}, nil, nil},
		{"vpc + private ip", nil, []*cvm.Filter{filter("vpc-id", "vpc-aaaaaaaa"), filter("private-ip-address", "10.0.0.1")}, []string{"ins-00000001"}},
		{"private ip across vpcs", nil, []*cvm.Filter{filter("private-ip-address", "10.0.0.1")}, []string{"ins-00000001", "ins-00000003"}},
		{"values OR", nil, []*cvm.Filter{filter("private-ip-address", "10.0.0.1", "10.0.0.2")}, []string{"ins-00000001", "ins-00000002", "ins-00000003"}},
		{"zone", nil, []*cvm.Filter{filter("zone", "ap-guangzhou-4")}, []string{"ins-00000002"}},
		{"subnet", nil, []*cvm.Filter{filter("subnet-id", "subnet-aaaaaaaa")}, []string{"ins-00000001"}},
		{"instance-id", nil, []*cvm.Filter{filter("instance-id", "ins-00000002")}, []string{"ins-00000002"}},
		{"instance-name exact", nil, []*cvm.Filter{filter("instance-name", "node-a")}, []string{"ins-00000001"}},
		{"instance-name no fuzzy", nil, []*cvm.Filter{filter("instance-name", "node")}, nil},
		{"state", nil, []*cvm.Filter{filter("instance-state", "STOPPED")}, []string{"ins-00000002"}},
		{"public ip", nil, []*cvm.Filter{filter("public-ip-address", "203.0.113.2")}, []string{"ins-00000002"}},
		{"tag-key", nil, []*cvm.Filter{filter("tag-key", "role")}, []string{"ins-00000001"}},
		{"tag-value", nil, []*cvm.Filter{filter("tag-value", "two")}, []string{"ins-00000002"}},
		{"tag:key", nil, []*cvm.Filter{filter("tag:cluster", "one", "two")}, []string{"ins-00000001", "ins-00000002"}},
		{"tag:key AND zone", nil, []*cvm.Filter{filter("tag:cluster", "one", "two"), filter("zone", "ap-guangzhou-3")}, []string{"ins-00000001"}},
		{"instance-type", nil, []*cvm.Filter{filter("instance-type", "S5.2XLARGE16")}, []string{"ins-00000003"}},
		{"project-id 0", nil, []*cvm.Filter{filter("project-id", "0")}, []string{"ins-00000001", "ins-00000002", "ins-00000003"}},
		{"security group: none", nil, []*cvm.Filter{filter("security-group-id", "sg-12345678")}, nil},
		{"created since the past", nil, []*cvm.Filter{filter("creation-start-time", "2000-01-01 00:00:00")}, []string{"ins-00000001", "ins-00000002", "ins-00000003"}},
		{"created before the past", nil, []*cvm.Filter{filter("creation-end-time", "2000-01-01 00:00:00")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := cvm.NewDescribeInstancesRequest()
			if tt.ids != nil {
				req.InstanceIds = common.StringPtrs(tt.ids)
			}
			req.Filters = tt.filters
			resp, err := cl.DescribeInstances(req)
			if err != nil {
				t.Fatal(err)
			}
			got := resultIDs(resp)
			if !slices.Equal(got, tt.want) || *resp.Response.TotalCount != int64(len(tt.want)) {
				t.Fatalf("got %v (total %d), want %v", got, *resp.Response.TotalCount, tt.want)
			}
		})
	}
	// Another region sees its own instance.
	sh, err := cvm.NewClient(common.NewCredential(testID, testKey), "ap-shanghai", clientProfile(e))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := sh.DescribeInstances(cvm.NewDescribeInstancesRequest())
	if err != nil {
		t.Fatal(err)
	}
	if got := resultIDs(resp); !slices.Equal(got, []string{"ins-00000004"}) {
		t.Fatalf("ap-shanghai sees %v", got)
	}
}

func TestDescribeInstancesResponseFields(t *testing.T) {
	e := newEnv(t, core.Config{})
	e.mustAdd(t,
		core.Instance{ID: "ins-00000001", Name: "n1", Type: "S5.MEDIUM4", Zone: "ap-guangzhou-3", PrivateIP: "10.1.2.3", VpcID: "vpc-aaaaaaaa", SubnetID: "subnet-aaaaaaaa", Tags: map[string]string{"b": "2", "a": "1"}},
		core.Instance{ID: "ins-00000002", PrivateIP: "10.1.2.4", PublicIP: "198.51.100.7"},
	)
	cl := e.client(t, testID, testKey)
	resp, err := cl.DescribeInstances(cvm.NewDescribeInstancesRequest())
	if err != nil {
		t.Fatal(err)
	}
	in := resp.Response.InstanceSet[0]
	checks := []struct {
		name      string
		got, want any
	}{
		{"InstanceId", *in.InstanceId, "ins-00000001"},
		{"InstanceName", *in.InstanceName, "n1"},
		{"InstanceType", *in.InstanceType, "S5.MEDIUM4"},
		{"InstanceState", *in.InstanceState, "RUNNING"},
		{"Zone", *in.Placement.Zone, "ap-guangzhou-3"},
		{"ProjectId", *in.Placement.ProjectId, int64(0)},
		{"PrivateIpAddresses", len(in.PrivateIpAddresses) == 1 && *in.PrivateIpAddresses[0] == "10.1.2.3", true},
		{"PublicIpAddresses empty, not null", in.PublicIpAddresses != nil && len(in.PublicIpAddresses) == 0, true},
		{"VpcId", *in.VirtualPrivateCloud.VpcId, "vpc-aaaaaaaa"},
		{"SubnetId", *in.VirtualPrivateCloud.SubnetId, "subnet-aaaaaaaa"},
		{"Tags sorted", fmt.Sprintf("%s=%s,%s=%s", *in.Tags[0].Key, *in.Tags[0].Value, *in.Tags[1].Key, *in.Tags[1].Value), "a=1,b=2"},
		{"Uuid", in.Uuid != nil && uuidRe.MatchString(*in.Uuid), true},
		{"CPU", *in.CPU, int64(2)},
		{"Memory", *in.Memory, int64(4)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if _, err := time.Parse(time.RFC3339, *in.CreatedTime); err != nil {
		t.Errorf("CreatedTime %q: %v", *in.CreatedTime, err)
	}
	second := resp.Response.InstanceSet[1]
	if len(second.PublicIpAddresses) != 1 || *second.PublicIpAddresses[0] != "198.51.100.7" {
		t.Errorf("public IPs %v", second.PublicIpAddresses)
	}
	if *second.VirtualPrivateCloud.VpcId != core.DefaultVpcID || *second.Placement.Zone != "ap-guangzhou-1" || *second.InstanceName != "ins-00000002" {
		t.Errorf("defaults not applied: %s", resp.ToJsonString())
	}

	// Raw wire: PublicIpAddresses is [] when there is none.
	_, body := e.do(t, rawReq{body: `{"InstanceIds":["ins-00000001"]}`})
	if !strings.Contains(body, `"PublicIpAddresses":[]`) || !strings.Contains(body, `"TotalCount":1`) {
		t.Errorf("raw answer %s", body)
	}
	// An empty answer still carries an empty InstanceSet.
	_, body = e.do(t, rawReq{body: `{"InstanceIds":["ins-ffffffff"]}`})
	if !strings.Contains(body, `"InstanceSet":[]`) || !strings.Contains(body, `"TotalCount":0`) {
		t.Errorf("raw empty answer %s", body)
	}
}

func TestDescribeInstancesPagination(t *testing.T) {
	e := newEnv(t, core.Config{})
	var want []string
	var in []core.Instance
	for i := range 45 {
		id := fmt.Sprintf("ins-p%07d", i)
		want = append(want, id)
		in = append(in, core.Instance{ID: id, PrivateIP: fmt.Sprintf("10.9.0.%d", i+1)})
	}
	e.mustAdd(t, in...)
	cl := e.client(t, testID, testKey)

	var got []string
	var pages []int
	for offset := int64(0); ; offset += 20 {
		req := cvm.NewDescribeInstancesRequest()
		req.Offset = common.Int64Ptr(offset)
		resp, err := cl.DescribeInstances(req) // default Limit 20
		if err != nil {
			t.Fatal(err)
		}
		if *resp.Response.TotalCount != 45 {
			t.Fatalf("TotalCount %d", *resp.Response.TotalCount)
		}
		if len(resp.Response.InstanceSet) == 0 {
			break
		}
		pages = append(pages, len(resp.Response.InstanceSet))
		got = append(got, resultIDs(resp)...)
	}
	if !slices.Equal(pages, []int{20, 20, 5}) || !slices.Equal(got, want) {
		t.Fatalf("pages %v, got %v", pages, got)
	}

	req := cvm.NewDescribeInstancesRequest()
	req.Limit = common.Int64Ptr(100)
	resp, err := cl.DescribeInstances(req)
	if err != nil || len(resp.Response.InstanceSet) != 45 {
		t.Fatalf("limit 100: %v %v", err, resp)
	}
	req = cvm.NewDescribeInstancesRequest()
	req.Offset, req.Limit = common.Int64Ptr(40), common.Int64Ptr(3)
	resp, err = cl.DescribeInstances(req)
	if err != nil || !slices.Equal(resultIDs(resp), want[40:43]) {
		t.Fatalf("offset 40 limit 3: %v %v", err, resultIDs(resp))
	}
}

func TestRateLimit(t *testing.T) {
	// A frozen clock refills nothing: exactly the burst (= the rate) passes.
	frozen := time.Now()
	e := newEnv(t, core.Config{Clock: func() time.Time { return frozen }, RateLimits: map[string]float64{"DescribeInstances": 5}})
	cl := e.client(t, testID, testKey)
	var mu sync.Mutex
	codes := map[string]int{}
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := cl.DescribeInstances(cvm.NewDescribeInstancesRequest())
			mu.Lock()
			codes[sdkCode(err)]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[""] != 5 || codes["RequestLimitExceeded"] != 15 {
		t.Fatalf("codes %v", codes)
	}
	calls := e.core.Calls()["DescribeInstances"]
	if calls["OK"] != 5 || calls["RequestLimitExceeded"] != 15 {
		t.Fatalf("calls %v", calls)
	}
	// Auth failures do not consume tokens: they are rejected first.
	_, err := e.client(t, testID, "wrong").DescribeInstances(cvm.NewDescribeInstancesRequest())
	if sdkCode(err) != "AuthFailure.SignatureFailure" {
		t.Fatalf("auth first: %v", err)
	}
}

func TestRateLimitDefaultAndRefill(t *testing.T) {
	clk := newFakeClock()
	e := newEnv(t, core.Config{Clock: clk.Now})
	cl := e.client(t, testID, testKey)
	count := func(n int) (ok int) {
		for range n {
			if _, err := cl.DescribeInstances(cvm.NewDescribeInstancesRequest()); err == nil {
				ok++
			} else if sdkCode(err) != "RequestLimitExceeded" {
				t.Fatal(err)
			}
		}
		return ok
	}
	if ok := count(45); ok != DescribeInstancesQPS {
		t.Fatalf("default limit let %d of 45 through", ok)
	}
	clk.Advance(250 * time.Millisecond) // refills 10 tokens
	if ok := count(15); ok != 10 {
		t.Fatalf("after 250ms, %d of 15 passed", ok)
	}
	// Disabled by a non-positive override.
	e.core.SetRateLimit("DescribeInstances", 0)
	if ok := count(60); ok != 60 {
		t.Fatalf("disabled limit let %d of 60 through", ok)
	}
}

func TestFaults(t *testing.T) {
	e := newEnv(t, core.Config{})
	cl := e.client(t, testID, testKey)
	describe := func() error {
		_, err := cl.DescribeInstances(cvm.NewDescribeInstancesRequest())
		return err
	}

	e.core.SetFault(core.Fault{Action: "DescribeInstances", ErrorRate: 1, ErrorCode: "InternalError"})
	if got := sdkCode(describe()); got != "InternalError" {
		t.Fatalf("error-rate fault: %q", got)
	}
	e.core.SetFault(core.Fault{Action: "DescribeInstances", ErrorRate: 1, HTTPStatus: 500})
	if got := sdkCode(describe()); got != "ClientError.HttpStatusCodeError" {
		t.Fatalf("HTTP 500 fault: %q", got)
	}
	e.core.SetFault(core.Fault{Action: "DescribeInstances", Latency: 300 * time.Millisecond})
	start := time.Now()
	if err := describe(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("latency fault: answered after %v", d)
	}
	e.core.ClearFaults()
	e.core.SetFault(core.Fault{Action: "*", ErrorRate: 1, ErrorCode: "RequestLimitExceeded"})
	if got := sdkCode(describe()); got != "RequestLimitExceeded" {
		t.Fatalf("* fault: %q", got)
	}
	// A per-action fault wins over "*".
	e.core.SetFault(core.Fault{Action: "DescribeInstances", ErrorRate: 0})
	if err := describe(); err != nil {
		t.Fatalf("per-action fault should override *: %v", err)
	}
	// Faults apply after auth.
	if _, err := e.client(t, "AKIDnobody", "x").DescribeInstances(cvm.NewDescribeInstancesRequest()); sdkCode(err) != "AuthFailure.SecretIdNotFound" {
		t.Fatalf("auth before faults: %v", err)
	}
	e.core.ClearFaults()
	if err := describe(); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"InternalError": 1, "HTTP500": 1, "OK": 3, "RequestLimitExceeded": 1, "AuthFailure.SecretIdNotFound": 1}
	got := e.core.Calls()["DescribeInstances"]
	for code, n := range want {
		if got[code] != n {
			t.Errorf("calls[%s] = %d, want %d (all %v)", code, got[code], n, got)
		}
	}
}

func TestHTTPStatusFaultRaw(t *testing.T) {
	e := newEnv(t, core.Config{})
	e.core.SetFault(core.Fault{Action: "DescribeInstances", ErrorRate: 1, HTTPStatus: 503})
	status, _ := e.do(t, rawReq{})
	if status != http.StatusServiceUnavailable {
		t.Fatalf("status %d", status)
	}
	if e.core.Calls()["DescribeInstances"]["HTTP503"] != 1 {
		t.Fatalf("calls %v", e.core.Calls())
	}
}

func TestStateChangesAndTerminatingDisappears(t *testing.T) {
	clk := newFakeClock()
	e := newEnv(t, core.Config{Clock: clk.Now, TerminatedLinger: 2 * time.Second})
	e.mustAdd(t, core.Instance{ID: "ins-00000001", PrivateIP: "10.0.0.1"}, core.Instance{ID: "ins-00000002", PrivateIP: "10.0.0.2"})
	cl := e.client(t, testID, testKey)
	state := func() map[string]string {
		req := cvm.NewDescribeInstancesRequest()
		req.InstanceIds = common.StringPtrs([]string{"ins-00000001", "ins-00000002"})
		resp, err := cl.DescribeInstances(req)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, in := range resp.Response.InstanceSet {
			out[*in.InstanceId] = *in.InstanceState
		}
		return out
	}
	if _, err := e.core.SetInstanceState("ins-00000001", "STOPPED"); err != nil {
		t.Fatal(err)
	}
	if got := state(); got["ins-00000001"] != "STOPPED" || got["ins-00000002"] != "RUNNING" {
		t.Fatalf("after stop: %v", got)
	}
	if _, err := e.core.SetInstanceState("ins-00000001", "TERMINATING"); err != nil {
		t.Fatal(err)
	}
	clk.Advance(1 * time.Second)
	if got := state(); got["ins-00000001"] != "TERMINATING" {
		t.Fatalf("during linger: %v", got)
	}
	clk.Advance(1 * time.Second)
	if got := state(); len(got) != 1 || got["ins-00000002"] != "RUNNING" {
		t.Fatalf("after linger: %v", got)
	}
	// Gone for good: its IP can be reused.
	e.mustAdd(t, core.Instance{ID: "ins-00000003", PrivateIP: "10.0.0.1"})
}
