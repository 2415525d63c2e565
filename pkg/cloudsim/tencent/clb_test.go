package tencent

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// clbTestVIPs is this package's VIP pool, apart from the other packages'
// so that parallel test processes never bind the same address.
const clbTestVIPs = "127.242.0.1-127.242.3.254"

const (
	clbTestVPC    = "vpc-clbtest1"
	clbTestSubnet = "subnet-clbtest1"
)

type clbEnv struct {
	*env
	clb   *CLB
	plane *dataplane.Plane
	api   *clb.Client
}

// newCLBEnv serves a dialect with the CLB service and returns the real SDK
// client pointed at it. Tasks are instant unless opts says otherwise.
func newCLBEnv(t *testing.T, opts CLBOptions, pcfg dataplane.Config) *clbEnv {
	t.Helper()
	return newCLBEnvWith(t, core.Config{}, opts, pcfg)
}

// newCLBEnvWith is newCLBEnv with a core configuration (e.g. a clock).
func newCLBEnvWith(t *testing.T, cfg core.Config, opts CLBOptions, pcfg dataplane.Config) *clbEnv {
	t.Helper()
	if cfg.Latency == nil {
		cfg.Latency = core.ZeroLatency // unit tests: answers at once
	}
	c := core.New(cfg)
	d := New(c, Options{Credentials: map[string]string{testID: testKey}})
	if pcfg.VIPRange == "" {
		pcfg.VIPRange = clbTestVIPs
	}
	plane, err := dataplane.New(pcfg)
	if err != nil {
		t.Fatal(err)
	}
	if opts.TaskLatency == 0 {
		opts.TaskLatency = -1
	}
	opts.Plane = plane
	opts.SecurityGroups = d.SecurityGroups()
	l := NewCLB(c, opts)
	d.Register(l.Service())
	// Table-driven tests call faster than the documented 20/s; the limits
	// themselves are tested in TestCLBRateLimits.
	for action := range l.Service().Actions {
		c.SetRateLimit(action, 0)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(func() {
		srv.Close()
		l.Close()
		plane.Close()
	})
	e := &env{core: c, d: d, url: srv.URL, host: strings.TrimPrefix(srv.URL, "http://")}
	api, err := clb.NewClient(common.NewCredential(testID, testKey), testRegion, clientProfile(e))
	if err != nil {
		t.Fatal(err)
	}
	return &clbEnv{env: e, clb: l, plane: plane, api: api}
}

// createLB creates a load balancer through the API and returns its id.
func (e *clbEnv) createLB(t *testing.T, mutate func(*clb.CreateLoadBalancerRequest)) string {
	t.Helper()
	req := clb.NewCreateLoadBalancerRequest()
	req.LoadBalancerType = common.StringPtr("OPEN")
	req.VpcId = common.StringPtr(clbTestVPC)
	if mutate != nil {
		mutate(req)
	}
	resp, err := e.api.CreateLoadBalancer(req)
	if err != nil {
		t.Fatalf("CreateLoadBalancer: %v", err)
	}
	if len(resp.Response.LoadBalancerIds) != 1 {
		t.Fatalf("CreateLoadBalancer answered %d ids", len(resp.Response.LoadBalancerIds))
	}
	return *resp.Response.LoadBalancerIds[0]
}

func (e *clbEnv) createListener(t *testing.T, lbID, proto string, port int64, mutate func(*clb.CreateListenerRequest)) string {
	t.Helper()
	req := clb.NewCreateListenerRequest()
	req.LoadBalancerId = common.StringPtr(lbID)
	req.Protocol = common.StringPtr(proto)
	req.Ports = []*int64{common.Int64Ptr(port)}
	if mutate != nil {
		mutate(req)
	}
	resp, err := e.api.CreateListener(req)
	if err != nil {
		t.Fatalf("CreateListener %s:%d: %v", proto, port, err)
	}
	return *resp.Response.ListenerIds[0]
}

func (e *clbEnv) describeLB(t *testing.T, id string) *clb.LoadBalancer {
	t.Helper()
	req := clb.NewDescribeLoadBalancersRequest()
	req.LoadBalancerIds = common.StringPtrs([]string{id})
	resp, err := e.api.DescribeLoadBalancers(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Response.LoadBalancerSet) != 1 {
		return nil
	}
	return resp.Response.LoadBalancerSet[0]
}

func (e *clbEnv) taskStatus(t *testing.T, id string) (int64, string) {
	t.Helper()
	req := clb.NewDescribeTaskStatusRequest()
	req.TaskId = common.StringPtr(id)
	resp, err := e.api.DescribeTaskStatus(req)
	if err != nil {
		t.Fatalf("DescribeTaskStatus %s: %v", id, err)
	}
	return *resp.Response.Status, ptrStr(resp.Response.Message)
}

// waitTask polls DescribeTaskStatus until the task ends.
func (e *clbEnv) waitTask(t *testing.T, id string) (int64, string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, msg := e.taskStatus(t, id)
		if st != 2 {
			return st, msg
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s still running after 10s", id)
		}
		time.Sleep(100 * time.Millisecond) // well under DescribeTaskStatus's 20/s
	}
}

