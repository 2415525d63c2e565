package tcapi

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
)

const (
	okBody       = `{"Response":{"TotalCount":0,"InstanceSet":[],"RequestId":"r-ok"}}`
	throttleBody = `{"Response":{"Error":{"Code":"RequestLimitExceeded","Message":"Your current request times equals to 41 in a second"},"RequestId":"r-t"}}`
	authBody     = `{"Response":{"Error":{"Code":"AuthFailure.SignatureFailure","Message":"bad signature"},"RequestId":"r-a"}}`
	testAuth     = "TC3-HMAC-SHA256 Credential=AKIDtest/2026-01-02/cvm/tc3_request, SignedHeaders=content-type;host, Signature=deadbeefcafe"
)

// runs keeps metric labels apart across -count repetitions.
var runs atomic.Int32

// answer is one scripted reply: a status (0 = 200) and a body.
type answer struct {
	status int
	body   string
}

// server answers from a script, then with okBody, and records what it got.
type server struct {
	mu     sync.Mutex
	script []answer
	got    []received
}

type received struct {
	at     time.Time
	action string
	auth   string
	body   string
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.got = append(s.got, received{at: time.Now(), action: r.Header.Get("X-TC-Action"),
		auth: r.Header.Get("Authorization"), body: string(body)})
	a := answer{body: okBody}
	if len(s.script) > 0 {
		a, s.script = s.script[0], s.script[1:]
	}
	s.mu.Unlock()
	if a.status != 0 {
		w.WriteHeader(a.status)
	}
	_, _ = io.WriteString(w, a.body)
}

func (s *server) received() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.got...)
}

// start serves the script and returns a client using a Transport with fast
// backoff. provider isolates this test's metrics.
func start(t *testing.T, provider string, o Options, script ...answer) (*server, *http.Client, string) {
	t.Helper()
	s := &server{script: script}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	o.Provider = provider
	if o.BackoffBase == 0 {
		o.BackoffBase = 10 * time.Millisecond
	}
	if o.CoolDown == 0 {
		o.CoolDown = 20 * time.Millisecond
	}
	return s, &http.Client{Transport: NewTransport(o)}, srv.URL
}

// post sends a Tencent-like request for action with body.
// post sends one call and returns the answer's status and body (the body
// is read and closed here).
func post(t *testing.T, c *http.Client, url, action, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-TC-Action", action)
	req.Header.Set("Authorization", testAuth)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", action, err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(got)
}

// counter reads ccmkit_cloud_api_requests_total for a code, with the
// result label Result gives it.
func counter(t *testing.T, provider, action, code string) float64 {
	t.Helper()
	return metric(t, "ccmkit_cloud_api_requests_total",
		map[string]string{"provider": provider, "service": "cvm", "action": action, "code": code, "result": string(Result(code))})
}

