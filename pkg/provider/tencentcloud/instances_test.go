package tencentcloud

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"
	v1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccm/internal/tcapi"
	"github.com/ccmkit/ccm/internal/tencent/config"
)

// call summarizes one DescribeInstances request for assertions.
type call struct {
	ids     string // comma-joined InstanceIds
	filters string // "name=v1,v2;name=v" in request order
}

func summarize(req *cvm.DescribeInstancesRequest) call {
	c := call{ids: strings.Join(common.StringValues(req.InstanceIds), ",")}
	var parts []string
	for _, f := range req.Filters {
		parts = append(parts, *f.Name+"="+strings.Join(common.StringValues(f.Values), ","))
	}
	c.filters = strings.Join(parts, ";")
	return c
}

func TestFindMappingPaths(t *testing.T) {
	fake := newFake(
		ins{id: "ins-aaaa0001", name: "worker-1", private: []string{"10.0.0.1"}},
		ins{id: "ins-aaaa0002", name: "worker-2", private: []string{"10.0.0.2", "10.0.1.2"}},
		ins{id: "ins-aaaa0003", name: "host-3.example", private: []string{"10.0.0.3"}},
	)
	tests := []struct {
		name   string
		node   *v1.Node
		wantID string
		want   call
	}{
		{"providerID", testNode("whatever", "tencentcloud:///ap-guangzhou-3/ins-aaaa0001"),
			"ins-aaaa0001", call{ids: "ins-aaaa0001"}},
		{"qcloud providerID with numeric zone", testNode("whatever", "qcloud:///100003/ins-aaaa0002"),
			"ins-aaaa0002", call{ids: "ins-aaaa0002"}},
		{"bare instance id providerID", testNode("whatever", "ins-aaaa0003"),
			"ins-aaaa0003", call{ids: "ins-aaaa0003"}},
		{"providerID beats an instance-id name", testNode("ins-aaaa0002", "ins-aaaa0001"),
			"ins-aaaa0001", call{ids: "ins-aaaa0001"}},
		{"instance id as node name", testNode("ins-aaaa0002", ""),
			"ins-aaaa0002", call{ids: "ins-aaaa0002"}},
		{"IPv4 node name", testNode("10.0.0.2", "", internalIP("10.0.0.9")),
			"ins-aaaa0002", call{filters: "vpc-id=" + testVPC + ";private-ip-address=10.0.0.2"}},
		{"InternalIP addresses", testNode("worker-x", "", internalIP("10.0.1.2"), internalIP("fd00::1"), internalIP("10.0.1.2")),
			"ins-aaaa0002", call{filters: "vpc-id=" + testVPC + ";private-ip-address=10.0.1.2"}},
		{"instance name", testNode("worker-1", ""),
			"ins-aaaa0001", call{filters: "vpc-id=" + testVPC + ";instance-name=worker-1"}},
		{"instance name or hostname address", testNode("node-3", "", hostnameAddr("host-3.example")),
			"ins-aaaa0003", call{filters: "vpc-id=" + testVPC + ";instance-name=node-3,host-3.example"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake.calls = nil
			got, err := newTestInstances(fake).find(context.Background(), tt.node, config.DefaultInstanceCacheTTL)
			if err != nil {
				t.Fatalf("find: %v", err)
			}
			if got.instance == nil || *got.instance.InstanceId != tt.wantID {
				t.Fatalf("found %+v, want %s", got.instance, tt.wantID)
			}
			if len(fake.calls) != 1 {
				t.Fatalf("%d calls, want 1", len(fake.calls))
			}
			if c := summarize(fake.calls[0]); c != tt.want {
				t.Errorf("request %+v, want %+v", c, tt.want)
			}
		})
	}
}

func TestFindStopsAtFirstApplicableRule(t *testing.T) {
	// The node is named by IP; an instance named like the node exists but
	// must not be used: the IP rule applies and finds nothing.
	fake := newFake(ins{id: "ins-aaaa0001", name: "10.0.0.7", private: []string{"10.9.9.9"}})
	f, err := newTestInstances(fake).find(context.Background(), testNode("10.0.0.7", ""), config.DefaultInstanceCacheTTL)
	if err != nil || f.instance != nil || f.byID {
		t.Fatalf("find = %+v, %v; want nothing found by filter", f, err)
	}
	if len(fake.calls) != 1 {
		t.Fatalf("%d calls, want 1", len(fake.calls))
	}
}

