// Package ociapi builds the OCI SDK clients every part of the CCM uses,
// with one signer, one HTTP transport, client-side rate limits and API
// metrics: the OCI counterpart of internal/tcapi.
package ociapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	"github.com/oracle/oci-go-sdk/v65/networkloadbalancer"
	"golang.org/x/time/rate"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// requestTimeout bounds one HTTP request to the OCI API. The SDK's default
// client has none of its own; a controller must not hang on one read.
const requestTimeout = 30 * time.Second

// Clients holds every OCI SDK client the provider uses. They share one
// signer (the API key), one HTTP transport and one pair of rate limiters,
// so that the limits hold for the whole process, whichever controller calls.
//
// Deliberate SDK settings, the same for every client:
//   - Host: the config's endpoint when set (cloudsim, private endpoints).
//   - Retries: none. A retry hidden in the SDK would defeat the rate
//     limiter and make a throttled call look slow instead of failed; the
//     controllers requeue with backoff, and work-request polling has its
//     own loop.
//   - Circuit breaker: disabled. The SDK enables one by default for the
//     VirtualNetwork, LoadBalancer and NLB clients: after 80 % failures
//     over 10+ requests it fails every call of that client for a while.
//     One bad Service (say, a subnet it may not use) would then fail every
//     other Service and every node lookup with a breaker error instead of
//     their own answers. Our limiter bounds the load we put on OCI, and
//     each controller's per-object requeue backs off per object.
type Clients struct {
	Compute core.ComputeClient
	Network core.VirtualNetworkClient
	LB      loadbalancer.LoadBalancerClient
	NLB     networkloadbalancer.NetworkLoadBalancerClient
}

// Options are what the clients are built from: narrow on purpose, so that
// the SDK wiring does not depend on the provider's config.
type Options struct {
	// The API signing key (PEM, with its passphrase if encrypted) and the
	// identities it belongs to.
	Tenancy, User, Region, Fingerprint string
	Key, Passphrase                    string
	// Endpoint replaces every client's host (cloudsim, private endpoints);
	// empty: the regional endpoints.
	Endpoint string
	Limits   Limits
	// Wrap, when set, wraps the shared HTTP transport (the preflight check
	// measures the clock on it).
	Wrap func(http.RoundTripper) http.RoundTripper
}

// Limits are the read (GET, HEAD) and write token buckets.
type Limits struct {
	ReadQPS, WriteQPS     float64
	ReadBurst, WriteBurst int
	Disabled              bool // no client-side limiting
}

// New builds every client. It makes no API call.
func New(o Options) (*Clients, error) {
	var pass *string
	if o.Passphrase != "" {
		pass = &o.Passphrase
	}
	provider := common.NewRawConfigurationProvider(o.Tenancy, o.User, o.Region, o.Fingerprint, o.Key, pass)
	limits := newLimiters(o.Limits)
	transport := newBaseTransport()
	if o.Wrap != nil {
		transport = o.Wrap(transport)
	}
	base := &http.Client{Timeout: requestTimeout, Transport: transport}

	var c Clients
	var err error
	// The SDK's constructor errors are about the configuration provider
	// (a bad region, an unparsable key); they never contain the key.
	if c.Compute, err = core.NewComputeClientWithConfigurationProvider(provider); err != nil {
		return nil, fmt.Errorf("create OCI Compute client: %w", err)
	}
	configure(&c.Compute.BaseClient, "compute", o.Endpoint, base, limits)
	if c.Network, err = core.NewVirtualNetworkClientWithConfigurationProvider(provider); err != nil {
		return nil, fmt.Errorf("create OCI VirtualNetwork client: %w", err)
	}
	configure(&c.Network.BaseClient, "virtualnetwork", o.Endpoint, base, limits)
	if c.LB, err = loadbalancer.NewLoadBalancerClientWithConfigurationProvider(provider); err != nil {
		return nil, fmt.Errorf("create OCI LoadBalancer client: %w", err)
	}
	configure(&c.LB.BaseClient, "loadbalancer", o.Endpoint, base, limits)
	if c.NLB, err = networkloadbalancer.NewNetworkLoadBalancerClientWithConfigurationProvider(provider); err != nil {
		return nil, fmt.Errorf("create OCI NetworkLoadBalancer client: %w", err)
	}
	configure(&c.NLB.BaseClient, "networkloadbalancer", o.Endpoint, base, limits)
	return &c, nil
}

// configure applies the settings every client shares (see Clients).
func configure(c *common.BaseClient, service, endpoint string, base *http.Client, limits *limiters) {
	if endpoint != "" {
		c.Host = strings.TrimSuffix(endpoint, "/")
	}
	c.HTTPClient = &dispatcher{service: service, base: base, limits: limits}
	c.Configuration.CircuitBreaker = nil
	noRetry := common.NoRetryPolicy()
	c.Configuration.RetryPolicy = &noRetry
}

// newBaseTransport is http.DefaultTransport with enough idle connections
// for the controllers' concurrent calls to one host.
func newBaseTransport() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 32
	return t
}