func metric(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	v, err := ccmmetrics.Sum(name, labels)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name         string
		script       []answer
		wantRequests int
		wantStatus   int
		wantBody     string
		wantCodes    map[string]float64
		wantThrottle float64
		wantRetries  map[string]float64
	}{
		{"throttled twice, then success",
			[]answer{{body: throttleBody}, {body: throttleBody}}, 3, 200, okBody,
			map[string]float64{"RequestLimitExceeded": 2, "OK": 1}, 2, map[string]float64{"throttled": 2}},
		{"HTTP 429 then success",
			[]answer{{status: 429, body: "slow down"}}, 2, 200, okBody,
			map[string]float64{"HTTP429": 1, "OK": 1}, 1, map[string]float64{"throttled": 1}},
		{"HTTP 503 then success",
			[]answer{{status: 503, body: "unavailable"}}, 2, 200, okBody,
			map[string]float64{"HTTP503": 1, "OK": 1}, 0, map[string]float64{"server_error": 1}},
		{"5xx every time: the last answer comes back",
			[]answer{{status: 502, body: "a"}, {status: 502, body: "b"}, {status: 502, body: "c"}, {status: 502, body: "d"}, {status: 502, body: "e"}},
			4, 502, "d", map[string]float64{"HTTP502": 4}, 0, map[string]float64{"server_error": 3}},
		{"auth failure is not retried",
			[]answer{{body: authBody}}, 1, 200, authBody,
			map[string]float64{"AuthFailure.SignatureFailure": 1}, 0, nil},
		{"HTTP 400 is not retried",
			[]answer{{status: 400, body: "bad"}}, 1, 400, "bad", map[string]float64{"HTTP400": 1}, 0, nil},
		{"a body that is not the envelope is not retried",
			[]answer{{body: "<html>"}}, 1, 200, "<html>", map[string]float64{"ParseError": 1}, 0, nil},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			provider := fmt.Sprintf("test-retries-%d-%d", i, runs.Add(1))
			s, c, url := start(t, provider, Options{}, tt.script...)
			const reqBody = `{"InstanceIds":["ins-aaaa0001"],"Limit":100}`
			status, body := post(t, c, url, "DescribeInstances", reqBody)
			if status != tt.wantStatus || body != tt.wantBody {
				t.Errorf("answer %d %q, want %d %q", status, body, tt.wantStatus, tt.wantBody)
			}
			got := s.received()
			if len(got) != tt.wantRequests {
				t.Fatalf("%d requests, want %d", len(got), tt.wantRequests)
			}
			for n, r := range got {
				if r.body != reqBody || r.auth != testAuth || r.action != "DescribeInstances" {
					t.Errorf("request %d: body %q auth %q action %q; want the original, intact", n, r.body, r.auth, r.action)
				}
			}
			for code, want := range tt.wantCodes {
				if v := counter(t, provider, "DescribeInstances", code); v != want {
					t.Errorf("requests_total{code=%s} = %v, want %v", code, v, want)
				}
			}
			labels := map[string]string{"provider": provider, "service": "cvm", "action": "DescribeInstances"}
			if v := metric(t, "ccmkit_cloud_api_throttled_total", labels); v != tt.wantThrottle {
				t.Errorf("throttled_total = %v, want %v", v, tt.wantThrottle)
			}
			for _, reason := range []string{"throttled", "server_error"} {
				v := metric(t, "ccmkit_cloud_api_retries_total",
					map[string]string{"provider": provider, "service": "cvm", "action": "DescribeInstances", "reason": reason})
				if v != tt.wantRetries[reason] {
					t.Errorf("retries_total{reason=%s} = %v, want %v", reason, v, tt.wantRetries[reason])
				}
			}
			n := metric(t, "ccmkit_cloud_api_request_duration_seconds", labels)
			if int(n) != tt.wantRequests {
				t.Errorf("request_duration_seconds count = %v, want %d", n, tt.wantRequests)
			}
		})
	}
}

func TestRetryBudgetBoundsTime(t *testing.T) {
	var script []answer
	for range 10 {
		script = append(script, answer{body: throttleBody})
	}
	s, c, url := start(t, "test-budget", Options{MaxAttempts: 10, RetryBudget: 300 * time.Millisecond,
		BackoffBase: 100 * time.Millisecond, CoolDown: 100 * time.Millisecond}, script...)
	begin := time.Now()
	_, body := post(t, c, url, "DescribeInstances", "{}")
	if elapsed := time.Since(begin); elapsed > time.Second {
		t.Errorf("took %s with a 300ms budget", elapsed)
	}
	if body != throttleBody {
		t.Errorf("answer %q, want the last throttle", body)
	}
	if n := len(s.received()); n < 2 || n >= 10 {
		t.Errorf("%d requests; want a few, bounded by the budget", n)
	}
}

func TestPacingHoldsTheRate(t *testing.T) {
	s, c, url := start(t, "test-pacing", Options{Limits: Limits{"DescribeInstances": 50}})
	const n = 30
	var wg sync.WaitGroup
	begin := time.Now()
	for range n {
		wg.Go(func() { post(t, c, url, "DescribeInstances", "{}") })
	}
	wg.Wait()
	elapsed := time.Since(begin)
	// Burst 5 (a tenth of 50), then 50/s: the last of 30 goes at >= 25/50 s.
	if elapsed < 450*time.Millisecond {
		t.Errorf("%d requests at 50/s took %s, want >= 500ms", n, elapsed)
	}
	// No one-second window holds more than the rate plus the burst.
	got := s.received()
	for i := range got {
		inWindow := 0
		for j := i; j < len(got) && got[j].at.Sub(got[i].at) < time.Second; j++ {
			inWindow++
		}
		if inWindow > 55 {
			t.Fatalf("%d requests within one second", inWindow)
		}
	}
	// Other actions are paced separately (here: not slowed by the first).
	begin = time.Now()
	post(t, c, url, "DescribeLoadBalancers", "{}")
	if d := time.Since(begin); d > 200*time.Millisecond {
		t.Errorf("another action waited %s", d)
	}
}

