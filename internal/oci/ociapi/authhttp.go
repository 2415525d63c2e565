package ociapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
	"github.com/ccmkit/ccm/internal/oci/ociauth"
	"github.com/ccmkit/ccm/internal/oci/ocierr"
)

// AuthHTTP is the transport of the credential calls (internal/oci/ociauth:
// the instance metadata service and the auth service's federation
// endpoint): the same timeout and cloud API metrics as the SDK clients
// (service "imds" or "auth", action the method and path), no rate limit
// (a renewal must not wait behind the controllers' calls), no retry and no
// circuit breaker (the source retries a failed renewal itself). wrap, when
// set, wraps the base transport.
func AuthHTTP(wrap func(http.RoundTripper) http.RoundTripper) ociauth.Doer {
	transport := newBaseTransport()
	if wrap != nil {
		transport = wrap(transport)
	}
	return &authDispatcher{base: &http.Client{Timeout: requestTimeout, Transport: transport}, metrics: ccmmetrics.NewCloudAPI(Provider, ocierr.Result)}
}

type authDispatcher struct {
	base    *http.Client
	metrics *ccmmetrics.CloudAPI
}

func (d *authDispatcher) Do(req *http.Request) (*http.Response, error) {
	// The paths are few and fixed (/opc/v2/identity/cert.pem, /v1/x509):
	// the action is the path itself.
	service := "auth"
	if strings.HasPrefix(req.URL.Path, "/opc/") {
		service = "imds"
	}
	op := req.Method + " " + req.URL.Path
	start := time.Now()
	resp, err := d.base.Do(req)
	took := time.Since(start)
	if err != nil {
		d.metrics.Attempt(service, op, ccmmetrics.CodeNetworkError, took)
		return nil, err
	}
	code := ccmmetrics.CodeOK
	if resp.StatusCode >= 300 {
		code = errorCode(resp)
	}
	d.metrics.Attempt(service, op, code, took)
	return resp, nil
}
