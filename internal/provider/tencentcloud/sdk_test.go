package tencentcloud

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccm/internal/tencent/config"
	"github.com/ccmkit/ccm/internal/tencent/tcapi"
)

// These tests drive the real SDK client against an httptest server that
// speaks the Tencent JSON envelope. Signatures are not verified here.

const instanceJSON = `{"InstanceId":"ins-aaaa0001","InstanceName":"worker-1","InstanceType":"S5.MEDIUM4",
"InstanceState":"RUNNING","Placement":{"Zone":"ap-guangzhou-3","ProjectId":0},
"PrivateIpAddresses":["10.0.0.1"],"PublicIpAddresses":["203.0.113.1"],
"VirtualPrivateCloud":{"VpcId":"vpc-aaaa1111","SubnetId":"subnet-aaaa1111","AsVpcGateway":false}}`

// tencentServer records requests and answers each with body (HTTP 200
// unless status is set).
type tencentServer struct {
	t      *testing.T
	mu     sync.Mutex
	status int
	body   string
	reqs   []recorded
}

type recorded struct {
	header http.Header
	params cvm.DescribeInstancesRequestParams
}

func (s *tencentServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var params cvm.DescribeInstancesRequestParams
	if err := json.Unmarshal(raw, &params); err != nil {
		s.t.Errorf("request body %q: %v", raw, err)
	}
	if r.Method != http.MethodPost || r.URL.Path != "/" {
		s.t.Errorf("request %s %s, want POST /", r.Method, r.URL.Path)
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, recorded{header: r.Header.Clone(), params: params})
	status, body := s.status, s.body
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if status != 0 {
		w.WriteHeader(status)
	}
	_, _ = io.WriteString(w, body)
}

func clearTencentEnv(t *testing.T) {
	for _, k := range []string{config.EnvRegion, config.EnvVpcID, config.EnvSecretID, config.EnvSecretKey, config.EnvSecretIDFile, config.EnvSecretKeyFile,
		config.EnvClusterRouteTable, config.EnvAPIEndpoint, config.EnvSDKSecretID, config.EnvSDKSecretKey, config.EnvSDKSecretIDFile, config.EnvSDKSecretKeyFile} {
		t.Setenv(k, "")
	}
}

// startHTTP serves over plain HTTP and builds the provider through the
// registered factory, exactly as the binary does from --cloud-config.
func startHTTP(t *testing.T) (*tencentServer, cloudprovider.InstancesV2) {
	t.Helper()
	clearTencentEnv(t)
	ts := &tencentServer{t: t}
	srv := httptest.NewServer(ts)
	t.Cleanup(srv.Close)
	// The transport retries throttles and 5xx; keep its waits short here.
	retryPolicy = tcapi.Options{BackoffBase: time.Millisecond, CoolDown: time.Millisecond}
	t.Cleanup(func() { retryPolicy = tcapi.Options{} })
	config := "region: ap-guangzhou\nvpc_id: vpc-aaaa1111\nsecret_id: " + testSecretID +
		"\nsecret_key: " + testSecretKey + "\napi_endpoint: " + srv.URL + "\n"
	cloud, err := cloudprovider.GetCloudProvider(ProviderName, strings.NewReader(config))
	if err != nil || cloud == nil {
		t.Fatalf("GetCloudProvider: %v, %v", cloud, err)
	}
	iv2, ok := cloud.InstancesV2()
	if !ok {
		t.Fatal("InstancesV2 not supported")
	}
	return ts, iv2
}

func TestSDKInstanceMetadataOverHTTP(t *testing.T) {
	ts, iv2 := startHTTP(t)
	ts.body = `{"Response":{"TotalCount":1,"InstanceSet":[` + instanceJSON + `],"RequestId":"r-1"}}`

	md, err := iv2.InstanceMetadata(context.Background(), testNode("worker-1", "tencentcloud:///ap-guangzhou-3/ins-aaaa0001"))
	if err != nil {
		t.Fatal(err)
	}
	if md.ProviderID != "tencentcloud:///ap-guangzhou-3/ins-aaaa0001" || md.InstanceType != "S5.MEDIUM4" ||
		md.Zone != "ap-guangzhou-3" || md.Region != "ap-guangzhou" || len(md.NodeAddresses) != 3 {
		t.Errorf("metadata %+v", md)
	}

	req := ts.reqs[0]
	if got := req.header.Get("X-TC-Action"); got != "DescribeInstances" {
		t.Errorf("X-TC-Action %q", got)
	}
	if got := req.header.Get("X-TC-Version"); got != "2017-03-12" {
		t.Errorf("X-TC-Version %q", got)
	}
	if got := req.header.Get("X-TC-Region"); got != "ap-guangzhou" {
		t.Errorf("X-TC-Region %q", got)
	}
	auth := req.header.Get("Authorization")
	if !strings.HasPrefix(auth, "TC3-HMAC-SHA256 Credential="+testSecretID+"/") || strings.Contains(auth, testSecretKey) {
		t.Errorf("Authorization %q", auth)
	}
	if ids := req.params.InstanceIds; len(ids) != 1 || *ids[0] != "ins-aaaa0001" || *req.params.Limit != 100 {
		t.Errorf("request params %+v", req.params)
	}
}