func TestThrottleCoolsDownTheWholeAction(t *testing.T) {
	s, c, url := start(t, "test-cooldown", Options{CoolDown: 300 * time.Millisecond, BackoffBase: time.Millisecond},
		answer{body: throttleBody})
	post(t, c, url, "DescribeInstances", `{"n":1}`) // throttled, waits out the cool-down, succeeds
	got := s.received()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	if gap := got[1].at.Sub(got[0].at); gap < 250*time.Millisecond {
		t.Errorf("retry after %s, want after the 300ms cool-down", gap)
	}
	// While an action cools down, its other requests wait too.
	st := c.Transport.(*Transport).state("cvm", "DescribeInstances")
	st.throttled(time.Now(), 300*time.Millisecond, time.Second)
	begin := time.Now()
	post(t, c, url, "DescribeInstances", "{}")
	if d := time.Since(begin); d < 250*time.Millisecond {
		t.Errorf("request during a cool-down went after %s", d)
	}
	// Another action goes at once while DescribeInstances cools down: a
	// long cool-down, so that the bound holds on a starved machine too.
	st.throttled(time.Now(), 5*time.Second, 10*time.Second)
	begin = time.Now()
	post(t, c, url, "DescribeTargets", "{}")
	if d := time.Since(begin); d > 2500*time.Millisecond {
		t.Errorf("another action waited %s for DescribeInstances' 5s cool-down", d)
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	_, c, url := start(t, "test-cancel", Options{CoolDown: 5 * time.Second, RetryBudget: 10 * time.Second},
		answer{body: throttleBody})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader("{}"))
	req.Header.Set("X-TC-Action", "DescribeInstances")
	begin := time.Now()
	resp, err := c.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	// The bug would wait out the 5 s cool-down; the bound is half of it,
	// far from what a starved machine adds to 200 ms.
	if d := time.Since(begin); d > 2500*time.Millisecond {
		t.Errorf("returned after %s; want soon after the 200ms deadline", d)
	}
}

func TestRequestWithoutActionPassesThrough(t *testing.T) {
	s, c, url := start(t, "test-passthrough", Options{}, answer{status: 503, body: "x"})
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || len(s.received()) != 1 {
		t.Errorf("status %d after %d requests; want 503 after 1 (no retries)", resp.StatusCode, len(s.received()))
	}
}

// Nothing the transport logs, even at high verbosity, contains the
// Authorization header or any part of the signature.
func TestNeverLogsAuthorization(t *testing.T) {
	var fs flag.FlagSet
	klog.InitFlags(&fs)
	_ = fs.Set("v", "10")
	defer func() { _ = fs.Set("v", "0") }()
	var buf bytes.Buffer
	klog.SetOutput(&buf)
	klog.LogToStderr(false)
	defer klog.LogToStderr(true)

	_, c, url := start(t, "test-logs", Options{}, answer{body: throttleBody}, answer{status: 500, body: "x"})
	post(t, c, url, "DescribeInstances", `{"InstanceIds":["ins-aaaa0001"]}`)
	klog.Flush()
	logs := buf.String()
	if !strings.Contains(logs, "DescribeInstances") {
		t.Fatalf("expected log lines about the call, got %q", logs)
	}
	for _, secret := range []string{"deadbeefcafe", "AKIDtest", "Authorization", "TC3-HMAC"} {
		if strings.Contains(logs, secret) {
			t.Errorf("logs contain %q:\n%s", secret, logs)
		}
	}
}

