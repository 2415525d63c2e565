package cloudsim

import (
	"context"
	"net/http"
	"net/url"

	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// CLBs lists every Tencent load balancer with its listeners and targets.
func (c *AdminClient) CLBs(ctx context.Context) ([]tencent.CLBLoadBalancer, error) {
	var out []tencent.CLBLoadBalancer
	err := c.do(ctx, http.MethodGet, "tencent/loadbalancers", nil, &out)
	return out, err
}

// CLB returns one Tencent load balancer.
func (c *AdminClient) CLB(ctx context.Context, id string) (tencent.CLBLoadBalancer, error) {
	var out tencent.CLBLoadBalancer
	err := c.do(ctx, http.MethodGet, "tencent/loadbalancers/"+url.PathEscape(id), nil, &out)
	return out, err
}

// CreateCLB creates a load balancer out of band (ready at once).
func (c *AdminClient) CreateCLB(ctx context.Context, spec tencent.CLBSpec) (tencent.CLBLoadBalancer, error) {
	var out tencent.CLBLoadBalancer
	err := c.do(ctx, http.MethodPost, "tencent/loadbalancers", spec, &out)
	return out, err
}

// DeleteCLB deletes a load balancer out of band.
func (c *AdminClient) DeleteCLB(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "tencent/loadbalancers/"+url.PathEscape(id), nil, nil)
}

// AddCLBListener adds a listener to a load balancer out of band.
func (c *AdminClient) AddCLBListener(ctx context.Context, lbID string, spec tencent.CLBListenerSpec) (tencent.CLBListener, error) {
	var out tencent.CLBListener
	err := c.do(ctx, http.MethodPost, "tencent/loadbalancers/"+url.PathEscape(lbID)+"/listeners", spec, &out)
	return out, err
}

// DeleteCLBListener deletes a listener out of band (drift).
func (c *AdminClient) DeleteCLBListener(ctx context.Context, lbID, listenerID string) error {
	return c.do(ctx, http.MethodDelete, "tencent/loadbalancers/"+url.PathEscape(lbID)+"/listeners/"+url.PathEscape(listenerID), nil, nil)
}

// CLBDataPlane reports a load balancer's VIP, listeners and target health.
func (c *AdminClient) CLBDataPlane(ctx context.Context, lbID string) (DataPlaneStatus, error) {
	var out DataPlaneStatus
	err := c.do(ctx, http.MethodGet, "tencent/loadbalancers/"+url.PathEscape(lbID)+"/dataplane", nil, &out)
	return out, err
}

// FailCLBBindings arms a BatchRegisterTargets partial failure for one
// listener (see tencent.BindFailure).
func (c *AdminClient) FailCLBBindings(ctx context.Context, f tencent.BindFailure) error {
	return c.do(ctx, http.MethodPost, "tencent/clb/bindfailures", f, nil)
}

// ClearCLBBindFailures disarms every BatchRegisterTargets partial failure.
func (c *AdminClient) ClearCLBBindFailures(ctx context.Context) error {
	return c.do(ctx, http.MethodDelete, "tencent/clb/bindfailures", nil, nil)
}
