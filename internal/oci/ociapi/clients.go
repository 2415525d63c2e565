// Package ociapi builds the OCI SDK clients every part of the CCM uses,
// with one signer, one HTTP transport, client-side rate limits and API
// metrics: the OCI counterpart of internal/tencent/tcapi.
package ociapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	"github.com/oracle/oci-go-sdk/v65/networkloadbalancer"
	"golang.org/x/time/rate"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
	"github.com/ccmkit/ccm/internal/oci/ociauth"
	"github.com/ccmkit/ccm/internal/oci/ocierr"
)

// Provider labels the cloud API metrics: the provider's registered name.
const Provider = "oci"

// requestTimeout bounds one HTTP request to the OCI API. The SDK's default
// client has none of its own; a controller must not hang on one read.
const requestTimeout = 30 * time.Second

// Clients holds every OCI SDK client the provider uses. They share one
// signer (ociauth.Signer: an API key or the instance principal), one HTTP transport and one pair of rate limiters,
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
	// The region, and the tenancy the credentials belong to.
	Tenancy, Region string
	// Credentials sign every request (internal/oci/ociauth). When nil,
	// the API key below does.
	Credentials ociauth.Source
	// An API signing key (PEM, with its passphrase if encrypted) and the
	// user it belongs to, when Credentials is nil.
	User, Fingerprint string
	Key, Passphrase   string
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
	// ReadPerOperation gives every read operation ("GET /instances",
	// "GET /privateIps", ...) its own ReadQPS bucket instead of one shared
	// by all reads (readbuckets.go).
	ReadPerOperation bool
	Disabled         bool // no client-side limiting
}

// New builds every client. It makes no API call.
func New(o Options) (*Clients, error) {
	src := o.Credentials
	if src == nil {
		static, err := ociauth.NewStatic(o.Tenancy, o.User, o.Fingerprint, o.Key, o.Passphrase)
		if err != nil {
			return nil, fmt.Errorf("the OCI API key: %w", err)
		}
		src = static
	}
	provider := ociauth.ClientConfig(o.Region, o.Tenancy, src)
	signer := ociauth.Signer(src)
	limits := newLimiters(o.Limits)
	rec := ccmmetrics.NewCloudAPI(Provider, ocierr.Result)
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
	configure(&c.Compute.BaseClient, "compute", o.Endpoint, base, limits, rec, signer)
	if c.Network, err = core.NewVirtualNetworkClientWithConfigurationProvider(provider); err != nil {
		return nil, fmt.Errorf("create OCI VirtualNetwork client: %w", err)
	}
	configure(&c.Network.BaseClient, "virtualnetwork", o.Endpoint, base, limits, rec, signer)
	if c.LB, err = loadbalancer.NewLoadBalancerClientWithConfigurationProvider(provider); err != nil {
		return nil, fmt.Errorf("create OCI LoadBalancer client: %w", err)
	}
	configure(&c.LB.BaseClient, "loadbalancer", o.Endpoint, base, limits, rec, signer)
	if c.NLB, err = networkloadbalancer.NewNetworkLoadBalancerClientWithConfigurationProvider(provider); err != nil {
		return nil, fmt.Errorf("create OCI NetworkLoadBalancer client: %w", err)
	}
	configure(&c.NLB.BaseClient, "networkloadbalancer", o.Endpoint, base, limits, rec, signer)
	return &c, nil
}

// configure applies the settings every client shares (see Clients).
func configure(c *common.BaseClient, service, endpoint string, base *http.Client, limits *limiters, rec *ccmmetrics.CloudAPI, signer common.HTTPRequestSigner) {
	c.Signer = signer
	if endpoint != "" {
		c.Host = strings.TrimSuffix(endpoint, "/")
	}
	c.HTTPClient = &dispatcher{service: service, base: base, limits: limits, metrics: rec}
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
	// perOp, when set, replaces read (Limits.ReadPerOperation).
	perOp *operationBuckets
}

func newLimiters(l Limits) *limiters {
	if l.Disabled {
		return &limiters{}
	}
	out := &limiters{write: rate.NewLimiter(rate.Limit(l.WriteQPS), l.WriteBurst)}
	if l.ReadPerOperation {
		out.perOp = newOperationBuckets(l.ReadQPS, l.ReadBurst)
	} else {
		out.read = rate.NewLimiter(rate.Limit(l.ReadQPS), l.ReadBurst)
	}
	return out
}

// forRequest picks the bucket: GET and HEAD read (the operation's own
// bucket when reads are limited per operation), everything else writes.
func (l *limiters) forRequest(method, op string) (*rate.Limiter, string) {
	if method == http.MethodGet || method == http.MethodHead {
		if l.perOp != nil {
			return l.perOp.get(op), "read"
		}
		return l.read, "read"
	}
	return l.write, "write"
}

// dispatcher is the SDK's HTTPRequestDispatcher for every client: it waits
// for a token from the matching bucket, sends the (already signed)
// request, and records the cloud API metrics (action: the operation). It
// never logs a request: headers carry the signature.
type dispatcher struct {
	service string
	base    *http.Client
	limits  *limiters
	metrics *ccmmetrics.CloudAPI
}

func (d *dispatcher) Do(req *http.Request) (*http.Response, error) {
	op := operationOf(req)
	lim, kind := d.limits.forRequest(req.Method, op)
	if lim != nil {
		start := time.Now()
		err := lim.Wait(req.Context())
		d.metrics.ClientWait(d.service, op, time.Since(start))
		if err != nil { // never sent: not a request in the metrics
			return nil, fmt.Errorf("OCI %s %s: waiting for the %s rate limiter: %w", d.service, op, kind, err)
		}
	}
	start := time.Now()
	resp, err := d.base.Do(req)
	took := time.Since(start)
	if err != nil {
		d.metrics.Attempt(d.service, op, ccmmetrics.CodeNetworkError, took)
		return nil, err
	}
	code := ccmmetrics.CodeOK
	if resp.StatusCode >= 300 {
		code = errorCode(resp)
	}
	d.metrics.Attempt(d.service, op, code, took)
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
	fallback := ccmmetrics.HTTPCode(resp.StatusCode)
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