func TestServiceOf(t *testing.T) {
	tests := []struct {
		host, auth, want string
	}{
		{"cvm.tencentcloudapi.com", "", "cvm"},
		{"clb.ap-guangzhou.tencentcloudapi.com", "", "clb"},
		{"127.0.0.1:8080", "TC3-HMAC-SHA256 Credential=AKID/2026-01-02/tke/tc3_request, SignedHeaders=content-type;host, Signature=ab", "tke"},
		{"127.0.0.1:8080", "TC3-HMAC-SHA256 Credential=AKID/2026-01-02/vpc/tc3_request,SignedHeaders=x", "vpc"},
		{"127.0.0.1:8080", "", "unknown"},
		{"127.0.0.1:8080", "TC3-HMAC-SHA256 Credential=AKID/2026-01-02/CVM;drop/tc3_request", "unknown"},
		{"127.0.0.1:8080", "Basic Zm9vOmJhcg==", "unknown"},
		{"127.0.0.1:8080", "SKIP", "sts"}, // AssumeRoleWithWebIdentity, unsigned
	}
	for _, tt := range tests {
		req := httptest.NewRequest(http.MethodPost, "http://"+tt.host+"/", nil)
		if tt.auth == "SKIP" {
			req.Header.Set("X-TC-Action", "AssumeRoleWithWebIdentity")
		}
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		if got := serviceOf(req); got != tt.want {
			t.Errorf("serviceOf(%s, %q) = %q, want %q", tt.host, tt.auth, got, tt.want)
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		status int
		body   string
		want   outcome
	}{
		{200, okBody, outcome{code: "OK"}},
		{200, throttleBody, outcome{code: "RequestLimitExceeded", throttled: true}},
		{200, `{"Response":{"Error":{"Code":"RequestLimitExceeded.UinLimitExceeded"}}}`,
			outcome{code: "RequestLimitExceeded.UinLimitExceeded", throttled: true}},
		{200, authBody, outcome{code: "AuthFailure.SignatureFailure"}},
		{200, `{"Response":{"InstanceSet":[{"InstanceName":"Error"}],"RequestId":"r"}}`, outcome{code: "OK"}},
		{200, `{"Response":{"Error":`, outcome{code: "ParseError"}},
		{200, "", outcome{code: "ParseError"}},
		{429, "", outcome{code: "HTTP429", throttled: true}},
		{500, "", outcome{code: "HTTP500", serverErr: true}},
		{504, "{}", outcome{code: "HTTP504", serverErr: true}},
		{404, "", outcome{code: "HTTP404"}},
	}
	for _, tt := range tests {
		if got := classify(tt.status, []byte(tt.body)); got != tt.want {
			t.Errorf("classify(%d, %q) = %+v, want %+v", tt.status, tt.body, got, tt.want)
		}
	}
}

func TestConcurrentThrottleIsNotAStorm(t *testing.T) {
	// Every request is throttled for the first 200ms. Twenty workers must
	// not multiply into a burst of retries: the cool-down holds them all.
	var sent atomic.Int32
	begin := time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		if time.Since(begin) < 200*time.Millisecond {
			_, _ = io.WriteString(w, throttleBody)
			return
		}
		_, _ = io.WriteString(w, okBody)
	}))
	defer srv.Close()
	c := &http.Client{Transport: NewTransport(Options{Provider: "test-storm", CoolDown: 250 * time.Millisecond,
		BackoffBase: 50 * time.Millisecond, Limits: Limits{"DescribeInstances": 0}})}
	var wg sync.WaitGroup
	var gaveUp atomic.Int32
	for range 20 {
		wg.Go(func() {
			if _, body := post(t, c, srv.URL, "DescribeInstances", "{}"); body != okBody {
				gaveUp.Add(1)
			}
		})
	}
	wg.Wait()
	// 20 first tries plus one retry each at most: the cool-down keeps them
	// from retrying into the throttled window again.
	if n := sent.Load(); n > 40 {
		t.Errorf("%d requests for 20 calls; retries stormed", n)
	}
	// One wave of throttles is one step of the cool-down, not twenty: had
	// each answer escalated it, the cool-down would reach the retry budget
	// (250ms << 19 > 5s) and the calls would give up. This is judged by the
	// calls' answers, not by the wall time, which a loaded machine (the unit
	// tests run at nice 19 beside the e2e suite) stretches.
	if n := gaveUp.Load(); n > 0 {
		t.Errorf("%d of 20 calls throttled together gave up after %s; the cool-down escalated per answer", n, time.Since(begin))
	}
}
