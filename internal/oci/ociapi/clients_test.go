package ociapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	"github.com/oracle/oci-go-sdk/v65/networkloadbalancer"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
	"github.com/ccmkit/ccm/internal/oci/config/configtest"
)

// recorder is an httptest OCI endpoint that answers every request with a
// fixed status and records what arrived.
type recorder struct {
	mu     sync.Mutex
	reqs   []*http.Request
	status int
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req.Clone(context.Background()))
	status := r.status
	r.mu.Unlock()
	w.Header().Set("opc-request-id", "rec-1")
	w.Header().Set("Content-Type", "application/json")
	if status >= 300 {
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"code":"InternalServerError","message":"injected"}`))
		return
	}
	switch {
	case strings.Contains(req.URL.Path, "/instances/"):
		_, _ = w.Write([]byte(`{"id":"` + instanceID + `","lifecycleState":"RUNNING"}`))
	default:
		_, _ = w.Write([]byte(`{}`))
	}
}

func (r *recorder) count() int { r.mu.Lock(); defer r.mu.Unlock(); return len(r.reqs) }

// instanceID is an instance OCID for the recorder's answers.
const instanceID = "ocid1.instance.oc1.iad.aaaainstance0001"

func testClients(t *testing.T, endpoint string, limits Limits) *Clients {
	t.Helper()
	c, err := New(Options{
		Tenancy: configtest.Tenancy, User: configtest.User, Region: configtest.Region,
		Fingerprint: configtest.Fingerprint(), Key: configtest.PEM(), Endpoint: endpoint, Limits: limits,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Every client goes to the endpoint, signs with the API key, and keeps the
// SDK's path (API version + resource).
func TestClientsEndpointAndSigning(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c := testClients(t, srv.URL, Limits{Disabled: true})
	ctx := context.Background()
	if _, err := c.Compute.GetInstance(ctx, core.GetInstanceRequest{InstanceId: common.String(instanceID)}); err != nil {
		t.Fatal(err)
	}
	_, _ = c.LB.GetLoadBalancer(ctx, loadbalancer.GetLoadBalancerRequest{LoadBalancerId: common.String("ocid1.loadbalancer.oc1.iad.x")})
	if rec.count() != 2 {
		t.Fatalf("requests = %d, want 2", rec.count())
	}
	get := rec.reqs[0]
	if get.URL.Path != "/20160918/instances/"+instanceID {
		t.Errorf("path = %q", get.URL.Path)
	}
	if p := rec.reqs[1].URL.Path; p != "/20170115/loadBalancers/ocid1.loadbalancer.oc1.iad.x" {
		t.Errorf("LB path = %q", p)
	}
	auth := get.Header.Get("Authorization")
	wantKeyID := `keyId="` + configtest.Tenancy + "/" + configtest.User + "/" + configtest.Fingerprint() + `"`
	if !strings.HasPrefix(auth, `Signature version="1"`) || !strings.Contains(auth, wantKeyID) ||
		!strings.Contains(auth, `algorithm="rsa-sha256"`) || !strings.Contains(auth, `headers="date (request-target) host"`) {
		t.Errorf("Authorization = %q", auth)
	}
}

// No SDK retries, and no circuit breaker: fifteen 500s are fifteen calls,
// each failing with OCI's own error, not a breaker's.
func TestClientsNoRetriesNoBreaker(t *testing.T) {
	rec := &recorder{status: http.StatusInternalServerError}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c := testClients(t, srv.URL, Limits{Disabled: true})
	for i := range 15 {
		_, err := c.Network.GetVnic(context.Background(), core.GetVnicRequest{VnicId: common.String("ocid1.vnic.oc1.iad.x")})
		se, ok := common.IsServiceError(err)
		if !ok || se.GetHTTPStatusCode() != 500 {
			t.Fatalf("call %d: err = %v, want the service's 500", i, err)
		}
	}
	if rec.count() != 15 {
		t.Errorf("requests = %d, want 15 (no retries, no open breaker)", rec.count())
	}
	for _, bc := range []*common.BaseClient{&c.Compute.BaseClient, &c.Network.BaseClient, &c.LB.BaseClient, &c.NLB.BaseClient} {
		if bc.Configuration.CircuitBreaker != nil {
			t.Error("a client has a circuit breaker")
		}
	}
}

// Reads and writes draw from separate buckets: a burst of reads waits for
// its bucket, while a write goes at once.
func TestClientsRateLimiters(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c := testClients(t, srv.URL, Limits{ReadQPS: 10, ReadBurst: 1, WriteQPS: 10, WriteBurst: 1})
	ctx := context.Background()
	start := time.Now()
	for range 4 {
		if _, err := c.Compute.GetInstance(ctx, core.GetInstanceRequest{InstanceId: common.String(instanceID)}); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("4 reads at 10/s, burst 1, took %s; want >= 300ms", d)
	}
	before := waitedSeconds(t, "loadbalancer", "DELETE /loadBalancers/{}")
	_, _ = c.LB.DeleteLoadBalancer(ctx, loadbalancer.DeleteLoadBalancerRequest{LoadBalancerId: common.String("ocid1.loadbalancer.oc1.iad.x")})
	if w := waitedSeconds(t, "loadbalancer", "DELETE /loadBalancers/{}") - before; w > 0.02 {
		t.Errorf("a write waited %.3fs for the limiter behind reads", w)
	}
}

// waitedSeconds is the total time requests of one action waited for a
// client-side limiter so far (client_wait_seconds' sum): unlike wall time,
// a loaded machine does not stretch it.
func waitedSeconds(t *testing.T, service, action string) float64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	for _, f := range families {
		if f.GetName() != "ccmkit_cloud_api_client_wait_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["provider"] == Provider && labels["service"] == service && labels["action"] == action {
				total += m.GetHistogram().GetSampleSum()
			}
		}
	}
	return total
}

func TestOperationOf(t *testing.T) {
	tests := []struct{ method, path, want string }{
		{"GET", "/20160918/instances/ocid1.instance.oc1.x", "GET /instances/{}"},
		{"GET", "/20160918/instances", "GET /instances"},
		{"PUT", "/20170115/loadBalancers/ocid1.lb/backendSets/TCP-80", "PUT /loadBalancers/{}/backendSets/{}"},
		{"POST", "/20200501/networkLoadBalancers/ocid1.nlb/listeners", "POST /networkLoadBalancers/{}/listeners"},
		{"GET", "/20170115/loadBalancerWorkRequests/ocid1.wr", "GET /loadBalancerWorkRequests/{}"},
	}
	for _, tt := range tests {
		req := &http.Request{Method: tt.method, URL: &url.URL{Path: tt.path}}
		if got := operationOf(req); got != tt.want {
			t.Errorf("operationOf(%s %s) = %q, want %q", tt.method, tt.path, got, tt.want)
		}
	}
}

type countingTransport struct {
	next http.RoundTripper
	n    int
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n++
	return c.next.RoundTrip(r)
}

// Options.Wrap wraps the one transport every client shares, once.
func TestClientsWrapSeesEveryClient(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	var wraps []*countingTransport
	c, err := New(Options{
		Tenancy: configtest.Tenancy, User: configtest.User, Region: configtest.Region,
		Fingerprint: configtest.Fingerprint(), Key: configtest.PEM(), Endpoint: srv.URL, Limits: Limits{Disabled: true},
		Wrap: func(next http.RoundTripper) http.RoundTripper {
			w := &countingTransport{next: next}
			wraps = append(wraps, w)
			return w
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, _ = c.Compute.GetInstance(ctx, core.GetInstanceRequest{InstanceId: common.String(instanceID)})
	_, _ = c.Network.GetVnic(ctx, core.GetVnicRequest{VnicId: common.String("ocid1.vnic.oc1.iad.x")})
	_, _ = c.LB.GetLoadBalancer(ctx, loadbalancer.GetLoadBalancerRequest{LoadBalancerId: common.String("ocid1.loadbalancer.oc1.iad.x")})
	_, _ = c.NLB.GetNetworkLoadBalancer(ctx, networkloadbalancer.GetNetworkLoadBalancerRequest{NetworkLoadBalancerId: common.String("ocid1.nlb.oc1.iad.x")})
	if len(wraps) != 1 || wraps[0].n != 4 || rec.count() != 4 {
		t.Fatalf("wraps = %d, calls through the wrap = %v, requests = %d; want 1 wrap seeing all 4", len(wraps), wraps, rec.count())
	}
}

// Every answer is one request in the shared cloud API metrics, with
// provider oci, the operation as the action, OCI's code and its result;
// a 429 is also a throttle.
func TestClientsRecordMetrics(t *testing.T) {
	tests := []struct {
		status       int
		code         string // in the answer's body; "" for a success
		wantCode     string
		wantResult   string
		wantThrottle float64
	}{
		{200, "", "OK", "ok", 0},
		{429, "TooManyRequests", "TooManyRequests", "throttled", 1},
		{401, "NotAuthenticated", "NotAuthenticated", "auth", 0},
		{404, "NotAuthorizedOrNotFound", "NotAuthorizedOrNotFound", "not_found", 0},
		{409, "IncorrectState", "IncorrectState", "error", 0},
		{502, "", "HTTP502", "error", 0},
	}
	for _, tt := range tests {
		t.Run(tt.wantCode, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				if tt.code != "" {
					_, _ = w.Write([]byte(`{"code":"` + tt.code + `","message":"injected"}`))
				}
			}))
			defer srv.Close()
			c := testClients(t, srv.URL, Limits{Disabled: true})
			action := map[string]string{"provider": Provider, "service": "loadbalancer", "action": "GET /loadBalancers/{}"}
			request := map[string]string{"code": tt.wantCode, "result": tt.wantResult}
			for k, v := range action {
				request[k] = v
			}
			before := [3]float64{sum(t, "ccmkit_cloud_api_requests_total", request),
				sum(t, "ccmkit_cloud_api_throttled_total", action), sum(t, "ccmkit_cloud_api_request_duration_seconds", action)}
			_, _ = c.LB.GetLoadBalancer(context.Background(), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: common.String("ocid1.loadbalancer.oc1.iad.x")})
			if d := sum(t, "ccmkit_cloud_api_requests_total", request) - before[0]; d != 1 {
				t.Errorf("requests_total{code=%s,result=%s} grew by %v, want 1", tt.wantCode, tt.wantResult, d)
			}
			if d := sum(t, "ccmkit_cloud_api_throttled_total", action) - before[1]; d != tt.wantThrottle {
				t.Errorf("throttled_total grew by %v, want %v", d, tt.wantThrottle)
			}
			if d := sum(t, "ccmkit_cloud_api_request_duration_seconds", action) - before[2]; d != 1 {
				t.Errorf("request_duration_seconds count grew by %v, want 1", d)
			}
		})
	}
}

// A request that gave up waiting for the rate limiter was never sent: it
// is a client-side wait, not a request.
func TestClientsLimiterWaitIsNotARequest(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c := testClients(t, srv.URL, Limits{ReadQPS: 0.001, ReadBurst: 1, WriteQPS: 10, WriteBurst: 1})
	action := map[string]string{"provider": Provider, "service": "compute", "action": "GET /instances/{}"}
	get := func(ctx context.Context) error {
		_, err := c.Compute.GetInstance(ctx, core.GetInstanceRequest{InstanceId: common.String(instanceID)})
		return err
	}
	if err := get(context.Background()); err != nil { // the burst's token
		t.Fatal(err)
	}
	requests, waits := sum(t, "ccmkit_cloud_api_requests_total", action), sum(t, "ccmkit_cloud_api_client_wait_seconds", action)
	// The next token is 1,000 s away: the limiter refuses at once, as the
	// wait would outlast the deadline. A deadline of 10 s, not 50 ms, which
	// a starved test once passed before it reached the limiter.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := get(ctx); err == nil || !strings.Contains(err.Error(), "rate limiter") {
		t.Fatalf("err = %v, want the rate limiter's", err)
	}
	if d := sum(t, "ccmkit_cloud_api_requests_total", action) - requests; d != 0 || rec.count() != 1 {
		t.Errorf("requests_total grew by %v and %d requests arrived; want 0 and 1", d, rec.count())
	}
	if d := sum(t, "ccmkit_cloud_api_client_wait_seconds", action) - waits; d != 1 {
		t.Errorf("client_wait_seconds count grew by %v, want 1", d)
	}
}

func sum(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	v, err := ccmmetrics.Sum(name, labels)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
