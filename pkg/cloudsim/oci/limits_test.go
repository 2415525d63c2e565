package oci

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	nlb "github.com/oracle/oci-go-sdk/v65/networkloadbalancer"
)

func ips(from, n int) []string {
	out := make([]string, n)
	for i := range out {
		k := from + i
		out[i] = fmt.Sprintf("10.0.%d.%d", k/250, 1+k%250)
	}
	return out
}

func lbBackendDetails(addrs []string) []loadbalancer.BackendDetails {
	out := make([]loadbalancer.BackendDetails, len(addrs))
	for i, ip := range addrs {
		out[i] = loadbalancer.BackendDetails{IpAddress: common.String(ip), Port: common.Int(30080)}
	}
	return out
}

func nlbBackendDetails(addrs []string) []nlb.BackendDetails {
	out := make([]nlb.BackendDetails, len(addrs))
	for i, ip := range addrs {
		out[i] = nlb.BackendDetails{IpAddress: common.String(ip), Port: common.Int(30080)}
	}
	return out
}

// lbWithSets is a load balancer whose backend sets (and one listener each)
// have the given numbers of backends.
func lbWithSets(sizes ...int) loadbalancer.CreateLoadBalancerDetails {
	d := lbDetails("limits")
	d.BackendSets, d.Listeners = map[string]loadbalancer.BackendSetDetails{}, map[string]loadbalancer.ListenerDetails{}
	for i, n := range sizes {
		name := fmt.Sprintf("TCP-%d", 80+i)
		d.BackendSets[name] = loadbalancer.BackendSetDetails{
			Policy:        common.String("ROUND_ROBIN"),
			HealthChecker: &loadbalancer.HealthCheckerDetails{Protocol: common.String("TCP"), Port: common.Int(30080)},
			Backends:      lbBackendDetails(ips(0, n)),
		}
		d.Listeners[name] = loadbalancer.ListenerDetails{DefaultBackendSetName: common.String(name), Port: common.Int(80 + i), Protocol: common.String("TCP")}
	}
	return d
}

func nlbWithSets(sizes ...int) nlb.CreateNetworkLoadBalancerDetails {
	d := nlbDetails("limits")
	d.BackendSets, d.Listeners = map[string]nlb.BackendSetDetails{}, map[string]nlb.ListenerDetails{}
	for i, n := range sizes {
		name := fmt.Sprintf("TCP-%d", 80+i)
		var backends []nlb.Backend
		for _, b := range nlbBackendDetails(ips(0, n)) {
			backends = append(backends, nlb.Backend{IpAddress: b.IpAddress, Port: b.Port})
		}
		d.BackendSets[name] = nlb.BackendSetDetails{
			Policy:        nlb.NetworkLoadBalancingPolicyFiveTuple,
			HealthChecker: &nlb.HealthChecker{Protocol: nlb.HealthCheckProtocolsTcp, Port: common.Int(30080)},
			Backends:      backends,
		}
		d.Listeners[name] = nlb.ListenerDetails{Name: common.String(name), DefaultBackendSetName: common.String(name),
			Port: common.Int(80 + i), Protocol: nlb.ListenerProtocolsTcp}
	}
	return d
}

func repeat(n, size int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = size
	}
	return out
}

// The documented configuration limits per load balancer, at create time.
// Load Balancing (balanceoverview.htm): "16 backend sets", "512 backend
// servers per backend set", "16 listeners"; the total is 1024 (the Always
// Free page's flexible load balancer; the overview says 512, see limits.go).
// Network Load Balancing (NetworkLoadBalancer/introduction.htm): "50
// backend sets", "512 backend servers per backend set", "1024 backend
// servers total", "50 listeners". Past a limit: 400 LimitExceeded.
func TestBalancerLimitsOnCreate(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		sizes []int
		ok    bool
	}{
		{"LB: 512 in a set", Options{}, []int{512}, true},
		{"LB: 513 in a set", Options{}, []int{513}, false},
		{"LB: 2 x 512 = 1024 in all", Options{}, []int{512, 512}, true},
		{"LB: 3 x 400 = 1200 in all", Options{}, []int{400, 400, 400}, false},
		{"LB: 16 backend sets", Options{}, repeat(16, 1), true},
		{"LB: 17 backend sets", Options{}, repeat(17, 1), false},
		{"LB: a lower per-set option", Options{LBLimits: BalancerLimits{BackendsPerSet: 5}}, []int{6}, false},
		{"LB: a higher total option", Options{LBLimits: BalancerLimits{Backends: 2048}}, []int{512, 512, 512}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, tt.opts, core.Config{})
			_, err := e.lb().CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: lbWithSets(tt.sizes...)})
			if tt.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tt.ok {
				wantErr(t, err, http.StatusBadRequest, CodeLimitExceeded)
			}
		})
	}
	nlbTests := []struct {
		name  string
		opts  Options
		sizes []int
		ok    bool
	}{
		{"NLB: 512 in a set", Options{}, []int{512}, true},
		{"NLB: 513 in a set", Options{}, []int{513}, false},
		{"NLB: 2 x 512 = 1024 in all", Options{}, []int{512, 512}, true},
		{"NLB: 3 x 342 = 1026 in all", Options{}, []int{342, 342, 342}, false},
		{"NLB: 50 backend sets", Options{}, repeat(50, 1), true},
		{"NLB: 51 backend sets", Options{}, repeat(51, 1), false},
		{"NLB: a lower total option", Options{NLBLimits: BalancerLimits{Backends: 10}}, []int{6, 5}, false},
	}
	for _, tt := range nlbTests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, tt.opts, core.Config{})
			_, err := e.nlb().CreateNetworkLoadBalancer(ctx(t), nlb.CreateNetworkLoadBalancerRequest{CreateNetworkLoadBalancerDetails: nlbWithSets(tt.sizes...)})
			if tt.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tt.ok {
				wantErr(t, err, http.StatusBadRequest, CodeLimitExceeded)
			}
		})
	}
}