func lbIDs(set []*clb.LoadBalancer) []string {
	var out []string
	for _, lb := range set {
		out = append(out, *lb.LoadBalancerId)
	}
	return out
}

func TestCLBRateLimits(t *testing.T) {
	c := core.New(core.Config{})
	d := New(c, Options{})
	l := NewCLB(c, CLBOptions{})
	defer l.Close()
	d.Register(l.Service())
	limits := c.RateLimits()
	for action := range l.Service().Actions {
		if limits[action] != CLBActionQPS {
			t.Errorf("%s: rate limit %v, want %d", action, limits[action], CLBActionQPS)
		}
	}

	e := newCLBEnv(t, CLBOptions{}, dataplane.Config{Disabled: true})
	e.core.SetRateLimit("DescribeLoadBalancers", CLBActionQPS)
	throttled := 0
	for range CLBActionQPS + 5 {
		if _, err := e.api.DescribeLoadBalancers(clb.NewDescribeLoadBalancersRequest()); sdkCode(err) == "RequestLimitExceeded" {
			throttled++
		}
	}
	if throttled == 0 {
		t.Fatalf("%d calls at once were all admitted by a limit of %d/s", CLBActionQPS+5, CLBActionQPS)
	}
}

func TestCLBCreateValidation(t *testing.T) {
	e := newCLBEnv(t, CLBOptions{}, dataplane.Config{Disabled: true})
	tags := func(n int) []*clb.TagInfo {
		var out []*clb.TagInfo
		for i := range n {
			out = append(out, &clb.TagInfo{TagKey: common.StringPtr(fmt.Sprint("k", i)), TagValue: common.StringPtr("v")})
		}
		return out
	}
	tests := []struct {
		name   string
		mutate func(*clb.CreateLoadBalancerRequest)
		code   string
	}{
		{"missing type", func(r *clb.CreateLoadBalancerRequest) { r.LoadBalancerType = nil }, "MissingParameter"},
		{"bad type", func(r *clb.CreateLoadBalancerRequest) { r.LoadBalancerType = common.StringPtr("PUBLIC") }, "InvalidParameterValue"},
		{"internal without subnet", func(r *clb.CreateLoadBalancerRequest) { r.LoadBalancerType = common.StringPtr("INTERNAL") }, "MissingParameter"},
		{"internal without vpc", func(r *clb.CreateLoadBalancerRequest) {
			r.LoadBalancerType, r.VpcId, r.SubnetId = common.StringPtr("INTERNAL"), nil, common.StringPtr(clbTestSubnet)
		}, "MissingParameter"},
		{"open with subnet", func(r *clb.CreateLoadBalancerRequest) { r.SubnetId = common.StringPtr(clbTestSubnet) }, "InvalidParameter"},
		{"malformed vpc", func(r *clb.CreateLoadBalancerRequest) { r.VpcId = common.StringPtr("vpc-1") }, "InvalidParameter.FormatError"},
		{"name of 81 characters", func(r *clb.CreateLoadBalancerRequest) { r.LoadBalancerName = common.StringPtr(strings.Repeat("n", 81)) }, "InvalidParameterValue.Length"},
		{"empty name", func(r *clb.CreateLoadBalancerRequest) { r.LoadBalancerName = common.StringPtr("") }, "InvalidParameterValue.Length"},
		{"emoji in name", func(r *clb.CreateLoadBalancerRequest) { r.LoadBalancerName = common.StringPtr("lb-😀") }, "InvalidParameterValue"},
		{"21 tags", func(r *clb.CreateLoadBalancerRequest) { r.Tags = tags(21) }, "InvalidParameterValue.Length"},
		// CreateLoadBalancer does not document InvalidParameterValue.Duplicate.
		{"duplicate tag key", func(r *clb.CreateLoadBalancerRequest) { r.Tags = append(tags(1), tags(1)...) }, "InvalidParameterValue"},
		{"tag without key", func(r *clb.CreateLoadBalancerRequest) { r.Tags = []*clb.TagInfo{{TagValue: common.StringPtr("v")}} }, "MissingParameter"},
		{"client token of 65", func(r *clb.CreateLoadBalancerRequest) { r.ClientToken = common.StringPtr(strings.Repeat("t", 65)) }, "InvalidParameterValue.Length"},
		{"forward 0", func(r *clb.CreateLoadBalancerRequest) { r.Forward = common.Int64Ptr(0) }, "InvalidParameterValue"},
		{"ipv6", func(r *clb.CreateLoadBalancerRequest) { r.AddressIPVersion = common.StringPtr("IPv6FullChain") }, "UnsupportedOperation"},
		{"80 characters and 20 tags are fine", func(r *clb.CreateLoadBalancerRequest) {
			r.LoadBalancerName, r.Tags = common.StringPtr(strings.Repeat("名", 80)), tags(20)
		}, ""},
		{"internal", func(r *clb.CreateLoadBalancerRequest) {
			r.LoadBalancerType, r.SubnetId = common.StringPtr("INTERNAL"), common.StringPtr(clbTestSubnet)
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := clb.NewCreateLoadBalancerRequest()
			req.LoadBalancerType = common.StringPtr("OPEN")
			req.VpcId = common.StringPtr(clbTestVPC)
			if tt.mutate != nil {
				tt.mutate(req)
			}
			_, err := e.api.CreateLoadBalancer(req)
			if got := sdkCode(err); got != tt.code {
				t.Fatalf("code %q (%v), want %q", got, err, tt.code)
			}
		})
	}
}

