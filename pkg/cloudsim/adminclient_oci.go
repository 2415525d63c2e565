package cloudsim

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// AddOCIKey registers an OCI API signing key (keyId
// "<tenancy>/<user>/<fingerprint>", PEM RSA public key).
func (c *AdminClient) AddOCIKey(ctx context.Context, keyID, publicKeyPEM string) (oci.Key, error) {
	var out oci.Key
	err := c.do(ctx, http.MethodPost, "oci/keys", oci.KeyBody{KeyID: keyID, PublicKey: publicKeyPEM}, &out)
	return out, err
}

// OCIKeys lists the registered OCI API keys.
func (c *AdminClient) OCIKeys(ctx context.Context) ([]oci.Key, error) {
	var out []oci.Key
	err := c.do(ctx, http.MethodGet, "oci/keys", nil, &out)
	return out, err
}

// RemoveOCIKey unregisters an OCI API key.
func (c *AdminClient) RemoveOCIKey(ctx context.Context, keyID string) error {
	return c.do(ctx, http.MethodDelete, "oci/keys/"+keyID, nil, nil)
}

// SetOCIMetadataInstance makes the OCI instance metadata service answer
// for an instance, in tenancy.
func (c *AdminClient) SetOCIMetadataInstance(ctx context.Context, instanceID, tenancy string) (oci.InstanceIdentity, error) {
	var out oci.InstanceIdentity
	err := c.do(ctx, http.MethodPut, "oci/metadata", oci.MetadataBody{InstanceID: instanceID, Tenancy: tenancy}, &out)
	return out, err
}

// SeedOCINetwork adds compartments, availability domains, VCNs, subnets and
// security lists, all or none, and returns the whole network.
func (c *AdminClient) SeedOCINetwork(ctx context.Context, seed oci.NetworkSeed) (oci.NetworkState, error) {
	var out oci.NetworkState
	err := c.do(ctx, http.MethodPost, "oci/network", seed, &out)
	return out, err
}

// OCINetwork returns the whole OCI network.
func (c *AdminClient) OCINetwork(ctx context.Context) (oci.NetworkState, error) {
	var out oci.NetworkState
	err := c.do(ctx, http.MethodGet, "oci/network", nil, &out)
	return out, err
}

// OCILoadBalancers lists OCI load balancers and network load balancers
// (Kind tells them apart) with listeners, backend sets and backends.
func (c *AdminClient) OCILoadBalancers(ctx context.Context) ([]oci.LoadBalancer, error) {
	var out []oci.LoadBalancer
	err := c.do(ctx, http.MethodGet, "oci/loadbalancers", nil, &out)
	return out, err
}

// OCILoadBalancer returns one OCI load balancer or network load balancer.
func (c *AdminClient) OCILoadBalancer(ctx context.Context, id string) (oci.LoadBalancer, error) {
	var out oci.LoadBalancer
	err := c.do(ctx, http.MethodGet, "oci/loadbalancers/"+url.PathEscape(id), nil, &out)
	return out, err
}

// DeleteOCILoadBalancer deletes an OCI load balancer out of band, at once.
func (c *AdminClient) DeleteOCILoadBalancer(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "oci/loadbalancers/"+url.PathEscape(id), nil, nil)
}

// DeleteOCIListener deletes a listener out of band (drift).
func (c *AdminClient) DeleteOCIListener(ctx context.Context, lbID, name string) error {
	return c.do(ctx, http.MethodDelete, "oci/loadbalancers/"+url.PathEscape(lbID)+"/listeners/"+url.PathEscape(name), nil, nil)
}

// FailOCILoadBalancer turns an OCI load balancer FAILED out of band, as a
// broken one does.
func (c *AdminClient) FailOCILoadBalancer(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodPost, "oci/loadbalancers/"+url.PathEscape(id)+"/fail", nil, nil)
}

// HoldOCILoadBalancer starts a work request on an OCI load balancer that
// runs for d, as another client's change does (see oci.Dialect.HoldLoadBalancer),
// and returns its id.
func (c *AdminClient) HoldOCILoadBalancer(ctx context.Context, id string, d time.Duration) (string, error) {
	var out oci.HoldAnswer
	err := c.do(ctx, http.MethodPost, "oci/loadbalancers/"+url.PathEscape(id)+"/hold", oci.HoldBody{Duration: d.String()}, &out)
	return out.WorkRequestID, err
}

// OCIDataPlane reports an OCI load balancer's VIP, listeners and backend
// health.
func (c *AdminClient) OCIDataPlane(ctx context.Context, id string) (DataPlaneStatus, error) {
	var out DataPlaneStatus
	err := c.do(ctx, http.MethodGet, "oci/loadbalancers/"+url.PathEscape(id)+"/dataplane", nil, &out)
	return out, err
}

// PurgeOCITerminated makes a terminated instance disappear from the OCI
// API at once, before its retention ends (GetInstance then answers 404).
func (c *AdminClient) PurgeOCITerminated(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "oci/instances/"+url.PathEscape(id), nil, nil)
}

// OCIWorkRequests lists the OCI work requests cloudsim remembers.
func (c *AdminClient) OCIWorkRequests(ctx context.Context) ([]oci.WorkRequest, error) {
	var out []oci.WorkRequest
	err := c.do(ctx, http.MethodGet, "oci/workrequests", nil, &out)
	return out, err
}