// The same limits hold for changes: a backend set updated or added past a
// limit is refused before any work request starts, and nothing changes.
func TestBalancerLimitsOnChange(t *testing.T) {
	e := newTestEnv(t, Options{}, core.Config{})
	lbc := e.lb()
	created, err := lbc.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: lbWithSets(500)})
	if err != nil {
		t.Fatal(err)
	}
	lbID := e.lbIDOf(t, *created.OpcWorkRequestId)
	update := func(n int) error {
		_, err := lbc.UpdateBackendSet(ctx(t), loadbalancer.UpdateBackendSetRequest{
			LoadBalancerId: common.String(lbID), BackendSetName: common.String("TCP-80"),
			UpdateBackendSetDetails: loadbalancer.UpdateBackendSetDetails{
				Policy:        common.String("ROUND_ROBIN"),
				HealthChecker: &loadbalancer.HealthCheckerDetails{Protocol: common.String("TCP"), Port: common.Int(30080)},
				Backends:      lbBackendDetails(ips(0, n)),
			}})
		return err
	}
	wantErr(t, update(513), http.StatusBadRequest, CodeLimitExceeded)
	if err := update(512); err != nil {
		t.Fatalf("update to 512: %v", err)
	}
	addSet := func(name string, n int) error {
		_, err := lbc.CreateBackendSet(ctx(t), loadbalancer.CreateBackendSetRequest{
			LoadBalancerId: common.String(lbID),
			CreateBackendSetDetails: loadbalancer.CreateBackendSetDetails{
				Name: common.String(name), Policy: common.String("ROUND_ROBIN"),
				HealthChecker: &loadbalancer.HealthCheckerDetails{Protocol: common.String("TCP"), Port: common.Int(30081)},
				Backends:      lbBackendDetails(ips(0, n)),
			}})
		return err
	}
	wantErr(t, addSet("TCP-81", 513), http.StatusBadRequest, CodeLimitExceeded) // 512 + 513 > 1024 too
	if err := addSet("TCP-81", 512); err != nil {
		t.Fatalf("a second set of 512 (1024 in all): %v", err)
	}
	wantErr(t, addSet("TCP-82", 1), http.StatusBadRequest, CodeLimitExceeded) // 1025 in all
	got, err := lbc.GetLoadBalancer(ctx(t), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: common.String(lbID)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.BackendSets["TCP-82"]; ok || len(got.BackendSets["TCP-80"].Backends) != 512 {
		t.Fatalf("a refused change changed the load balancer: %d sets, %d backends in TCP-80", len(got.BackendSets), len(got.BackendSets["TCP-80"].Backends))
	}

	nc := e.nlb()
	n, err := nc.CreateNetworkLoadBalancer(ctx(t), nlb.CreateNetworkLoadBalancerRequest{CreateNetworkLoadBalancerDetails: nlbWithSets(10)})
	if err != nil {
		t.Fatal(err)
	}
	waitNLBWorkRequest(t, nc, *n.OpcWorkRequestId)
	_, err = nc.UpdateBackendSet(ctx(t), nlb.UpdateBackendSetRequest{
		NetworkLoadBalancerId: n.Id, BackendSetName: common.String("TCP-80"),
		UpdateBackendSetDetails: nlb.UpdateBackendSetDetails{Backends: nlbBackendDetails(ips(0, 513))},
	})
	wantErr(t, err, http.StatusBadRequest, CodeLimitExceeded)
	_, err = nc.CreateBackendSet(ctx(t), nlb.CreateBackendSetRequest{
		NetworkLoadBalancerId: n.Id,
		CreateBackendSetDetails: nlb.CreateBackendSetDetails{
			Name: common.String("TCP-81"), Policy: nlb.NetworkLoadBalancingPolicyFiveTuple,
			HealthChecker: &nlb.HealthCheckerDetails{Protocol: nlb.HealthCheckProtocolsTcp, Port: common.Int(30081)},
			Backends:      nlbBackendDetails(ips(0, 1015)), // over 512 in a set, and 10 + 1015 > 1024
		}})
	wantErr(t, err, http.StatusBadRequest, CodeLimitExceeded)
}

// lbIDOf waits for a create's work request and returns the load balancer id.
func (e *testEnv) lbIDOf(t *testing.T, workRequestID string) string {
	t.Helper()
	wr := waitLBWorkRequest(t, e.lb(), workRequestID)
	if wr.LifecycleState != loadbalancer.WorkRequestLifecycleStateSucceeded {
		t.Fatalf("create work request: %+v", wr)
	}
	return *wr.LoadBalancerId
}
