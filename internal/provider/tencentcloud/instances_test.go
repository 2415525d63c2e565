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

	"github.com/ccmkit/ccm/internal/tencent/config"
	"github.com/ccmkit/ccm/internal/tencent/cvmlookup/cvmlookuptest"
	"github.com/ccmkit/ccm/internal/tencent/tcapi"
	"github.com/ccmkit/ccm/pkg/cloudsim"
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

// ins is a cloudsim instance of the test VPC.
func ins(id, name, ip string) cloudsim.Instance {
	return cloudsim.Instance{ID: id, Name: name, PrivateIP: ip}
}

func TestFindMappingPaths(t *testing.T) {
	env := startNodes(t,
		ins("ins-aaaa0001", "worker-1", "10.0.0.1"),
		ins("ins-aaaa0002", "worker-2", "10.0.0.2"),
		ins("ins-aaaa0003", "host-3.example", "10.0.0.3"),
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
		{"InternalIP addresses", testNode("worker-x", "", internalIP("10.0.0.2"), internalIP("fd00::1"), internalIP("10.0.0.2")),
			"ins-aaaa0002", call{filters: "vpc-id=" + testVPC + ";private-ip-address=10.0.0.2"}},
		{"instance name", testNode("worker-1", ""),
			"ins-aaaa0001", call{filters: "vpc-id=" + testVPC + ";instance-name=worker-1"}},
		{"instance name or hostname address", testNode("node-3", "", hostnameAddr("host-3.example")),
			"ins-aaaa0003", call{filters: "vpc-id=" + testVPC + ";instance-name=node-3,host-3.example"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env.API.Reset()
			got, err := newTestInstances(env).find(context.Background(), tt.node, config.DefaultInstanceCacheTTL)
			if err != nil {
				t.Fatalf("find: %v", err)
			}
			if got.instance == nil || *got.instance.InstanceId != tt.wantID {
				t.Fatalf("found %+v, want %s", got.instance, tt.wantID)
			}
			calls := env.API.Calls()
			if len(calls) != 1 {
				t.Fatalf("%d calls, want 1", len(calls))
			}
			if c := summarize(calls[0]); c != tt.want {
				t.Errorf("request %+v, want %+v", c, tt.want)
			}
		})
	}
}

func TestFindStopsAtFirstApplicableRule(t *testing.T) {
	// The node is named by IP; an instance named like the node exists but
	// must not be used: the IP rule applies and finds nothing.
	env := startNodes(t, ins("ins-aaaa0001", "10.0.0.7", "10.9.9.9"))
	f, err := newTestInstances(env).find(context.Background(), testNode("10.0.0.7", ""), config.DefaultInstanceCacheTTL)
	if err != nil || f.instance != nil || f.byID {
		t.Fatalf("find = %+v, %v; want nothing found by filter", f, err)
	}
	if n := len(env.API.Calls()); n != 1 {
		t.Fatalf("%d calls, want 1", n)
	}
}

func TestFindSplitsFilterValuesByFive(t *testing.T) {
	env := startNodes(t, ins("ins-aaaa0001", "", "10.0.0.6"))
	var addrs []v1.NodeAddress
	for i := 1; i <= 6; i++ {
		addrs = append(addrs, internalIP(fmt.Sprintf("10.0.0.%d", i)))
	}
	f, err := newTestInstances(env).find(context.Background(), testNode("n", "", addrs...), config.DefaultInstanceCacheTTL)
	if err != nil || f.instance == nil {
		t.Fatalf("find = %+v, %v", f, err)
	}
	calls := env.API.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d calls, want 2 (5 + 1 values)", len(calls))
	}
	if got := summarize(calls[1]).filters; got != "vpc-id="+testVPC+";private-ip-address=10.0.0.6" {
		t.Errorf("second call filters %q", got)
	}
}

