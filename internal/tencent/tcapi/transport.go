// Package tcapi is the HTTP transport under every Tencent Cloud SDK client
// of the CCM. The SDK signs and encodes; this transport decides when a
// request may go and what happens when the answer says "too fast":
//
//   - pacing: a client-side token bucket per action, at the documented limit
//     (cvm DescribeInstances 40/s, tke Describe* 50/s, tke Create/Delete
//     20/s, clb 20/s), overridable, so that the CCM stays under the limit
//     instead of discovering it;
//   - backoff: RequestLimitExceeded, HTTP 429 and HTTP 5xx are retried a
//     bounded number of times with exponential backoff and full jitter. A
//     throttle also starts a cool-down shared by every request for that
//     action, so that many workers throttled together do not retry together;
//   - metrics: requests by result code, latency, throttles, retries and
//     client-side waits, in the metrics every cloud shares
//     (internal/ccmmetrics), classified by Result.
//
// A retry re-sends the same signed body: a TC3 signature stays valid for 5
// minutes and the API does not reject replays. The Authorization header is
// never logged or recorded; only its credential scope's service name is read.
package tcapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
	"github.com/ccmkit/ccm/internal/ctxwait"
)

// Defaults for Options.
const (
	DefaultProvider    = "tencentcloud"
	DefaultMaxAttempts = 4
	DefaultRetryBudget = 5 * time.Second
	DefaultBackoffBase = 200 * time.Millisecond
	DefaultCoolDown    = time.Second
)

// Options configures a Transport. Zero values take the defaults.
type Options struct {
	// Provider labels the metrics, e.g. "tencentcloud".
	Provider string
	// Base sends the requests. Default: a clone of http.DefaultTransport
	// that keeps enough idle connections for concurrent API calls.
	Base http.RoundTripper
	// Limits overrides the documented per-action limits.
	Limits Limits
	// MaxAttempts bounds how often one request is sent (first try included).
	MaxAttempts int
	// RetryBudget bounds the time from the first send to the last retry.
	RetryBudget time.Duration
	// BackoffBase is the first retry's maximum delay; it doubles each retry
	// (full jitter: the delay is uniform in [0, base*2^n)).
	BackoffBase time.Duration
	// CoolDown is how long every request for an action waits after that
	// action was throttled. It doubles on consecutive throttles, up to
	// RetryBudget, and resets after a success.
	CoolDown time.Duration
}

// Transport is an http.RoundTripper for the Tencent Cloud API. It is safe
// for concurrent use; share one per process (per account) so that pacing
// and cool-downs see every call.
type Transport struct {
	base        http.RoundTripper
	metrics     *ccmmetrics.CloudAPI
	limits      Limits
	maxAttempts int
	budget      time.Duration
	backoffBase time.Duration
	coolDown    time.Duration

	mu      sync.Mutex
	actions map[string]*actionState // by service + "." + action
}

// actionState is the pacing state of one action.
type actionState struct {
	limiter *rate.Limiter // nil: not paced

	mu        sync.Mutex
	coolFrom  time.Time // when the current cool-down began
	coolUntil time.Time
	streak    int // throttles in a row, counting each wave once
}

// NewTransport returns a Transport and registers its metrics.
func NewTransport(o Options) *Transport {
	t := &Transport{
		base:        o.Base,
		limits:      o.Limits,
		maxAttempts: o.MaxAttempts,
		budget:      o.RetryBudget,
		backoffBase: o.BackoffBase,
		coolDown:    o.CoolDown,
		actions:     map[string]*actionState{},
	}
	if t.base == nil {
		t.base = defaultBase()
	}
	provider := o.Provider
	if provider == "" {
		provider = DefaultProvider
	}
	t.metrics = ccmmetrics.NewCloudAPI(provider, Result)
	if t.maxAttempts <= 0 {
		t.maxAttempts = DefaultMaxAttempts
	}
	if t.budget <= 0 {
		t.budget = DefaultRetryBudget
	}
	if t.backoffBase <= 0 {
		t.backoffBase = DefaultBackoffBase
	}
	if t.coolDown <= 0 {
		t.coolDown = DefaultCoolDown
	}
	return t
}

// defaultBase keeps more idle connections per host than Go's default of
// two: with dozens of concurrent calls to one endpoint, two would mean a
// new TCP (and TLS) connection for nearly every call.
func defaultBase() http.RoundTripper {
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = 64
	base.IdleConnTimeout = 60 * time.Second
	return base
}

// state returns the pacing state of an action, creating it on first use.
// The bucket's burst is a tenth of the rate (at least 1): the cloud's own
// bucket then always keeps headroom for jitter in arrival times.
func (t *Transport) state(service, action string) *actionState {
	key := service + "." + action
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.actions[key]
	if st == nil {
		st = &actionState{}
		if qps := t.limits.qps(service, action); qps > 0 {
			st.limiter = rate.NewLimiter(rate.Limit(qps), max(1, int(math.Ceil(qps/10))))
		}
		t.actions[key] = st
	}
	return st
}