func TestSDKFilterLookupOverHTTP(t *testing.T) {
	ts, iv2 := startHTTP(t)
	ts.body = `{"Response":{"TotalCount":1,"InstanceSet":[` + instanceJSON + `],"RequestId":"r-1"}}`
	md, err := iv2.InstanceMetadata(context.Background(), testNode("10.0.0.1", ""))
	if err != nil {
		t.Fatal(err)
	}
	if md.ProviderID != "tencentcloud:///ap-guangzhou-3/ins-aaaa0001" {
		t.Errorf("providerID %q", md.ProviderID)
	}
	f := ts.reqs[0].params.Filters
	if len(f) != 2 || *f[0].Name != "vpc-id" || *f[0].Values[0] != "vpc-aaaa1111" ||
		*f[1].Name != "private-ip-address" || *f[1].Values[0] != "10.0.0.1" {
		t.Errorf("filters %s", mustJSON(f))
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestSDKInstanceExistsOverHTTP(t *testing.T) {
	node := testNode("worker-1", "tencentcloud:///ap-guangzhou-3/ins-aaaa0001")
	tests := []struct {
		name       string
		status     int
		body       string
		wantExists bool
		wantErr    string
	}{
		{name: "running", body: `{"Response":{"TotalCount":1,"InstanceSet":[` + instanceJSON + `],"RequestId":"r"}}`,
			wantExists: true},
		{name: "gone", body: `{"Response":{"TotalCount":0,"InstanceSet":[],"RequestId":"r"}}`},
		{name: "throttled",
			body:       `{"Response":{"Error":{"Code":"RequestLimitExceeded","Message":"Your current request times equals to 41 in a second"},"RequestId":"x"}}`,
			wantExists: true, wantErr: "[RequestLimitExceeded] Your current request times"},
		{name: "auth failure",
			body:       `{"Response":{"Error":{"Code":"AuthFailure.SignatureFailure","Message":"The provided credentials could not be validated."},"RequestId":"x"}}`,
			wantExists: true, wantErr: "AuthFailure.SignatureFailure"},
		{name: "http 502", status: 502, body: "{}", wantExists: true, wantErr: "HttpStatusCodeError"},
		{name: "http 500 not JSON", status: 500, body: "oops", wantExists: true, wantErr: "ParseJsonError"},
		{name: "not JSON", body: "<html>", wantExists: true, wantErr: "ParseJsonError"},
		{name: "empty object", body: `{}`, wantExists: true, wantErr: "malformed"},
		{name: "no TotalCount", body: `{"Response":{"RequestId":"r"}}`, wantExists: true, wantErr: "TotalCount"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, iv2 := startHTTP(t)
			ts.status, ts.body = tt.status, tt.body
			exists, err := iv2.InstanceExists(context.Background(), node)
			if exists != tt.wantExists {
				t.Errorf("exists = %v, want %v (err %v)", exists, tt.wantExists, err)
			}
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
			if err != nil && (strings.Contains(err.Error(), testSecretKey) || strings.Contains(err.Error(), testSecretID)) {
				t.Errorf("credential in error: %v", err)
			}
			// No SDK retries; the transport (internal/tencent/tcapi) retries only
			// throttles and 5xx, a bounded number of times.
			want := 1
			if tt.name == "throttled" || tt.status >= 500 {
				want = tcapi.DefaultMaxAttempts
			}
			if len(ts.reqs) != want {
				t.Errorf("%d requests, want %d", len(ts.reqs), want)
			}
		})
	}
}

func TestSDKOverHTTPS(t *testing.T) {
	ts := &tencentServer{t: t, body: `{"Response":{"TotalCount":0,"InstanceSet":[],"RequestId":"r"}}`}
	srv := httptest.NewTLSServer(ts)
	defer srv.Close()
	cfg := &config.Config{Region: "ap-guangzhou", VpcID: "vpc-aaaa1111", SecretID: testSecretID, SecretKey: testSecretKey,
		APIEndpoint: srv.URL}
	opts, err := clientOptions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts.Transport = srv.Client().Transport // trust the test certificate
	client, err := tcapi.NewClients(opts).CVM()
	if err != nil {
		t.Fatal(err)
	}
	iv2, _ := newCloud(cfg, client).InstancesV2()
	exists, err := iv2.InstanceExists(context.Background(), testNode("ins-aaaa0001", ""))
	if exists || err != nil {
		t.Errorf("InstanceExists = %v, %v; want false, nil", exists, err)
	}
	if len(ts.reqs) != 1 {
		t.Errorf("%d requests over HTTPS, want 1", len(ts.reqs))
	}
}