func TestFindAmbiguous(t *testing.T) {
	tests := []struct {
		name string
		in   []cloudsim.Instance
		node *v1.Node
	}{
		{"two instances with the node's name",
			[]cloudsim.Instance{ins("ins-aaaa0001", "w", ""), ins("ins-aaaa0002", "w", "")},
			testNode("w", "")},
		{"node IPs on two instances",
			[]cloudsim.Instance{ins("ins-aaaa0001", "", "10.0.0.1"), ins("ins-aaaa0002", "", "10.0.0.2")},
			testNode("w", "", internalIP("10.0.0.1"), internalIP("10.0.0.2"))},
		{"name and hostname on two instances",
			[]cloudsim.Instance{ins("ins-aaaa0001", "w", ""), ins("ins-aaaa0002", "w.example", "")},
			testNode("w", "", hostnameAddr("w.example"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := newTestInstances(startNodes(t, tt.in...))
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

// Through the interface, 250 instances of one name are ambiguous, and the
// error lists a bounded number of candidates.
func TestAmbiguityErrorIsBounded(t *testing.T) {
	var in []cloudsim.Instance
	for n := range 250 {
		in = append(in, ins(fmt.Sprintf("ins-p%07d", n), "same", ""))
	}
	_, err := newTestInstances(startNodes(t, in...)).InstanceMetadata(context.Background(), testNode("same", ""))
	if err == nil || !strings.Contains(err.Error(), "250 instances") || !strings.Contains(err.Error(), "and 240 more") {
		t.Errorf("error %v, want an ambiguity error", err)
	}
}

func TestVPCMismatch(t *testing.T) {
	foreign := cloudsim.Instance{ID: "ins-aaaa0001", Name: "w", VpcID: otherVPC, PrivateIP: "10.0.0.1"}
	env := startNodes(t, foreign)
	i := newTestInstances(env)
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
		lying := startNodes(t)
		in := cvmlookuptest.Instance(foreign.ID)
		in.VirtualPrivateCloud.VpcId = common.StringPtr(otherVPC)
		lying.API.AnswerWith(func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) {
			return cvmlookuptest.Answer(1, in), nil
		})
		_, err := newTestInstances(lying).InstanceMetadata(ctx, testNode("10.0.0.1", ""))
		if !errors.Is(err, cloudprovider.InstanceNotFound) {
			t.Errorf("metadata error %v, want InstanceNotFound", err)
		}
	})
}

// answering replaces cloudsim's answer, for answers no API model gives.
type answering func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error)

func reply(resp *cvm.DescribeInstancesResponse, err error) answering {
	return func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) { return resp, err }
}