func TestFindSplitsFilterValuesByFive(t *testing.T) {
	fake := newFake(ins{id: "ins-aaaa0001", private: []string{"10.0.0.6"}})
	var addrs []v1.NodeAddress
	for i := 1; i <= 6; i++ {
		addrs = append(addrs, internalIP(fmt.Sprintf("10.0.0.%d", i)))
	}
	f, err := newTestInstances(fake).find(context.Background(), testNode("n", "", addrs...), config.DefaultInstanceCacheTTL)
	if err != nil || f.instance == nil {
		t.Fatalf("find = %+v, %v", f, err)
	}
	if len(fake.calls) != 2 {
		t.Fatalf("%d calls, want 2 (5 + 1 values)", len(fake.calls))
	}
	if got := summarize(fake.calls[1]).filters; got != "vpc-id="+testVPC+";private-ip-address=10.0.0.6" {
		t.Errorf("second call filters %q", got)
	}
}

func TestFindAmbiguous(t *testing.T) {
	tests := []struct {
		name string
		fake *fakeCVM
		node *v1.Node
	}{
		{"two instances with the node's name",
			newFake(ins{id: "ins-aaaa0001", name: "w"}, ins{id: "ins-aaaa0002", name: "w"}),
			testNode("w", "")},
		{"node IPs on two instances",
			newFake(ins{id: "ins-aaaa0001", private: []string{"10.0.0.1"}}, ins{id: "ins-aaaa0002", private: []string{"10.0.0.2"}}),
			testNode("w", "", internalIP("10.0.0.1"), internalIP("10.0.0.2"))},
		{"name and hostname on two instances",
			newFake(ins{id: "ins-aaaa0001", name: "w"}, ins{id: "ins-aaaa0002", name: "w.example"}),
			testNode("w", "", hostnameAddr("w.example"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := newTestInstances(tt.fake)
			_, err := i.InstanceMetadata(context.Background(), tt.node)
			if err == nil || !strings.Contains(err.Error(), "ins-aaaa0001") || !strings.Contains(err.Error(), "ins-aaaa0002") {
				t.Fatalf("metadata error %v, want one naming both candidates", err)
			}
			if errors.Is(err, cloudprovider.InstanceNotFound) {
				t.Errorf("ambiguous must not be InstanceNotFound")
			}
			exists, err := i.InstanceExists(context.Background(), tt.node)
			if !exists || err == nil {
				t.Errorf("InstanceExists = %v, %v; want true with an error", exists, err)
			}
		})
	}
}

func TestVPCMismatch(t *testing.T) {
	fake := newFake(ins{id: "ins-aaaa0001", name: "w", vpc: otherVPC, private: []string{"10.0.0.1"}})
	i := newTestInstances(fake)
	ctx := context.Background()

	t.Run("by providerID", func(t *testing.T) {
		node := testNode("w", "tencentcloud:///ap-guangzhou-3/ins-aaaa0001")
		_, err := i.InstanceMetadata(ctx, node)
		if err == nil || !strings.Contains(err.Error(), otherVPC) || errors.Is(err, cloudprovider.InstanceNotFound) {
			t.Errorf("metadata error %v, want a VPC error naming %s", err, otherVPC)
		}
		if exists, err := i.InstanceExists(ctx, node); !exists || err == nil {
			t.Errorf("InstanceExists = %v, %v; want true with an error", exists, err)
		}
		if _, err := i.InstanceShutdown(ctx, node); err == nil {
			t.Errorf("InstanceShutdown: want an error")
		}
	})
	t.Run("by filter: the vpc-id filter hides it", func(t *testing.T) {
		_, err := i.InstanceMetadata(ctx, testNode("10.0.0.1", ""))
		if !errors.Is(err, cloudprovider.InstanceNotFound) {
			t.Errorf("metadata error %v, want InstanceNotFound", err)
		}
	})
	t.Run("by filter: an answer ignoring the vpc-id filter is dropped", func(t *testing.T) {
		lying := &fakeCVM{respond: func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) {
			return answer(1, fake.instances[0]), nil
		}}
		_, err := newTestInstances(lying).InstanceMetadata(ctx, testNode("10.0.0.1", ""))
		if !errors.Is(err, cloudprovider.InstanceNotFound) {
			t.Errorf("metadata error %v, want InstanceNotFound", err)
		}
	})
}

