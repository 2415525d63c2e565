package cloudsim_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	tcerr "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/errors"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/profile"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"

	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

const (
	secretID  = "AKIDsimtest"
	secretKey = "sim-test-key"
)

func start(t *testing.T, opts cloudsim.Options) (*cloudsim.Sim, string) {
	t.Helper()
	if opts.Tencent.Credentials == nil {
		opts.Tencent.Credentials = map[string]string{secretID: secretKey}
	}
	if opts.Latency == nil {
		opts.Latency = cloudsim.ZeroLatency // unit tests: answers at once
	}
	sim := cloudsim.New(opts)
	url, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	return sim, url
}

func sdkClient(t *testing.T, url, region string) *cvm.Client {
	t.Helper()
	cpf := profile.NewClientProfile()
	cpf.HttpProfile.Endpoint = strings.TrimPrefix(url, "http://")
	cpf.HttpProfile.Scheme = "HTTP"
	c, err := cvm.NewClient(common.NewCredential(secretID, secretKey), region, cpf)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func code(err error) string {
	var e *tcerr.TencentCloudSDKError
	if errors.As(err, &e) {
		return e.Code
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

func TestSimEndToEnd(t *testing.T) {
	sim, url := start(t, cloudsim.Options{TerminatedLinger: 300 * time.Millisecond})
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("url %q", url)
	}
	ctx := context.Background()
	admin := &cloudsim.AdminClient{BaseURL: url}
	if err := admin.Healthz(ctx); err != nil {
		t.Fatal(err)
	}

	added, err := admin.AddInstances(ctx,
		cloudsim.Instance{Name: "node-1", Zone: "ap-guangzhou-3", PrivateIP: "10.0.1.1", VpcID: "vpc-11111111"},
		cloudsim.Instance{Name: "node-2", Zone: "ap-guangzhou-3", PrivateIP: "10.0.1.2", VpcID: "vpc-11111111"},
	)
	if err != nil || len(added) != 2 || added[0].ID == "" || added[0].State != "RUNNING" {
		t.Fatalf("AddInstances: %+v %v", added, err)
	}
	_, err = admin.AddInstances(ctx, cloudsim.Instance{PrivateIP: "10.0.1.1", VpcID: "vpc-11111111"})
	var ae *cloudsim.AdminError
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest || !strings.Contains(ae.Message, "already used") {
		t.Fatalf("duplicate IP: %v", err)
	}
	list, err := admin.Instances(ctx)
	if err != nil || len(list) != 2 || len(sim.Instances()) != 2 {
		t.Fatalf("Instances: %v %v", list, err)
	}

	cl := sdkClient(t, url, "ap-guangzhou")
	req := cvm.NewDescribeInstancesRequest()
	req.Filters = []*cvm.Filter{
		{Name: common.StringPtr("vpc-id"), Values: common.StringPtrs([]string{"vpc-11111111"})},
		{Name: common.StringPtr("private-ip-address"), Values: common.StringPtrs([]string{"10.0.1.2"})},
	}
	resp, err := cl.DescribeInstances(req)
	if err != nil || *resp.Response.TotalCount != 1 || *resp.Response.InstanceSet[0].InstanceId != added[1].ID {
		t.Fatalf("DescribeInstances: %v %v", resp, err)
	}

	// State changes through the admin API are visible to the SDK.
	if err := admin.SetInstanceState(ctx, added[0].ID, "STOPPED"); err != nil {
		t.Fatal(err)
	}
	byID := cvm.NewDescribeInstancesRequest()
	byID.InstanceIds = common.StringPtrs([]string{added[0].ID})
	resp, err = cl.DescribeInstances(byID)
	if err != nil || *resp.Response.InstanceSet[0].InstanceState != "STOPPED" {
		t.Fatalf("after stop: %v %v", resp, err)
	}
	if err := admin.SetInstanceState(ctx, "ins-zzzzzzzz", "STOPPED"); !errors.As(err, &ae) || ae.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown instance: %v", err)
	}
	// Shortcut endpoints.
	for _, op := range []string{"start", "terminate"} {
		r, err := http.Post(url+"/admin/instances/"+added[0].ID+"/"+op, "application/json", nil)
		if err != nil || r.StatusCode != http.StatusOK {
			t.Fatalf("%s: %v %v", op, r, err)
		}
		r.Body.Close()
	}
	resp, _ = cl.DescribeInstances(byID)
	if *resp.Response.InstanceSet[0].InstanceState != "TERMINATING" {
		t.Fatalf("not TERMINATING: %s", resp.ToJsonString())
	}
	time.Sleep(350 * time.Millisecond)
	resp, err = cl.DescribeInstances(byID)
	if err != nil || *resp.Response.TotalCount != 0 || len(resp.Response.InstanceSet) != 0 {
		t.Fatalf("terminated instance still visible: %v %v", resp, err)
	}

	// Faults through the admin API.
	if err := admin.SetFault(ctx, cloudsim.Fault{Action: "DescribeInstances", ErrorRate: 1, ErrorCode: "AuthFailure.UnauthorizedOperation"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.DescribeInstances(byID); code(err) != "AuthFailure.UnauthorizedOperation" {
		t.Fatalf("fault: %v", err)
	}
	if err := admin.SetFault(ctx, cloudsim.Fault{Action: "DescribeInstances", ErrorRate: 3}); !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad fault: %v", err)
	}
	if err := admin.ClearFaults(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.DescribeInstances(byID); err != nil {
		t.Fatal(err)
	}

	// Rate limit through the admin API.
	if err := admin.SetRateLimit(ctx, "DescribeInstances", 1); err != nil {
		t.Fatal(err)
	}
	var throttled int
	for range 5 {
		if _, err := cl.DescribeInstances(byID); code(err) == "RequestLimitExceeded" {
			throttled++
		}
	}
	if throttled < 3 {
		t.Fatalf("only %d of 5 throttled at 1/s", throttled)
	}

	calls, err := admin.Calls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	di := calls["DescribeInstances"]
	if di["OK"] < 5 || di["AuthFailure.UnauthorizedOperation"] != 1 || di["RequestLimitExceeded"] != throttled {
		t.Fatalf("calls %v", calls)
	}
	if sim.Calls()["DescribeInstances"]["OK"] != di["OK"] {
		t.Fatal("Sim.Calls and admin calls differ")
	}
	if err := admin.ResetCalls(ctx); err != nil {
		t.Fatal(err)
	}
	if calls, _ := admin.Calls(ctx); len(calls) != 0 {
		t.Fatalf("after reset: %v", calls)
	}
}

func TestSimGoAPI(t *testing.T) {
	var mu sync.Mutex
	var logged []cloudsim.Call
	sim, url := start(t, cloudsim.Options{
		Region:     "ap-shanghai",
		RateLimits: map[string]float64{"DescribeInstances": 0},
		OnCall: func(c cloudsim.Call) {
			mu.Lock()
			defer mu.Unlock()
			logged = append(logged, c)
		},
	})
	out, err := sim.AddInstances(cloudsim.Instance{PrivateIP: "10.0.0.1"})
	if err != nil || out[0].Zone != "ap-shanghai-1" {
		t.Fatalf("%+v %v", out, err)
	}
	if _, err := sim.AddInstances(cloudsim.Instance{ID: "bad"}); err == nil {
		t.Fatal("want error for a malformed id")
	}
	if err := sim.SetInstanceState(out[0].ID, "SHUTDOWN"); err != nil {
		t.Fatal(err)
	}
	if sim.Instances()[0].State != "SHUTDOWN" {
		t.Fatal("state not set")
	}
	cl := sdkClient(t, url, "ap-shanghai")
	sim.SetFault(cloudsim.Fault{Action: "*", ErrorRate: 1, HTTPStatus: 500})
	if _, err := cl.DescribeInstances(cvm.NewDescribeInstancesRequest()); code(err) != "ClientError.HttpStatusCodeError" {
		t.Fatalf("HTTP 500: %v", err)
	}
	sim.ClearFaults()
	resp, err := cl.DescribeInstances(cvm.NewDescribeInstancesRequest())
	if err != nil || *resp.Response.InstanceSet[0].InstanceState != "SHUTDOWN" {
		t.Fatalf("%v %v", resp, err)
	}
	if got := sim.Calls()["DescribeInstances"]; got["HTTP500"] != 1 || got["OK"] != 1 {
		t.Fatalf("calls %v", got)
	}
	sim.ResetCalls()
	if len(sim.Calls()) != 0 {
		t.Fatal("ResetCalls")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logged) != 2 || logged[1].Principal != secretID || logged[1].Service != "cvm" || logged[1].Region != "ap-shanghai" {
		t.Fatalf("OnCall: %+v", logged)
	}
	if _, err := sim.Start("127.0.0.1:0"); err == nil {
		t.Fatal("second Start must fail")
	}
	if err := sim.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sim.Close(); err != nil {
		t.Fatal("second Close must be a no-op")
	}
}

func TestHandlerWithoutStart(t *testing.T) {
	sim := cloudsim.New(cloudsim.Options{Latency: cloudsim.ZeroLatency})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/admin/healthz", nil)
	sim.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "ok") {
		t.Fatalf("healthz: %d %s", rec.Code, rec.Body.String())
	}
}

// Each registered dialect answers on its own patterns, whatever the
// method (the dialect then refuses what it does not serve); a path no
// dialect claims is a 404 that says where each API is.
func TestDialectRouting(t *testing.T) {
	sim := cloudsim.New(cloudsim.Options{Latency: cloudsim.ZeroLatency})
	defer sim.Close()
	tests := []struct {
		method, path string
		status       int
		body         string
	}{
		{http.MethodPost, "/", http.StatusOK, "AuthFailure"},                                 // Tencent: unsigned
		{http.MethodGet, "/", http.StatusOK, "UnsupportedProtocol"},                          // Tencent: POST only
		{http.MethodGet, "/20160918/instances", http.StatusUnauthorized, "NotAuthenticated"}, // OCI
		{http.MethodGet, "/20200501/networkLoadBalancers", http.StatusUnauthorized, "NotAuthenticated"},
		{http.MethodGet, "/admin/healthz", http.StatusOK, "ok"},
		{http.MethodGet, "/latest/meta-data/cam/security-credentials/", http.StatusNotFound, "no CAM role bound"}, // Tencent's metadata service
		{http.MethodGet, "/nothing", http.StatusNotFound, "no API at /nothing (oci at /20160918/, /20170115/, /20200501/, /opc/v2/, /v1/x509; tencent at /, /latest/meta-data/; admin at /admin/)"},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		sim.Handler().ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		if rec.Code != tt.status || !strings.Contains(rec.Body.String(), tt.body) {
			t.Errorf("%s %s: %d %s, want %d with %q", tt.method, tt.path, rec.Code, rec.Body.String(), tt.status, tt.body)
		}
	}
	if got := cloudsim.Dialects(); !slices.Equal(got, []string{"oci", "tencent"}) {
		t.Errorf("Dialects() = %v", got)
	}
}

// Answers are dated by cloudsim's clock, so that a skewed Clock shows in
// the Date header as a real API's clock would.
func TestAnswersDatedByTheSimClock(t *testing.T) {
	ahead := time.Now().Add(10 * time.Minute)
	sim := cloudsim.New(cloudsim.Options{Latency: cloudsim.ZeroLatency, Clock: func() time.Time { return ahead }})
	for _, path := range []string{"/admin/healthz", "/", "/20160918/instances"} {
		rec := httptest.NewRecorder()
		sim.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		got, err := http.ParseTime(rec.Header().Get("Date"))
		if err != nil || !got.Equal(ahead.Truncate(time.Second)) {
			t.Errorf("%s: Date %q, want %s", path, rec.Header().Get("Date"), ahead.UTC().Format(http.TimeFormat))
		}
	}
}

func TestLoadSeedIntoSim(t *testing.T) {
	path := filepath.Join(t.TempDir(), "seed.yaml")
	seed := `instances:
- id: ins-seed0001
  name: seed-1
  zone: ap-guangzhou-3
  privateIP: 10.2.0.1
  vpcID: vpc-seed0001
  tags: {cluster: demo}
- name: seed-2
  privateIP: 10.2.0.2
  state: STOPPED
`
	if err := os.WriteFile(path, []byte(seed), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := cloudsim.LoadSeed(path)
	if err != nil {
		t.Fatal(err)
	}
	sim := cloudsim.New(cloudsim.Options{Latency: cloudsim.ZeroLatency})
	out, err := sim.AddInstances(in...)
	if err != nil || len(out) != 2 || out[0].Tags["cluster"] != "demo" || out[1].State != "STOPPED" {
		t.Fatalf("%+v %v", out, err)
	}
}

// Suspend closes the port (connections refused, state kept); Resume serves
// the same state on the same address.
func TestSuspendAndResume(t *testing.T) {
	sim := cloudsim.New(cloudsim.Options{Latency: cloudsim.ZeroLatency, DisableDataPlane: true})
	url, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	if _, err := sim.AddInstances(cloudsim.Instance{Name: "kept"}); err != nil {
		t.Fatal(err)
	}
	admin := &cloudsim.AdminClient{BaseURL: url}
	ctx := context.Background()
	if err := sim.Resume(); err == nil {
		t.Error("Resume of a running Sim: no error")
	}
	if err := sim.Suspend(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Healthz(ctx); err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("while suspended: err = %v, want connection refused", err)
	}
	if err := sim.Resume(); err != nil {
		t.Fatal(err)
	}
	ins, err := admin.Instances(ctx)
	if err != nil {
		t.Fatalf("after Resume on %s: %v", url, err)
	}
	if len(ins) != 1 || ins[0].Name != "kept" {
		t.Errorf("instances after Resume = %+v, want the one added before", ins)
	}
}

// Build reports a bad option of any dialect, or of the shared data plane,
// as an error naming it, where New panics.
func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name string
		opts cloudsim.Options
		want string
	}{
		{"vip range", cloudsim.Options{VIPRange: "10.0.0.9-10.0.0.1"}, "cloudsim: Options.VIPRange"},
		{"tencent vpc", cloudsim.Options{Tencent: cloudsim.TencentOptions{VPCs: []tencent.VPCNetwork{{ID: "vpc-bad", CIDR: "10.0.0.0/16"}}}}, "cloudsim: tencent: CloudOptions.VPCs"},
		{"tencent group", cloudsim.Options{Tencent: cloudsim.TencentOptions{SecurityGroups: []tencent.SecurityGroup{{ID: "nope"}}}}, "cloudsim: tencent: CloudOptions.SecurityGroups"},
		{"oci key", cloudsim.Options{OCI: cloudsim.OCIOptions{Keys: map[string]string{"t/u/f": "junk"}}}, "cloudsim: oci: Options.Keys"},
	}
	for _, tt := range tests {
		sim, err := cloudsim.Build(tt.opts)
		if err == nil {
			sim.Close()
			t.Errorf("%s: Build accepts %+v", tt.name, tt.opts)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}
