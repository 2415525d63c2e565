package tcapi

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Metrics of every cloud API call, registered on the legacy registry so
// that they are served on the CCM's secure /metrics with upstream's own.
// Labels never carry a credential: provider, service and action are our own
// constants and the request's X-TC-Action; code is the answer's error code.
var (
	apiRequests = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      "ccmkit",
		Subsystem:      "cloud_api",
		Name:           "requests_total",
		Help:           "Cloud API requests sent, by result code (OK, the cloud's error code, HTTP<status>, NetworkError). Each retry counts.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"provider", "service", "action", "code"})

	apiDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace:      "ccmkit",
		Subsystem:      "cloud_api",
		Name:           "request_duration_seconds",
		Help:           "Latency of one cloud API request (one attempt), excluding client-side waits.",
		Buckets:        []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		StabilityLevel: metrics.ALPHA,
	}, []string{"provider", "service", "action"})

	apiThrottled = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      "ccmkit",
		Subsystem:      "cloud_api",
		Name:           "throttled_total",
		Help:           "Cloud API answers that said the rate limit was exceeded (RequestLimitExceeded, HTTP 429).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"provider", "service", "action"})

	apiRetries = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      "ccmkit",
		Subsystem:      "cloud_api",
		Name:           "retries_total",
		Help:           "Cloud API requests sent again after a throttle or a server error, by reason (throttled, server_error).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"provider", "service", "action", "reason"})

	apiClientWait = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace:      "ccmkit",
		Subsystem:      "cloud_api",
		Name:           "client_wait_seconds",
		Help:           "Time a request waited before being sent: client-side rate limit, and the cool-down after a throttle.",
		Buckets:        []float64{0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
		StabilityLevel: metrics.ALPHA,
	}, []string{"provider", "service", "action"})
)

var registerOnce sync.Once

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(apiRequests, apiDuration, apiThrottled, apiRetries, apiClientWait)
	})
}