func TestInstanceExists(t *testing.T) {
	const id = "ins-aaaa0001"
	byProviderID := testNode("w", "tencentcloud:///ap-guangzhou-3/"+id)
	byName := testNode(id, "")
	byIP := testNode("10.0.0.1", "")
	one := func(s ins) func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) {
		return func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) {
			return answer(1, s.build()), nil
		}
	}
	reply := func(resp *cvm.DescribeInstancesResponse, err error) func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) {
		return func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) { return resp, err }
	}
	noID := answer(1, &cvm.Instance{InstanceName: common.StringPtr("x")})
	noTotal := answer(0)
	noTotal.Response.TotalCount = nil

	tests := []struct {
		name       string
		node       *v1.Node
		respond    func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error)
		wantExists bool
		wantErr    string // substring; "" means no error
	}{
		{"running", byProviderID, one(ins{id: id}), true, ""},
		{"stopped", byProviderID, one(ins{id: id, state: "STOPPED"}), true, ""},
		{"launch failed still exists", byProviderID, one(ins{id: id, state: "LAUNCH_FAILED"}), true, ""},
		{"terminating", byProviderID, one(ins{id: id, state: "TERMINATING"}), false, ""},
		{"gone by providerID", byProviderID, reply(answer(0), nil), false, ""},
		{"gone by instance-id name", byName, reply(answer(0), nil), false, ""},
		{"terminating found by filter", byIP, one(ins{id: id, state: "TERMINATING", private: []string{"10.0.0.1"}}), false, ""},
		{"filter found nothing", byIP, reply(answer(0), nil), true, "cannot tell"},
		{"throttled", byProviderID, reply(nil, sdkErr("RequestLimitExceeded")), true, "[RequestLimitExceeded]"},
		{"auth failure", byProviderID, reply(nil, sdkErr("AuthFailure.SignatureFailure")), true, "AuthFailure.SignatureFailure"},
		{"auth failure by filter", byIP, reply(nil, sdkErr("AuthFailure.SecretIdNotFound")), true, "private-ip-address filter"},
		{"http 502", byProviderID, reply(nil, sdkErr("ClientError.HttpStatusCodeError")), true, "HttpStatusCodeError"},
		{"timeout", byProviderID, reply(nil, context.DeadlineExceeded), true, "deadline"},
		{"invalid filter", byIP, reply(nil, sdkErr("InvalidFilter")), true, "InvalidFilter"},
		{"no Response", byProviderID, reply(&cvm.DescribeInstancesResponse{}, nil), true, "malformed"},
		{"nil response", byProviderID, reply(nil, nil), true, "malformed"},
		{"no TotalCount", byProviderID, reply(noTotal, nil), true, "TotalCount"},
		{"TotalCount without the instance", byProviderID, reply(answer(1), nil), true, "malformed"},
		{"another instance answered", byProviderID, one(ins{id: "ins-bbbb0002"}), true, "not asked for"},
		{"same instance twice", byProviderID, reply(answer(2, ins{id: id}.build(), ins{id: id}.build()), nil), true, "twice"},
		{"instance without id", byProviderID, reply(noID, nil), true, "no InstanceId"},
		{"instance in another VPC", byProviderID, one(ins{id: id, vpc: otherVPC}), true, otherVPC},
		{"foreign providerID", testNode("w", "aws:///us-east-1a/i-0123"), nil, true, "not a Tencent Cloud providerID"},
	}
	for _, mode := range []string{"inventory", "direct"} {
		for _, tt := range tests {
			t.Run(mode+"/"+tt.name, func(t *testing.T) {
				fake := &fakeCVM{respond: tt.respond}
				i := newTestInstances(fake)
				if mode == "direct" {
					i = newTestInstancesWith(fake, func(c *config.Config) { c.Inventory = "off" })
				}
				exists, err := i.InstanceExists(context.Background(), tt.node)
				if exists != tt.wantExists {
					t.Errorf("exists = %v, want %v (err %v)", exists, tt.wantExists, err)
				}
				switch {
				case tt.wantErr == "" && err != nil:
					t.Errorf("unexpected error %v", err)
				case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
					t.Errorf("error %v, want it to contain %q", err, tt.wantErr)
				}
			})
		}
	}
}

func TestInstanceExistsErrorNamesOperationAndNode(t *testing.T) {
	fake := &fakeCVM{respond: func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) {
		return nil, sdkErr("AuthFailure.SignatureFailure")
	}}
	_, err := newTestInstances(fake).InstanceExists(context.Background(), testNode("10.0.0.5", ""))
	want := `DescribeInstances for node "10.0.0.5" (private-ip-address filter): [AuthFailure.SignatureFailure] fake AuthFailure.SignatureFailure (request id req-1)`
	if err == nil || err.Error() != want {
		t.Fatalf("error\n %v\nwant\n %s", err, want)
	}
	if tcapi.Code(err) != "AuthFailure.SignatureFailure" {
		t.Errorf("errorCode = %q", tcapi.Code(err))
	}
}