// limiters are the read and write token buckets. nil buckets (the
// limiter disabled) let every request through.
type limiters struct {
	read, write *rate.Limiter
}

func newLimiters(l Limits) *limiters {
	if l.Disabled {
		return &limiters{}
	}
	return &limiters{read: rate.NewLimiter(rate.Limit(l.ReadQPS), l.ReadBurst), write: rate.NewLimiter(rate.Limit(l.WriteQPS), l.WriteBurst)}
}

// forMethod picks the bucket: GET and HEAD read, everything else writes.
func (l *limiters) forMethod(method string) (*rate.Limiter, string) {
	if method == http.MethodGet || method == http.MethodHead {
		return l.read, "read"
	}
	return l.write, "write"
}

// dispatcher is the SDK's HTTPRequestDispatcher for every client: it waits
// for a token from the matching bucket, sends the (already signed)
// request, and records metrics. It never logs a request: headers carry the
// signature.
type dispatcher struct {
	service string
	base    *http.Client
	limits  *limiters
}

func (d *dispatcher) Do(req *http.Request) (*http.Response, error) {
	registerMetrics()
	op := operationOf(req)
	lim, kind := d.limits.forMethod(req.Method)
	if lim != nil {
		start := time.Now()
		if err := lim.Wait(req.Context()); err != nil {
			apiRequests.WithLabelValues(d.service, op, "RateLimiterWait").Inc()
			return nil, fmt.Errorf("OCI %s %s: waiting for the %s rate limiter: %w", d.service, op, kind, err)
		}
		limiterWait.WithLabelValues(kind).Observe(time.Since(start).Seconds())
	}
	start := time.Now()
	resp, err := d.base.Do(req)
	apiDuration.WithLabelValues(d.service, op).Observe(time.Since(start).Seconds())
	if err != nil {
		apiRequests.WithLabelValues(d.service, op, "NetworkError").Inc()
		return nil, err
	}
	code := "OK"
	if resp.StatusCode >= 300 {
		code = errorCode(resp)
	}
	apiRequests.WithLabelValues(d.service, op, code).Inc()
	if resp.StatusCode == http.StatusTooManyRequests {
		apiThrottled.WithLabelValues(d.service, op).Inc()
	}
	return resp, nil
}

// operationOf names a request by method and path template, e.g.
// "GET /instances/{}" or "PUT /loadBalancers/{}/backendSets/{}": OCI paths
// alternate collection and id after the API version, so every second
// segment is an id or a name. That keeps the metric's cardinality bounded.
func operationOf(req *http.Request) string {
	segs := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	if len(segs) > 0 && len(segs[0]) == 8 && strings.Trim(segs[0], "0123456789") == "" {
		segs = segs[1:] // the API version, e.g. 20160918
	}
	for i := 1; i < len(segs); i += 2 {
		if segs[i] != "actions" {
			segs[i] = "{}"
		}
	}
	return req.Method + " /" + strings.Join(segs, "/")
}

// errorCode reads the OCI error code from an error answer's body ({"code":
// "NotAuthorizedOrNotFound", ...}) and puts the body back for the SDK. It
// falls back to HTTP<status>.
func errorCode(resp *http.Response) string {
	fallback := "HTTP" + strconv.Itoa(resp.StatusCode)
	if resp.Body == nil {
		return fallback
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return fallback
	}
	var e struct {
		Code string `json:"code"`
	}
	if json.Unmarshal(body, &e) != nil || e.Code == "" || len(e.Code) > 64 {
		return fallback
	}
	return e.Code
}

// Metrics of every OCI API request, on the legacy registry so that they
// are served on the CCM's /metrics with upstream's own. Labels carry only
// our service names, path templates and OCI's error codes: never an id or
// a credential.
var (
	apiRequests = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      "ccmkit",
		Subsystem:      "oci_api",
		Name:           "requests_total",
		Help:           "OCI API requests sent, by service, operation (method and path template) and result code (OK, the OCI error code, HTTP<status>, NetworkError, RateLimiterWait).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"service", "operation", "code"})

	apiDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace:      "ccmkit",
		Subsystem:      "oci_api",
		Name:           "request_duration_seconds",
		Help:           "Latency of one OCI API request, excluding the wait for the client-side rate limiter.",
		Buckets:        []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		StabilityLevel: metrics.ALPHA,
	}, []string{"service", "operation"})

	apiThrottled = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      "ccmkit",
		Subsystem:      "oci_api",
		Name:           "throttled_total",
		Help:           "OCI API answers 429 TooManyRequests.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"service", "operation"})

	limiterWait = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace:      "ccmkit",
		Subsystem:      "oci_api",
		Name:           "rate_limiter_wait_seconds",
		Help:           "Time a request waited for a token from the client-side rate limiter, by bucket (read, write).",
		Buckets:        []float64{0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
		StabilityLevel: metrics.ALPHA,
	}, []string{"bucket"})
)

var registerOnce sync.Once

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(apiRequests, apiDuration, apiThrottled, limiterWait)
	})
}