func TestCLBClientTokenIdempotent(t *testing.T) {
	e := newCLBEnv(t, CLBOptions{TaskLatency: 100 * time.Millisecond}, dataplane.Config{Disabled: true})
	mk := func() *clb.CreateLoadBalancerResponse {
		req := clb.NewCreateLoadBalancerRequest()
		req.LoadBalancerType = common.StringPtr("OPEN")
		req.LoadBalancerName = common.StringPtr("svc-a")
		req.ClientToken = common.StringPtr("token-svc-a-uid")
		resp, err := e.api.CreateLoadBalancer(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first, second := mk(), mk()
	if *first.Response.LoadBalancerIds[0] != *second.Response.LoadBalancerIds[0] || *first.Response.DealName != *second.Response.DealName {
		t.Fatalf("a retried create with the same ClientToken made another LB: %v / %v", first.ToJsonString(), second.ToJsonString())
	}
	if n := len(e.clb.LoadBalancers()); n != 1 {
		t.Fatalf("%d load balancers, want 1", n)
	}
	// The retry started no task (TaskId is the RequestId of the call that
	// started one): its RequestId finds none, the first call's does, and so
	// does the DealName.
	treq := clb.NewDescribeTaskStatusRequest()
	treq.TaskId = second.Response.RequestId
	if _, err := e.api.DescribeTaskStatus(treq); sdkCode(err) != "InvalidParameter" {
		t.Fatalf("DescribeTaskStatus of the replay's RequestId: %v", err)
	}
	if st, _ := e.waitTask(t, *first.Response.RequestId); st != 0 {
		t.Fatalf("task status %d", st)
	}
	req := clb.NewDescribeTaskStatusRequest()
	req.DealName = first.Response.DealName
	resp, err := e.api.DescribeTaskStatus(req)
	if err != nil || *resp.Response.Status != 0 || *resp.Response.LoadBalancerIds[0] != *first.Response.LoadBalancerIds[0] {
		t.Fatalf("DescribeTaskStatus by DealName: %v %v", resp, err)
	}
}

func TestCLBDuplicateNameRenamedAndQuota(t *testing.T) {
	e := newCLBEnv(t, CLBOptions{QuotaOpen: 2, QuotaInternal: 1}, dataplane.Config{Disabled: true})
	named := func(r *clb.CreateLoadBalancerRequest) { r.LoadBalancerName = common.StringPtr("web") }
	a := e.createLB(t, named)
	b := e.createLB(t, named)
	na, nb := *e.describeLB(t, a).LoadBalancerName, *e.describeLB(t, b).LoadBalancerName
	if na != "web" || nb == "web" || !strings.HasPrefix(nb, "web") {
		t.Fatalf("names %q and %q: the duplicate must be renamed silently", na, nb)
	}
	// A name at the 80-character limit stays within it when renamed.
	long := strings.Repeat("x", 80)
	e.clb.quota[lbTypeOpen] = 4
	e.createLB(t, func(r *clb.CreateLoadBalancerRequest) { r.LoadBalancerName = &long })
	d := e.createLB(t, func(r *clb.CreateLoadBalancerRequest) { r.LoadBalancerName = &long })
	if n := *e.describeLB(t, d).LoadBalancerName; len([]rune(n)) > 80 || n == long {
		t.Fatalf("renamed long name %q", n)
	}

	req := clb.NewCreateLoadBalancerRequest()
	req.LoadBalancerType = common.StringPtr("OPEN")
	if _, err := e.api.CreateLoadBalancer(req); sdkCode(err) != "LimitExceeded" {
		t.Fatalf("fifth OPEN LB with a quota of 4: %v", err)
	}
	req.LoadBalancerType, req.VpcId, req.SubnetId = common.StringPtr("INTERNAL"), common.StringPtr(clbTestVPC), common.StringPtr(clbTestSubnet)
	if _, err := e.api.CreateLoadBalancer(req); err != nil {
		t.Fatalf("the INTERNAL quota is separate: %v", err)
	}
	if _, err := e.api.CreateLoadBalancer(req); sdkCode(err) != "LimitExceeded" {
		t.Fatalf("second INTERNAL LB with a quota of 1: %v", err)
	}
	qr, err := e.api.DescribeQuota(clb.NewDescribeQuotaRequest())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qr.Response.QuotaSet {
		if *q.QuotaId == "TOTAL_OPEN_CLB_QUOTA" && (*q.QuotaCurrent != 4 || *q.QuotaLimit != 4) {
			t.Fatalf("open quota %d/%d", *q.QuotaCurrent, *q.QuotaLimit)
		}
	}
}

func TestCLBDescribeLoadBalancers(t *testing.T) {
	e := newCLBEnv(t, CLBOptions{}, dataplane.Config{Disabled: true})
	tag := func(k, v string) *clb.TagInfo {
		return &clb.TagInfo{TagKey: common.StringPtr(k), TagValue: common.StringPtr(v)}
	}
	a := e.createLB(t, func(r *clb.CreateLoadBalancerRequest) {
		r.LoadBalancerName, r.Tags = common.StringPtr("alpha-web"), []*clb.TagInfo{tag("svc-uid", "u1"), tag("cluster", "c1")}
	})
	b := e.createLB(t, func(r *clb.CreateLoadBalancerRequest) {
		r.LoadBalancerName, r.Tags = common.StringPtr("beta-web"), []*clb.TagInfo{tag("svc-uid", "u2")}
	})
	c := e.createLB(t, func(r *clb.CreateLoadBalancerRequest) {
		r.LoadBalancerName, r.LoadBalancerType, r.SubnetId = common.StringPtr("gamma"), common.StringPtr("INTERNAL"), common.StringPtr(clbTestSubnet)
	})
	vipA := *e.describeLB(t, a).LoadBalancerVips[0]
	f := func(name string, values ...string) *clb.Filter {
		return &clb.Filter{Name: common.StringPtr(name), Values: common.StringPtrs(values)}
	}
	tests := []struct {
		name   string
		mutate func(*clb.DescribeLoadBalancersRequest)
		want   []string
		code   string
	}{
		{"all, newest first", nil, []string{c, b, a}, ""},
		{"oldest first", func(r *clb.DescribeLoadBalancersRequest) { r.OrderType = common.Int64Ptr(0) }, []string{a, b, c}, ""},
		{"tag-key", func(r *clb.DescribeLoadBalancersRequest) { r.Filters = []*clb.Filter{f("tag-key", "svc-uid")} }, []string{b, a}, ""},
		{"tag:key", func(r *clb.DescribeLoadBalancersRequest) { r.Filters = []*clb.Filter{f("tag:svc-uid", "u2")} }, []string{b}, ""},
		{"two filters AND", func(r *clb.DescribeLoadBalancersRequest) {
			r.Filters = []*clb.Filter{f("tag-key", "svc-uid"), f("tag:cluster", "c1")}
		}, []string{a}, ""},
		{"name is fuzzy", func(r *clb.DescribeLoadBalancersRequest) { r.LoadBalancerName = common.StringPtr("web") }, []string{b, a}, ""},
		{"by VIP", func(r *clb.DescribeLoadBalancersRequest) { r.LoadBalancerVips = common.StringPtrs([]string{vipA}) }, []string{a}, ""},
		{"by type", func(r *clb.DescribeLoadBalancersRequest) { r.LoadBalancerType = common.StringPtr("INTERNAL") }, []string{c}, ""},
		{"by VPC", func(r *clb.DescribeLoadBalancersRequest) { r.VpcId = common.StringPtr("vpc-other001") }, nil, ""},
		{"by ids", func(r *clb.DescribeLoadBalancersRequest) {
			r.LoadBalancerIds = common.StringPtrs([]string{a, "lb-nothere"})
		}, []string{a}, ""},
		{"page", func(r *clb.DescribeLoadBalancersRequest) { r.Offset, r.Limit = common.Int64Ptr(1), common.Int64Ptr(1) }, []string{b}, ""},
		{"21 ids", func(r *clb.DescribeLoadBalancersRequest) {
			r.LoadBalancerIds = common.StringPtrs(slices.Repeat([]string{a}, 21))
		}, nil, "InvalidParameterValue.Length"},
		{"limit 101", func(r *clb.DescribeLoadBalancersRequest) { r.Limit = common.Int64Ptr(101) }, nil, "InvalidParameterValue.Range"},
		{"unknown filter", func(r *clb.DescribeLoadBalancersRequest) { r.Filters = []*clb.Filter{f("color", "red")} }, nil, "InvalidParameterValue.InvalidFilter"},
		{"filter without values", func(r *clb.DescribeLoadBalancersRequest) { r.Filters = []*clb.Filter{f("tag-key")} }, nil, "InvalidParameterValue.InvalidFilter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := clb.NewDescribeLoadBalancersRequest()
			if tt.mutate != nil {
				tt.mutate(req)
			}
			resp, err := e.api.DescribeLoadBalancers(req)
			if got := sdkCode(err); got != tt.code {
				t.Fatalf("code %q (%v), want %q", got, err, tt.code)
			}
			if err != nil {
				return
			}
			if got := lbIDs(resp.Response.LoadBalancerSet); !slices.Equal(got, tt.want) {
				t.Fatalf("ids %v, want %v", got, tt.want)
			}
			if tt.name == "page" && *resp.Response.TotalCount != 3 {
				t.Fatalf("TotalCount %d, want 3", *resp.Response.TotalCount)
			}
		})
	}
	lb := e.describeLB(t, c)
	if *lb.Status != 1 || *lb.SubnetId != clbTestSubnet || *lb.VpcId != clbTestVPC || len(lb.LoadBalancerVips) != 1 ||
		!strings.HasPrefix(*lb.LoadBalancerVips[0], "127.242.") {
		t.Fatalf("internal LB fields: %s", mustJSON(lb))
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