func TestInstanceShutdown(t *testing.T) {
	const id = "ins-aaaa0001"
	node := testNode("w", "tencentcloud:///ap-guangzhou-3/"+id)
	tests := []struct {
		state   string
		want    bool
		missing bool
	}{
		{state: "STOPPED", want: true},
		{state: "STOPPING", want: true},
		{state: "SHUTDOWN", want: true},
		{state: "RUNNING"},
		{state: "PENDING"},
		{state: "STARTING"},
		{state: "REBOOTING"},
		{state: "LAUNCH_FAILED"},
		{state: "TERMINATING"},
		{missing: true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s missing=%v", tt.state, tt.missing), func(t *testing.T) {
			fake := newFake(ins{id: id, state: tt.state})
			if tt.missing {
				fake = newFake()
			}
			got, err := newTestInstances(fake).InstanceShutdown(context.Background(), node)
			if err != nil || got != tt.want {
				t.Errorf("InstanceShutdown = %v, %v; want %v, nil", got, err, tt.want)
			}
		})
	}
	t.Run("errors are errors", func(t *testing.T) {
		fake := &fakeCVM{respond: func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) {
			return nil, sdkErr("RequestLimitExceeded")
		}}
		if got, err := newTestInstances(fake).InstanceShutdown(context.Background(), node); got || err == nil {
			t.Errorf("InstanceShutdown = %v, %v; want false with an error", got, err)
		}
	})
	t.Run("filter found nothing is an error", func(t *testing.T) {
		if got, err := newTestInstances(newFake()).InstanceShutdown(context.Background(), testNode("10.0.0.1", "")); got || err == nil {
			t.Errorf("InstanceShutdown = %v, %v; want false with an error", got, err)
		}
	})
}

func TestInstanceMetadata(t *testing.T) {
	fake := newFake(ins{
		id: "ins-aaaa0001", name: "worker-1", zone: "ap-guangzhou-6", typ: "SA2.LARGE8",
		private: []string{"10.0.0.1", "10.0.0.11"}, public: []string{"203.0.113.7"},
	})
	i := newTestInstances(fake)
	ctx := context.Background()

	tests := []struct {
		name           string
		node           *v1.Node
		wantProviderID string
		wantHostname   string
	}{
		{"new node by IP", testNode("10.0.0.1", ""), "tencentcloud:///ap-guangzhou-6/ins-aaaa0001", "10.0.0.1"},
		{"hostname address kept", testNode("10.0.0.1", "", hostnameAddr("worker-1.local")),
			"tencentcloud:///ap-guangzhou-6/ins-aaaa0001", "worker-1.local"},
		{"qcloud providerID kept", testNode("n", "qcloud:///100006/ins-aaaa0001"), "qcloud:///100006/ins-aaaa0001", "n"},
		{"bare providerID kept", testNode("n", "ins-aaaa0001"), "ins-aaaa0001", "n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md, err := i.InstanceMetadata(ctx, tt.node)
			if err != nil {
				t.Fatal(err)
			}
			want := &cloudprovider.InstanceMetadata{
				ProviderID:   tt.wantProviderID,
				InstanceType: "SA2.LARGE8",
				NodeAddresses: []v1.NodeAddress{
					{Type: v1.NodeInternalIP, Address: "10.0.0.1"},
					{Type: v1.NodeInternalIP, Address: "10.0.0.11"},
					{Type: v1.NodeExternalIP, Address: "203.0.113.7"},
					{Type: v1.NodeHostName, Address: tt.wantHostname},
				},
				Zone:   "ap-guangzhou-6",
				Region: testRegion,
			}
			if !reflect.DeepEqual(md, want) {
				t.Errorf("metadata\n %+v\nwant\n %+v", md, want)
			}
		})
	}

	t.Run("not found", func(t *testing.T) {
		for _, node := range []*v1.Node{testNode("10.0.0.99", ""), testNode("x", "ins-zzzz9999")} {
			_, err := i.InstanceMetadata(ctx, node)
			if !errors.Is(err, cloudprovider.InstanceNotFound) || !strings.Contains(err.Error(), node.Name) {
				t.Errorf("%s: error %v, want InstanceNotFound naming the node", node.Name, err)
			}
		}
	})
	t.Run("instance without zone", func(t *testing.T) {
		bad := ins{id: "ins-aaaa0002"}.build()
		bad.Placement = nil
		_, err := newTestInstances(&fakeCVM{instances: []*cvm.Instance{bad}}).InstanceMetadata(ctx, testNode("ins-aaaa0002", ""))
		if err == nil || !strings.Contains(err.Error(), "Placement.Zone") {
			t.Errorf("error %v, want one about Placement.Zone", err)
		}
	})
	t.Run("lookup error", func(t *testing.T) {
		fake := &fakeCVM{respond: func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) {
			return nil, sdkErr("RequestLimitExceeded")
		}}
		_, err := newTestInstances(fake).InstanceMetadata(ctx, testNode("ins-aaaa0001", ""))
		if err == nil || errors.Is(err, cloudprovider.InstanceNotFound) {
			t.Errorf("error %v, want a lookup error that is not InstanceNotFound", err)
		}
	})
}

