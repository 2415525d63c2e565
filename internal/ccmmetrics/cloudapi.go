package ccmmetrics

import (
	"strconv"
	"time"
)

// Result is what one cloud API answer came to, for alerts that must not
// know any cloud's error codes. Each cloud's error package maps its codes
// to a Result (tcapi.Result, ocierr.Result); it is a function of the code,
// so the label adds no series.
type Result string

// The closed set of results.
const (
	ResultOK        Result = "ok"
	ResultThrottled Result = "throttled" // the cloud's rate limit: wait and retry
	ResultAuth      Result = "auth"      // credentials, signature, clock or permission refused
	ResultNotFound  Result = "not_found" // the object named does not exist (or may not be seen)
	ResultError     Result = "error"     // anything else, including no answer at all
)

// Results lists every Result, in the order the docs give them.
var Results = []Result{ResultOK, ResultThrottled, ResultAuth, ResultNotFound, ResultError}

// Codes every cloud records for answers that carry no cloud error code.
const (
	CodeOK           = "OK"
	CodeNetworkError = "NetworkError" // no answer: connection, TLS or timeout
)

// HTTPCode is the code of an error answer without a cloud error code.
func HTTPCode(status int) string { return "HTTP" + strconv.Itoa(status) }

// The cloud API metrics, one shape for every cloud. Labels never carry a
// credential or an object id: provider and service are our constants,
// action the cloud's action name or a path template, code the cloud's
// error code (bounded by the APIs' documented codes).
var (
	cloudAPI = NewSet("cloud_api")

	apiRequests = cloudAPI.CounterVec("requests_total",
		"Cloud API requests sent, by result code (OK, the cloud's error code, HTTP<status>, NetworkError) and result (ok, throttled, auth, not_found, error). Each attempt counts.",
		"provider", "service", "action", "code", "result")
	apiDuration = cloudAPI.HistogramVec("request_duration_seconds",
		"Latency of one cloud API request (one attempt), excluding client-side waits.",
		[]float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		"provider", "service", "action")
	apiThrottled = cloudAPI.CounterVec("throttled_total",
		"Cloud API answers that said the rate limit was exceeded (requests_total with result throttled).",
		"provider", "service", "action")
	apiRetries = cloudAPI.CounterVec("retries_total",
		"Cloud API requests sent again after a throttle or a server error, by reason (throttled, server_error).",
		"provider", "service", "action", "reason")
	apiClientWait = cloudAPI.HistogramVec("client_wait_seconds",
		"Time a request waited before being sent: client-side rate limit, and the cool-down after a throttle.",
		[]float64{0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
		"provider", "service", "action")
)

// CloudAPI records one cloud's API calls in the shared metrics.
type CloudAPI struct {
	provider string
	classify func(code string) Result
}

// NewCloudAPI returns the recorder of a provider (its registered name,
// e.g. "oci"), whose codes classify maps to results, and registers the
// metrics.
func NewCloudAPI(provider string, classify func(code string) Result) *CloudAPI {
	cloudAPI.Register()
	return &CloudAPI{provider: provider, classify: classify}
}

// Attempt records one request sent and the code it was answered with,
// taking d; it returns the code's Result.
func (c *CloudAPI) Attempt(service, action, code string, d time.Duration) Result {
	r := c.classify(code)
	if !r.known() {
		r = ResultError // the set stays closed whatever a classifier returns
	}
	apiRequests.WithLabelValues(c.provider, service, action, code, string(r)).Inc()
	apiDuration.WithLabelValues(c.provider, service, action).Observe(d.Seconds())
	if r == ResultThrottled {
		apiThrottled.WithLabelValues(c.provider, service, action).Inc()
	}
	return r
}

// Retry records a request about to be sent again; reason is throttled or
// server_error.
func (c *CloudAPI) Retry(service, action, reason string) {
	apiRetries.WithLabelValues(c.provider, service, action, reason).Inc()
}

// ClientWait records how long a request waited on the client side before
// it was sent (or given up).
func (c *CloudAPI) ClientWait(service, action string, d time.Duration) {
	apiClientWait.WithLabelValues(c.provider, service, action).Observe(d.Seconds())
}

func (r Result) known() bool {
	for _, k := range Results {
		if r == k {
			return true
		}
	}
	return false
}