// RoundTrip sends a Tencent API request, paced and retried as described in
// the package documentation. A request without X-TC-Action is passed
// through untouched. After the last attempt the last answer is returned
// as is, so that the SDK reports the cloud's own error.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	action := req.Header.Get("X-TC-Action")
	if action == "" {
		return t.base.RoundTrip(req)
	}
	service := serviceOf(req)
	body, err := readBody(req)
	if err != nil {
		return nil, fmt.Errorf("tcapi: %s.%s: read request body: %w", service, action, err)
	}
	ctx := req.Context()
	st := t.state(service, action)
	var first time.Time
	for attempt := 1; ; attempt++ {
		if err := t.wait(ctx, st, service, action); err != nil {
			return nil, fmt.Errorf("tcapi: %s.%s: waiting for the client-side rate limit: %w", service, action, err)
		}
		sent := time.Now()
		if attempt == 1 {
			first = sent
		}
		resp, err := t.base.RoundTrip(withBody(req, body))
		var out outcome
		if err == nil {
			resp, out, err = readAnswer(resp)
		}
		if err != nil {
			out = outcome{code: codeNetworkError}
		}
		t.metrics.Attempt(service, action, out.code, time.Since(sent))
		klog.V(4).InfoS("Cloud API call", "api", service, "action", action, "code", out.code,
			"attempt", attempt, "duration", time.Since(sent))
		if err != nil {
			return nil, err
		}
		if !out.throttled && !out.serverErr {
			st.succeeded()
			return resp, nil
		}
		coolDown := time.Duration(0)
		if out.throttled {
			coolDown = st.throttled(sent, t.coolDown, t.budget)
		}
		delay := t.backoff(attempt)
		if attempt >= t.maxAttempts || time.Since(first)+max(delay, coolDown) > t.budget {
			klog.V(2).InfoS("Cloud API call failed; not retrying", "api", service, "action", action,
				"code", out.code, "attempts", attempt)
			return resp, nil
		}
		reason := "server_error"
		if out.throttled {
			reason = "throttled"
		}
		klog.V(2).InfoS("Cloud API call will be retried", "api", service, "action", action,
			"code", out.code, "attempt", attempt, "delay", delay, "coolDown", coolDown)
		if err := ctxwait.Sleep(ctx, delay); err != nil {
			return resp, nil // the caller gave up; it gets the last answer
		}
		t.metrics.Retry(service, action, reason)
	}
}

// wait blocks until the action's cool-down is over and its bucket has a token.
func (t *Transport) wait(ctx context.Context, st *actionState, service, action string) error {
	start := time.Now()
	defer func() { t.metrics.ClientWait(service, action, time.Since(start)) }()
	for {
		st.mu.Lock()
		until := st.coolUntil
		st.mu.Unlock()
		d := time.Until(until)
		if d <= 0 {
			break
		}
		if err := ctxwait.Sleep(ctx, d); err != nil {
			return err
		}
	}
	if st.limiter == nil {
		return nil
	}
	return st.limiter.Wait(ctx)
}

// throttled starts (or extends) the action's cool-down after a request
// sent at sent was throttled, and returns its length: base, doubled for
// each throttle in a row, at most limit. Requests sent before the current
// cool-down began belong to the wave that started it: they do not double
// it again, or twenty workers throttled at once would wait the maximum.
func (st *actionState) throttled(sent time.Time, base, limit time.Duration) time.Duration {
	st.mu.Lock()
	defer st.mu.Unlock()
	now := time.Now()
	if st.streak == 0 || !sent.Before(st.coolFrom) {
		st.streak++
		st.coolFrom = now
	}
	d := base << min(st.streak-1, 16)
	if d > limit || d <= 0 {
		d = limit
	}
	if until := now.Add(d); until.After(st.coolUntil) {
		st.coolUntil = until
	}
	return d
}

func (st *actionState) succeeded() {
	st.mu.Lock()
	st.streak = 0
	st.mu.Unlock()
}

// backoff is the delay before retry number attempt: full jitter over an
// exponentially growing window, so that concurrent retries spread out.
func (t *Transport) backoff(attempt int) time.Duration {
	window := t.backoffBase << min(attempt-1, 16)
	if window > t.budget || window <= 0 {
		window = t.budget
	}
	return time.Duration(rand.Int64N(int64(window) + 1))
}

// readBody takes the request body whole, so that every attempt can send it.
func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer func() { _ = req.Body.Close() }()
	return io.ReadAll(req.Body)
}

// withBody returns a copy of req carrying body; the original is never
// modified, as the RoundTripper contract asks.
func withBody(req *http.Request, body []byte) *http.Request {
	r := req.Clone(req.Context())
	r.ContentLength = int64(len(body))
	if body == nil {
		r.Body, r.GetBody = nil, nil
		return r
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return r
}

// readAnswer buffers the answer's body (the SDK reads it whole anyway) to
// find its result code, and hands back a response whose body reads the same.
func readAnswer(resp *http.Response) (*http.Response, outcome, error) {
	data, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, outcome{}, fmt.Errorf("read answer: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	resp.ContentLength = int64(len(data))
	return resp, classify(resp.StatusCode, data), nil
}