func TestFilterPagination(t *testing.T) {
	var specs []ins
	for n := range 250 {
		specs = append(specs, ins{id: fmt.Sprintf("ins-p%07d", n), name: "same"})
	}
	specs = append(specs, ins{id: "ins-other001", name: "same", vpc: otherVPC})
	fake := newFake(specs...)
	l := &instanceLookup{api: fake, vpcID: testVPC}
	got, err := l.byFilter(context.Background(), "test", "instance-name", []string{"same"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 250 {
		t.Fatalf("got %d instances, want 250", len(got))
	}
	if len(fake.calls) != 3 {
		t.Fatalf("%d calls, want 3", len(fake.calls))
	}
	for n, req := range fake.calls {
		if *req.Offset != int64(n*100) || *req.Limit != 100 {
			t.Errorf("call %d: offset %d limit %d", n, *req.Offset, *req.Limit)
		}
		if !strings.HasPrefix(summarize(req).filters, "vpc-id="+testVPC+";") {
			t.Errorf("call %d: no vpc-id filter: %s", n, summarize(req).filters)
		}
	}

	// Through the interface the 250 matches are ambiguous, and the error
	// lists a bounded number of candidates.
	_, err = newTestInstances(fake).InstanceMetadata(context.Background(), testNode("same", ""))
	if err == nil || !strings.Contains(err.Error(), "250 instances") || !strings.Contains(err.Error(), "and 240 more") {
		t.Errorf("error %v, want an ambiguity error", err)
	}
}

func TestFilterPaginationInconsistentAnswers(t *testing.T) {
	l := func(respond func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error)) *instanceLookup {
		return &instanceLookup{api: &fakeCVM{respond: respond}, vpcID: testVPC}
	}
	t.Run("empty page before TotalCount", func(t *testing.T) {
		_, err := l(func(req *cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) {
			if *req.Offset == 0 {
				return answer(3, ins{id: "ins-aaaa0001"}.build()), nil
			}
			return answer(3), nil
		}).byFilter(context.Background(), "t", "instance-name", []string{"x"})
		if err == nil || !strings.Contains(err.Error(), "empty") {
			t.Errorf("error %v, want empty page error", err)
		}
	})
	t.Run("TotalCount never reached", func(t *testing.T) {
		n := 0
		_, err := l(func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) {
			n++
			return answer(1<<40, ins{id: fmt.Sprintf("ins-%08d", n)}.build()), nil
		}).byFilter(context.Background(), "t", "instance-name", []string{"x"})
		if err == nil || n != maxPages {
			t.Errorf("error %v after %d calls, want an error after %d", err, n, maxPages)
		}
	})
}

func TestByIDChunksOf100(t *testing.T) {
	var specs []ins
	var ids []string
	for n := range 150 {
		id := fmt.Sprintf("ins-%08d", n)
		ids = append(ids, id)
		specs = append(specs, ins{id: id})
	}
	fake := newFake(specs...)
	got, err := (&instanceLookup{api: fake, vpcID: testVPC}).byID(context.Background(), "t", ids...)
	if err != nil || len(got) != 150 {
		t.Fatalf("byID = %d instances, %v", len(got), err)
	}
	if len(fake.calls) != 2 || len(fake.calls[0].InstanceIds) != 100 || len(fake.calls[1].InstanceIds) != 50 {
		t.Errorf("calls: %d", len(fake.calls))
	}
}
