package routeops

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// Concurrent CreateRoute calls share CreateRoutes calls of up to
// createBatchMax routes; a batch refused because of one route is retried
// route by route, so the others are created and only the bad one fails,
// with its own error; a throttled batch is not retried alone.
func TestVPCCreateRoutesBatched(t *testing.T) {
	tests := []struct {
		name      string
		good, bad int    // routes to instances, routes to a gateway no instance has
		fault     string // every CreateRoutes call answers this code
		wantCalls int
		wantErrs  int
		wantKind  error
	}{
		{name: "a few routes, one call", good: 12, wantCalls: 1},
		{name: "more than a batch", good: 60, wantCalls: 2},
		{name: "one bad route: the batch, then each alone", good: 5, bad: 1, wantCalls: 1 + 6, wantErrs: 1, wantKind: ErrGatewayNotInstance},
		{name: "throttled: every route fails, no retries alone", good: 5, fault: "RequestLimitExceeded", wantCalls: 1, wantErrs: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newRouteEnvWith(t, nil)
			if _, err := env.sim.Tencent().VPC().CreateVPCRouteTable(tencent.VPCRouteTable{ID: simRTB, VpcID: simVPC}); err != nil {
				t.Fatal(err)
			}
			var routes []Route
			for i := range tt.good + tt.bad {
				gw := fmt.Sprintf("10.1.%d.%d", i/200, 1+i%200)
				if i < tt.good {
					env.addInstances(gw)
				}
				routes = append(routes, rt(fmt.Sprintf("10.200.%d.0/24", i), gw))
			}
			if tt.fault != "" {
				// The transport is the bare SDK's here: no retries of its own.
				env.fail("CreateRoutes", tt.fault, 0)
			}
			b := NewVPC(env.vpcClient(), simRTB, simVPC, nil)
			created := make([]Route, len(routes))
			errs := make([]error, len(routes))
			var wg sync.WaitGroup
			for i, r := range routes {
				wg.Go(func() { created[i], errs[i] = b.CreateRoute(context.Background(), r) })
			}
			wg.Wait()

			if n := env.count("CreateRoutes"); n != tt.wantCalls {
				t.Errorf("%d CreateRoutes calls, want %d", n, tt.wantCalls)
			}
			failed := 0
			for i, err := range errs {
				switch {
				case err != nil:
					failed++
					if tt.wantKind != nil && !errors.Is(err, tt.wantKind) {
						t.Errorf("route %s: %v, want %v", routes[i], err, tt.wantKind)
					}
				case created[i].ID == "":
					t.Errorf("route %s created without its RouteId from the answer", routes[i])
				}
			}
			if failed != tt.wantErrs {
				t.Errorf("%d routes failed, want %d: %v", failed, tt.wantErrs, errs)
			}
			table, err := env.sim.Tencent().VPC().VPCRouteTable(simRTB)
			if err != nil {
				t.Fatal(err)
			}
			if want := len(routes) - tt.wantErrs; len(table.Routes) != want {
				t.Errorf("the table holds %d routes, want %d", len(table.Routes), want)
			}
		})
	}
}
