package cvmlookup_test

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"

	"github.com/ccmkit/ccm/internal/tencent/cvmlookup"
	"github.com/ccmkit/ccm/internal/tencent/cvmlookup/cvmlookuptest"
	"github.com/ccmkit/ccm/internal/tencent/tcapi"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// filters renders a request's filters as "name=v1,v2;name=v".
func filters(req *cvm.DescribeInstancesRequest) string {
	var parts []string
	for _, f := range req.Filters {
		parts = append(parts, *f.Name+"="+strings.Join(common.StringValues(f.Values), ","))
	}
	return strings.Join(parts, ";")
}

// A filter lookup pages through every match, 100 at a time, always within
// the VPC: 250 instances of one name take three calls.
func TestByFilterPages(t *testing.T) {
	env := cvmlookuptest.Start(t, nil)
	var in []cloudsim.Instance
	for n := range 250 {
		in = append(in, cloudsim.Instance{ID: fmt.Sprintf("ins-p%07d", n), Name: "same"})
	}
	env.Add(t, append(in, cloudsim.Instance{ID: "ins-other001", Name: "same", VpcID: cvmlookuptest.OtherVPC})...)
	got, err := cvmlookup.New(env.API, cvmlookuptest.VPC).ByFilter(context.Background(), "test", "instance-name", []string{"same"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 250 {
		t.Fatalf("got %d instances, want the VPC's 250", len(got))
	}
	calls := env.API.Calls()
	if len(calls) != 3 {
		t.Fatalf("%d calls, want 3", len(calls))
	}
	// The pages after the first go out together: any order.
	slices.SortFunc(calls, func(a, b *cvm.DescribeInstancesRequest) int { return int(*a.Offset - *b.Offset) })
	for n, req := range calls {
		if *req.Offset != int64(n*100) || *req.Limit != 100 {
			t.Errorf("call %d: offset %d limit %d", n, *req.Offset, *req.Limit)
		}
		if f := filters(req); f != "vpc-id="+cvmlookuptest.VPC+";instance-name=same" {
			t.Errorf("call %d: filters %s", n, f)
		}
	}
}

// After a full first page, the other pages are in flight together (up to
// four), and the answer keeps offset order whatever order they come back in.
func TestPagesInParallel(t *testing.T) {
	env := cvmlookuptest.Start(t, nil)
	const total = 450
	arrived, release := make(chan struct{}, 10), make(chan struct{})
	env.API.AnswerWith(func(req *cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) {
		if *req.Offset > 0 {
			arrived <- struct{}{}
			<-release
			// Later pages answer first.
			time.Sleep(time.Duration(500-*req.Offset) * time.Millisecond / 20)
		}
		var set []*cvm.Instance
		for n := *req.Offset; n < min(*req.Offset+*req.Limit, total); n++ {
			set = append(set, cvmlookuptest.Instance(fmt.Sprintf("ins-%08d", n)))
		}
		return cvmlookuptest.Answer(total, set...), nil
	})
	together := 0
	go func() {
		// Count the pages in flight at once before letting any answer.
		defer close(release)
		for together < 4 {
			select {
			case <-arrived:
				together++
			case <-time.After(5 * time.Second):
				return
			}
		}
	}()
	got, err := cvmlookup.New(env.API, cvmlookuptest.VPC).InVPC(context.Background())
	if err != nil || len(got) != total {
		t.Fatalf("InVPC = %d instances, %v; want %d", len(got), err, total)
	}
	if together != 4 {
		t.Errorf("%d pages were in flight together, want the 4 after the first", together)
	}
	for n, ins := range got {
		if want := fmt.Sprintf("ins-%08d", n); *ins.InstanceId != want {
			t.Fatalf("instance %d is %s, want %s: pages out of order", n, *ins.InstanceId, want)
		}
	}
	if calls := len(env.API.Calls()); calls != 5 {
		t.Errorf("%d calls, want 5", calls)
	}
}

// The API takes five values per filter: six values take two calls.
func TestByFilterSplitsValuesByFive(t *testing.T) {
	env := cvmlookuptest.Start(t, nil)
	env.Add(t, cloudsim.Instance{ID: "ins-aaaa0001", PrivateIP: "10.0.0.6"})
	var ips []string
	for n := 1; n <= 6; n++ {
		ips = append(ips, fmt.Sprintf("10.0.0.%d", n))
	}
	got, err := cvmlookup.New(env.API, cvmlookuptest.VPC).ByFilter(context.Background(), "test", "private-ip-address", ips)
	if err != nil || len(got) != 1 {
		t.Fatalf("ByFilter = %d instances, %v", len(got), err)
	}
	calls := env.API.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d calls, want 2 (5 + 1 values)", len(calls))
	}
	if f := filters(calls[1]); f != "vpc-id="+cvmlookuptest.VPC+";private-ip-address=10.0.0.6" {
		t.Errorf("second call filters %q", f)
	}
}

// The API takes 100 ids per call: 150 take two calls.
func TestByIDChunksOf100(t *testing.T) {
	env := cvmlookuptest.Start(t, nil)
	var in []cloudsim.Instance
	var ids []string
	for n := range 150 {
		id := fmt.Sprintf("ins-%08d", n)
		ids = append(ids, id)
		in = append(in, cloudsim.Instance{ID: id})
	}
	env.Add(t, in...)
	got, err := cvmlookup.New(env.API, cvmlookuptest.VPC).ByID(context.Background(), "t", ids...)
	if err != nil || len(got) != 150 {
		t.Fatalf("ByID = %d instances, %v", len(got), err)
	}
	calls := env.API.Calls()
	if len(calls) != 2 || len(calls[0].InstanceIds) != 100 || len(calls[1].InstanceIds) != 50 {
		t.Errorf("%d calls, want 2 of 100 and 50 ids", len(calls))
	}
}

// The inventory's listing keeps only the VPC's instances.
func TestInVPC(t *testing.T) {
	env := cvmlookuptest.Start(t, nil)
	env.Add(t, cloudsim.Instance{ID: "ins-aaaa0001"}, cloudsim.Instance{ID: "ins-aaaa0002"},
		cloudsim.Instance{ID: "ins-bbbb0001", VpcID: cvmlookuptest.OtherVPC})
	got, err := cvmlookup.New(env.API, cvmlookuptest.VPC).InVPC(context.Background())
	if err != nil || len(got) != 2 {
		t.Fatalf("InVPC = %d instances, %v; want 2", len(got), err)
	}
}

// An API error names the action and the object, keeps the code and the
// request id, and is never read as "no instances".
func TestErrorsNameTheCallAndKeepTheCode(t *testing.T) {
	env := cvmlookuptest.Start(t, nil)
	env.Fail("AuthFailure.SignatureFailure", 0)
	_, err := cvmlookup.New(env.API, cvmlookuptest.VPC).ByFilter(context.Background(), `node "10.0.0.5"`, "private-ip-address", []string{"10.0.0.5"})
	if err == nil || !strings.HasPrefix(err.Error(), `DescribeInstances for node "10.0.0.5" (private-ip-address filter): [AuthFailure.SignatureFailure] `) ||
		!strings.Contains(err.Error(), "request id") {
		t.Fatalf("error %v", err)
	}
	if tcapi.Code(err) != "AuthFailure.SignatureFailure" {
		t.Errorf("code = %q", tcapi.Code(err))
	}
}

// Answers that do not fit the question are errors: a by-id answer decides
// whether a node is deleted, so only a consistent answer without the id may
// mean "gone". No API model gives these, so the Recorder answers.
func TestMalformedAnswers(t *testing.T) {
	const id = "ins-aaaa0001"
	noTotal := cvmlookuptest.Answer(0)
	noTotal.Response.TotalCount = nil
	tests := []struct {
		name    string
		resp    *cvm.DescribeInstancesResponse
		err     error
		wantErr string
	}{
		{"no Response", &cvm.DescribeInstancesResponse{}, nil, "no Response"},
		{"nil response", nil, nil, "no Response"},
		{"no TotalCount", noTotal, nil, "TotalCount"},
		{"TotalCount without the instance", cvmlookuptest.Answer(1), nil, "TotalCount 1 but 0 instances"},
		{"another instance answered", cvmlookuptest.Answer(1, cvmlookuptest.Instance("ins-bbbb0002")), nil, "not asked for"},
		{"same instance twice", cvmlookuptest.Answer(2, cvmlookuptest.Instance(id), cvmlookuptest.Instance(id)), nil, "twice"},
		{"instance without id", cvmlookuptest.Answer(1, &cvm.Instance{InstanceName: common.StringPtr("x")}), nil, "no InstanceId"},
		{"timeout", nil, context.DeadlineExceeded, "deadline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := cvmlookuptest.Start(t, nil)
			env.API.AnswerWith(func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) { return tt.resp, tt.err })
			_, err := cvmlookup.New(env.API, cvmlookuptest.VPC).ByID(context.Background(), "node w", id)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "DescribeInstances for node w") {
				t.Errorf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// Pagination stops on answers that cannot add up: an empty page before
// TotalCount, or a TotalCount never reached.
func TestPaginationInconsistentAnswers(t *testing.T) {
	lookup := func(t *testing.T, answer func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error)) error {
		env := cvmlookuptest.Start(t, nil)
		env.API.AnswerWith(answer)
		_, err := cvmlookup.New(env.API, cvmlookuptest.VPC).ByFilter(context.Background(), "t", "instance-name", []string{"x"})
		return err
	}
	t.Run("empty page before TotalCount", func(t *testing.T) {
		err := lookup(t, func(req *cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) {
			if *req.Offset == 0 {
				return cvmlookuptest.Answer(3, cvmlookuptest.Instance("ins-aaaa0001")), nil
			}
			return cvmlookuptest.Answer(3), nil
		})
		if err == nil || !strings.Contains(err.Error(), "empty") {
			t.Errorf("error %v, want an empty-page error", err)
		}
	})
	t.Run("TotalCount never reached", func(t *testing.T) {
		n := 0
		err := lookup(t, func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) {
			n++
			return cvmlookuptest.Answer(1<<40, cvmlookuptest.Instance(fmt.Sprintf("ins-%08d", n))), nil
		})
		if err == nil || !strings.Contains(err.Error(), "gave up after 100 pages") || n != 100 {
			t.Errorf("error %v after %d calls, want one after 100", err, n)
		}
	})
}

// A gateway IP is released when no instance of the VPC holds it, or only
// one being terminated; an instance of another VPC does not count.
func TestReleased(t *testing.T) {
	env := cvmlookuptest.Start(t, func(o *cloudsim.Options) { o.TerminatedLinger = -1 })
	env.Add(t,
		cloudsim.Instance{ID: "ins-aaaa0001", PrivateIP: "10.0.0.1"},
		cloudsim.Instance{ID: "ins-aaaa0002", PrivateIP: "10.0.0.2", State: "STOPPED"},
		cloudsim.Instance{ID: "ins-aaaa0003", PrivateIP: "10.0.0.3", State: "TERMINATING"},
		cloudsim.Instance{ID: "ins-bbbb0004", PrivateIP: "10.0.0.4", VpcID: cvmlookuptest.OtherVPC},
	)
	var ips []netip.Addr
	for n := 1; n <= 6; n++ {
		ips = append(ips, netip.MustParseAddr(fmt.Sprintf("10.0.0.%d", n)))
	}
	got, err := cvmlookup.New(env.API, cvmlookuptest.VPC).Released(context.Background(), ips)
	if err != nil {
		t.Fatal(err)
	}
	if want := ips[2:]; !slices.Equal(got, want) {
		t.Errorf("released %v, want %v", got, want)
	}
	if n := len(env.API.Calls()); n != 2 {
		t.Errorf("%d calls for 6 IPs, want 2 (five values per filter)", n)
	}

	// An error is never "released".
	env.Fail("RequestLimitExceeded", 0)
	if got, err := cvmlookup.New(env.API, cvmlookuptest.VPC).Released(context.Background(), ips); err == nil || got != nil {
		t.Errorf("Released = %v, %v; want an error and nothing", got, err)
	}
}

// The inventory's delta asks for the VPC's instances created since a time,
// written in Beijing time as the creation-start-time filter takes it.
func TestCreatedSince(t *testing.T) {
	env := cvmlookuptest.Start(t, nil)
	env.Add(t, cloudsim.Instance{ID: "ins-aaaa0001"}, cloudsim.Instance{ID: "ins-bbbb0001", VpcID: cvmlookuptest.OtherVPC})
	l := cvmlookup.New(env.API, cvmlookuptest.VPC)
	tests := []struct {
		name  string
		since time.Time
		want  int
	}{
		{name: "an hour ago: the VPC's one instance", since: time.Now().Add(-time.Hour), want: 1},
		{name: "in an hour: none", since: time.Now().Add(time.Hour), want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env.API.Reset()
			got, err := l.CreatedSince(context.Background(), tt.since)
			if err != nil || len(got) != tt.want {
				t.Fatalf("CreatedSince = %d instances, %v; want %d", len(got), err, tt.want)
			}
			beijing := tt.since.In(time.FixedZone("", 8*3600)).Format("2006-01-02 15:04:05")
			if calls := env.API.Calls(); len(calls) != 1 || filters(calls[0]) != "vpc-id="+cvmlookuptest.VPC+";creation-start-time="+beijing {
				t.Errorf("calls %d, filters %s; want one with creation-start-time=%s", len(calls), filters(calls[0]), beijing)
			}
		})
	}
}
