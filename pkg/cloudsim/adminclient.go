package cloudsim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// AdminClient talks to the admin HTTP API of a cloudsim process.
type AdminClient struct {
	BaseURL string       // e.g. "http://127.0.0.1:8080" (the /admin/ prefix is added)
	HTTP    *http.Client // default http.DefaultClient
}

// AdminError is a non-2xx admin answer.
type AdminError struct {
	StatusCode int
	Message    string
}

func (e *AdminError) Error() string {
	return fmt.Sprintf("cloudsim admin: HTTP %d: %s", e.StatusCode, e.Message)
}

func (c *AdminClient) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("cloudsim admin: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+"/admin/"+path, body)
	if err != nil {
		return fmt.Errorf("cloudsim admin: %w", err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("cloudsim admin: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("cloudsim admin: reading answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		var eb core.ErrorBody
		msg := strings.TrimSpace(string(raw))
		if json.Unmarshal(raw, &eb) == nil && eb.Error != "" {
			msg = eb.Error
		}
		return &AdminError{StatusCode: resp.StatusCode, Message: msg}
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("cloudsim admin: decoding answer: %w", err)
		}
	}
	return nil
}

// Healthz checks that the sim is up.
func (c *AdminClient) Healthz(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "healthz", nil, nil)
}

// AddInstances adds instances (all or none) and returns them as stored.
func (c *AdminClient) AddInstances(ctx context.Context, in ...Instance) ([]Instance, error) {
	if in == nil {
		in = []Instance{}
	}
	var out []Instance
	err := c.do(ctx, http.MethodPost, "instances", in, &out)
	return out, err
}

// Instances lists the visible instances in creation order.
func (c *AdminClient) Instances(ctx context.Context) ([]Instance, error) {
	var out []Instance
	err := c.do(ctx, http.MethodGet, "instances", nil, &out)
	return out, err
}

// SetInstanceState changes an instance's state.
func (c *AdminClient) SetInstanceState(ctx context.Context, id, state string) error {
	return c.do(ctx, http.MethodPost, "instances/"+url.PathEscape(id)+"/state", core.StateBody{State: state}, nil)
}

// SetFault replaces the fault for f.Action.
func (c *AdminClient) SetFault(ctx context.Context, f Fault) error {
	return c.do(ctx, http.MethodPut, "faults", f, nil)
}

// SetReadLag sets the maximum lag of List/Describe answers behind writes
// (0: off; see Options.ReadLag).
func (c *AdminClient) SetReadLag(ctx context.Context, max time.Duration) error {
	return c.do(ctx, http.MethodPut, "readlag", core.ReadLagBody{Max: max.String()}, nil)
}

// ClearFaults removes every fault.
func (c *AdminClient) ClearFaults(ctx context.Context) error {
	return c.do(ctx, http.MethodDelete, "faults", nil, nil)
}

// SetRateLimit overrides an action's rate limit; qps <= 0 disables it.
func (c *AdminClient) SetRateLimit(ctx context.Context, action string, qps float64) error {
	return c.do(ctx, http.MethodPut, "ratelimits", core.RateLimitBody{Action: action, QPS: qps}, nil)
}

// Calls returns action -> result code -> count.
func (c *AdminClient) Calls(ctx context.Context) (map[string]map[string]int, error) {
	out := map[string]map[string]int{}
	err := c.do(ctx, http.MethodGet, "calls", nil, &out)
	return out, err
}

// ResetCalls zeroes the call counts.
func (c *AdminClient) ResetCalls(ctx context.Context) error {
	return c.do(ctx, http.MethodDelete, "calls", nil, nil)
}

// RouteTables lists every TKE cluster route table with its routes.
func (c *AdminClient) RouteTables(ctx context.Context) ([]tencent.RouteTable, error) {
	var out []tencent.RouteTable
	err := c.do(ctx, http.MethodGet, "tencent/routetables", nil, &out)
	return out, err
}

// RouteTable returns one TKE cluster route table with its routes.
func (c *AdminClient) RouteTable(ctx context.Context, name string) (tencent.RouteTable, error) {
	var out tencent.RouteTable
	err := c.do(ctx, http.MethodGet, "tencent/routetables/"+url.PathEscape(name), nil, &out)
	return out, err
}

// CreateRouteTable creates a TKE cluster route table (with optional routes).
func (c *AdminClient) CreateRouteTable(ctx context.Context, rt tencent.RouteTable) (tencent.RouteTable, error) {
	var out tencent.RouteTable
	err := c.do(ctx, http.MethodPost, "tencent/routetables", rt, &out)
	return out, err
}

// AddClusterRoute adds a route to a table out of band.
func (c *AdminClient) AddClusterRoute(ctx context.Context, table string, r tencent.ClusterRoute) error {
	return c.do(ctx, http.MethodPost, "tencent/routetables/"+url.PathEscape(table)+"/routes", r, nil)
}

// DeleteClusterRoute removes a route from a table out of band.
func (c *AdminClient) DeleteClusterRoute(ctx context.Context, table string, r tencent.ClusterRoute) error {
	return c.do(ctx, http.MethodDelete, "tencent/routetables/"+url.PathEscape(table)+"/routes", r, nil)
}