func TestInstanceExists(t *testing.T) {
	const id = "ins-aaaa0001"
	byProviderID := testNode("w", "tencentcloud:///ap-guangzhou-3/"+id)
	byName := testNode(id, "")
	byIP := testNode("10.0.0.1", "")
	inState := func(state string) []cloudsim.Instance {
		return []cloudsim.Instance{{ID: id, PrivateIP: "10.0.0.1", State: state}}
	}
	noTotal := cvmlookuptest.Answer(0)
	noTotal.Response.TotalCount = nil

	tests := []struct {
		name       string
		node       *v1.Node
		in         []cloudsim.Instance // cloudsim's instances
		fault      string              // every DescribeInstances answers this code
		status     int                 // ... or this HTTP status
		answer     answering           // replaces cloudsim's answer
		wantExists bool
		wantErr    string // substring; "" means no error
	}{
		{name: "running", node: byProviderID, in: inState("RUNNING"), wantExists: true},
		{name: "stopped", node: byProviderID, in: inState("STOPPED"), wantExists: true},
		{name: "launch failed still exists", node: byProviderID, in: inState("LAUNCH_FAILED"), wantExists: true},
		{name: "terminating", node: byProviderID, in: inState("TERMINATING")},
		{name: "gone by providerID", node: byProviderID},
		{name: "gone by instance-id name", node: byName},
		{name: "terminating found by filter", node: byIP, in: inState("TERMINATING")},
		{name: "filter found nothing", node: byIP, wantExists: true, wantErr: "cannot tell"},
		{name: "throttled", node: byProviderID, fault: "RequestLimitExceeded", wantExists: true, wantErr: "[RequestLimitExceeded]"},
		{name: "auth failure", node: byProviderID, fault: "AuthFailure.SignatureFailure", wantExists: true, wantErr: "AuthFailure.SignatureFailure"},
		{name: "auth failure by filter", node: byIP, fault: "AuthFailure.SecretIdNotFound", wantExists: true, wantErr: "private-ip-address filter"},
		{name: "http 502", node: byProviderID, status: 502, wantExists: true, wantErr: "502"},
		{name: "invalid filter", node: byIP, fault: "InvalidFilter", wantExists: true, wantErr: "InvalidFilter"},
		{name: "instance in another VPC", node: byProviderID, in: []cloudsim.Instance{{ID: id, VpcID: otherVPC}}, wantExists: true, wantErr: otherVPC},
		{name: "foreign providerID", node: testNode("w", "aws:///us-east-1a/i-0123"), wantExists: true, wantErr: "not a Tencent Cloud providerID"},
		{name: "timeout", node: byProviderID, answer: reply(nil, context.DeadlineExceeded), wantExists: true, wantErr: "deadline"},
		{name: "no Response", node: byProviderID, answer: reply(&cvm.DescribeInstancesResponse{}, nil), wantExists: true, wantErr: "malformed"},
		{name: "nil response", node: byProviderID, answer: reply(nil, nil), wantExists: true, wantErr: "malformed"},
		{name: "no TotalCount", node: byProviderID, answer: reply(noTotal, nil), wantExists: true, wantErr: "TotalCount"},
		{name: "TotalCount without the instance", node: byProviderID, answer: reply(cvmlookuptest.Answer(1), nil), wantExists: true, wantErr: "malformed"},
		{name: "another instance answered", node: byProviderID, answer: reply(cvmlookuptest.Answer(1, cvmlookuptest.Instance("ins-bbbb0002")), nil),
			wantExists: true, wantErr: "not asked for"},
	}
	for _, mode := range []string{"inventory", "direct"} {
		for _, tt := range tests {
			t.Run(mode+"/"+tt.name, func(t *testing.T) {
				env := startNodes(t, tt.in...)
				if tt.fault != "" || tt.status != 0 {
					env.Fail(tt.fault, tt.status)
				}
				env.API.AnswerWith(tt.answer)
				if mode == "direct" {
					t.Setenv(EnvBenchInventoryOff, "1")
				}
				i := newTestInstances(env)
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
	env := startNodes(t)
	env.Fail("AuthFailure.SignatureFailure", 0)
	_, err := newTestInstances(env).InstanceExists(context.Background(), testNode("10.0.0.5", ""))
	want := `tencentcloud.InstanceExists: node "10.0.0.5": DescribeInstances for the nodes of 10.0.0.5 (private-ip-address filter): [AuthFailure.SignatureFailure] `
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "(request id ") {
		t.Fatalf("error\n %v\nwant it to start with\n %s\nand name the request id", err, want)
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
			env := startNodes(t)
			if !tt.missing {
				env.Add(t, cloudsim.Instance{ID: id, State: tt.state})
			}
			got, err := newTestInstances(env).InstanceShutdown(context.Background(), node)
			if err != nil || got != tt.want {
				t.Errorf("InstanceShutdown = %v, %v; want %v, nil", got, err, tt.want)
			}
		})
	}
	t.Run("errors are errors", func(t *testing.T) {
		env := startNodes(t, cloudsim.Instance{ID: id, State: "STOPPED"})
		env.Fail("RequestLimitExceeded", 0)
		if got, err := newTestInstances(env).InstanceShutdown(context.Background(), node); got || err == nil {
			t.Errorf("InstanceShutdown = %v, %v; want false with an error", got, err)
		}
	})
	t.Run("filter found nothing is an error", func(t *testing.T) {
		if got, err := newTestInstances(startNodes(t)).InstanceShutdown(context.Background(), testNode("10.0.0.1", "")); got || err == nil {
			t.Errorf("InstanceShutdown = %v, %v; want false with an error", got, err)
		}
	})
}

func TestInstanceMetadata(t *testing.T) {
	env := startNodes(t, cloudsim.Instance{ID: "ins-aaaa0001", Name: "worker-1", Zone: "ap-guangzhou-6", Type: "SA2.LARGE8",
		PrivateIP: "10.0.0.1", PublicIP: "203.0.113.7"})
	i := newTestInstances(env)
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
	// An instance with several private addresses (secondary IPs, which
	// cloudsim does not model) reports each as an InternalIP, in order.
	t.Run("every private address", func(t *testing.T) {
		env := startNodes(t)
		in := cvmlookuptest.Instance("ins-aaaa0002")
		in.PrivateIpAddresses = common.StringPtrs([]string{"10.0.0.2", "10.0.0.12"})
		env.API.AnswerWith(reply(cvmlookuptest.Answer(1, in), nil))
		md, err := newTestInstances(env).InstanceMetadata(ctx, testNode("n", "ins-aaaa0002"))
		if err != nil {
			t.Fatal(err)
		}
		want := []v1.NodeAddress{internalIP("10.0.0.2"), internalIP("10.0.0.12"), hostnameAddr("n")}
		if !reflect.DeepEqual(md.NodeAddresses, want) {
			t.Errorf("addresses %v, want %v", md.NodeAddresses, want)
		}
	})
	t.Run("instance without zone", func(t *testing.T) {
		env := startNodes(t)
		bad := cvmlookuptest.Instance("ins-aaaa0002")
		bad.Placement = nil
		env.API.AnswerWith(reply(cvmlookuptest.Answer(1, bad), nil))
		_, err := newTestInstances(env).InstanceMetadata(ctx, testNode("ins-aaaa0002", ""))
		if err == nil || !strings.Contains(err.Error(), "Placement.Zone") {
			t.Errorf("error %v, want one about Placement.Zone", err)
		}
	})
	t.Run("lookup error", func(t *testing.T) {
		env := startNodes(t, cloudsim.Instance{ID: "ins-aaaa0001"})
		env.Fail("RequestLimitExceeded", 0)
		_, err := newTestInstances(env).InstanceMetadata(ctx, testNode("ins-aaaa0001", ""))
		if err == nil || errors.Is(err, cloudprovider.InstanceNotFound) {
			t.Errorf("error %v, want a lookup error that is not InstanceNotFound", err)
		}
	})
}
