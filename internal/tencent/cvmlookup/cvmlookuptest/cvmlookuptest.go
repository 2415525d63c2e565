// Package cvmlookuptest runs the CVM API for tests: cloudsim in-process,
// reached through the real SDK client and the provider's transport over
// real HTTP with signed requests,
// so that the documented limits, validation and faults are cloudsim's
// (one model of the API), and a Recorder in front of it that keeps every
// request for assertions.
package cvmlookuptest

import (
	"context"
	"net/url"
	"sync"
	"testing"
	"time"

	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"

	"github.com/ccmkit/ccm/internal/tencent/cvmlookup"
	"github.com/ccmkit/ccm/internal/tencent/tcapi"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// The account and network every Env plays.
const (
	Region    = "ap-guangzhou"
	Zone      = "ap-guangzhou-3" // cloudsim.Instance zones default to this here
	VPC       = "vpc-aaaa1111"   // the cluster's VPC
	OtherVPC  = "vpc-bbbb2222"
	SecretID  = "AKIDcvmlookuptest0000000000000000000"
	SecretKey = "cvmlookuptestkey000000000000000k"
)

// Env is a running cloudsim with a CVM client pointed at it.
type Env struct {
	Sim *cloudsim.Sim
	// URL is cloudsim's API address, for a provider config's api_endpoint.
	URL string
	// API is the client to hand to the code under test.
	API *Recorder
}

// Start runs cloudsim until the test ends. mod may change its options.
func Start(t testing.TB, mod func(*cloudsim.Options)) *Env {
	t.Helper()
	opts := cloudsim.Options{Latency: cloudsim.ZeroLatency, Region: Region,
		DisableDataPlane: true,
		Tencent: cloudsim.TencentOptions{
			Credentials: map[string]string{SecretID: SecretKey},
		},
	}
	if mod != nil {
		mod(&opts)
	}
	sim := cloudsim.New(opts)
	addr, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	u, err := url.Parse(addr)
	if err != nil {
		t.Fatal(err)
	}
	// The provider's own transport: it paces DescribeInstances at the
	// documented 40/s that cloudsim enforces, and retries a throttled call,
	// as in production; its waits are shortened for tests.
	transport := tcapi.NewTransport(tcapi.Options{Provider: "cvmlookuptest", MaxAttempts: 3,
		RetryBudget: time.Second, BackoffBase: time.Millisecond, CoolDown: time.Millisecond})
	client, err := tcapi.NewClients(tcapi.ClientOptions{Region: Region, SecretID: SecretID, SecretKey: SecretKey,
		Endpoint: u.Host, Scheme: "HTTP", Transport: transport}).CVM()
	if err != nil {
		t.Fatal(err)
	}
	return &Env{Sim: sim, URL: addr, API: &Recorder{next: client}}
}

// Add creates instances; an empty VpcID is VPC and an empty Zone is Zone.
func (e *Env) Add(t testing.TB, in ...cloudsim.Instance) []cloudsim.Instance {
	t.Helper()
	for k := range in {
		if in[k].VpcID == "" {
			in[k].VpcID = VPC
		}
		if in[k].Zone == "" {
			in[k].Zone = Zone
		}
	}
	added, err := e.Sim.AddInstances(in...)
	if err != nil {
		t.Fatal(err)
	}
	return added
}

// Fail makes every DescribeInstances answer the error code (httpStatus 0)
// or the HTTP status, until ClearFaults.
func (e *Env) Fail(code string, httpStatus int) {
	e.Sim.SetFault(cloudsim.Fault{Action: "DescribeInstances", ErrorRate: 1, ErrorCode: code, HTTPStatus: httpStatus})
}

// Recorder passes DescribeInstances to cloudsim and keeps each request.
// AnswerWith replaces cloudsim's answer, for the answers no API model
// gives: malformed bodies, transport errors.
type Recorder struct {
	next cvmlookup.API

	mu     sync.Mutex
	calls  []*cvm.DescribeInstancesRequest
	answer func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error)
}

var _ cvmlookup.API = (*Recorder)(nil)

// DescribeInstancesWithContext implements cvmlookup.API.
func (r *Recorder) DescribeInstancesWithContext(ctx context.Context, req *cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) {
	r.mu.Lock()
	r.calls = append(r.calls, req)
	answer := r.answer
	r.mu.Unlock()
	if answer != nil {
		return answer(req)
	}
	return r.next.DescribeInstancesWithContext(ctx, req)
}

// AnswerWith makes f answer every call from now on (nil: cloudsim again).
func (r *Recorder) AnswerWith(f func(*cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answer = f
}

// Calls returns the requests so far.
func (r *Recorder) Calls() []*cvm.DescribeInstancesRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*cvm.DescribeInstancesRequest(nil), r.calls...)
}

// Reset forgets the requests so far.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = nil
}

// Answer is a well-formed answer with TotalCount total, for AnswerWith.
func Answer(total int64, set ...*cvm.Instance) *cvm.DescribeInstancesResponse {
	resp := cvm.NewDescribeInstancesResponse()
	resp.Response = &cvm.DescribeInstancesResponseParams{TotalCount: &total, InstanceSet: set, RequestId: ptr("req-1")}
	return resp
}

// Instance is a well-formed running instance of VPC, for AnswerWith.
func Instance(id string) *cvm.Instance {
	return &cvm.Instance{
		InstanceId: ptr(id), InstanceName: ptr(id), InstanceType: ptr("S5.MEDIUM4"), InstanceState: ptr("RUNNING"),
		PrivateIpAddresses: []*string{ptr("10.0.0.1")}, Placement: &cvm.Placement{Zone: ptr(Zone)},
		VirtualPrivateCloud: &cvm.VirtualPrivateCloud{VpcId: ptr(VPC)},
	}
}

func ptr(s string) *string { return &s }
