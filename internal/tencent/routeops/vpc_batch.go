package routeops

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	"github.com/ccmkit/ccm/internal/batch"
	"github.com/ccmkit/ccm/internal/callerr"
	"github.com/ccmkit/ccm/internal/tencent/tcapi"
)

// CreateRoutes takes many routes per call ("向指定路由表批量新增路由策略",
// vpc@v1.3.83 client.go) and the upstream route controller creates each
// node's route from its own goroutine, all at once after a reconcile. So
// concurrent CreateRoute calls gather for createWindow (or until
// createBatchMax routes wait) and go out as one CreateRoutes: N new nodes
// cost about N/createBatchMax writes against the action's 20/s, not N.
const (
	// createWindow is how long the first route of a batch waits for
	// others: the route controller's goroutines start within a few
	// milliseconds of each other.
	createWindow = 20 * time.Millisecond
	// createBatchMax is our choice: the API documents no per-call
	// maximum, and a table holds 200 routes by default (cloudsim's
	// MaxRoutesPerTable), so 50 keeps one refused batch small.
	createBatchMax = 50
)

// newCreateBatcher gathers b's CreateRoute calls into CreateRoutes calls.
func newCreateBatcher(b *VPC) *batch.Batcher[Route, Route] {
	return batch.New(batch.Options[Route, Route]{
		Window:  createWindow,
		MaxKeys: createBatchMax,
		Call: func(ctx context.Context, routes []Route) (map[Route]Route, error) {
			t, err := b.createRoutes(ctx, routes)
			if err != nil {
				return nil, err
			}
			created := make(map[Route]Route, len(routes))
			for _, r := range routes {
				created[r] = withRouteID(r, t)
			}
			return created, nil
		},
	})
}

// createBatched adds r to the gathering batch, waits for its answer and
// returns r with its RouteId. When a batch of several routes is refused for
// a reason that may be one route's (a conflict, an invalid next hop, the
// table's quota), each route is retried alone, so that the error names the
// route at fault and the others are created.
func (b *VPC) createBatched(ctx context.Context, r Route) (Route, error) {
	call := b.creates.Add(ctx, r)
	if err := call.Wait(ctx); err != nil {
		return Route{}, &callerr.Error{Action: "CreateRoutes", Target: fmt.Sprintf("%s in %s", r, b), Err: err}
	}
	if err := call.Err(); err != nil {
		if call.Len() > 1 && refusesOneRoute(tcapi.Code(err)) {
			t, err := b.createRoutes(ctx, []Route{r})
			return withRouteID(r, t), wrapCreate(err, r, b)
		}
		return withRouteID(r, nil), wrapCreate(err, r, b)
	}
	created, _ := call.Value(r)
	return created, nil
}

// createRoutes makes one CreateRoutes call and returns this table from the
// answer (nil if the answer lacks it).
func (b *VPC) createRoutes(ctx context.Context, routes []Route) (*vpc.RouteTable, error) {
	req := vpc.NewCreateRoutesRequest()
	req.RouteTableId = common.StringPtr(b.id)
	for _, r := range routes {
		req.Routes = append(req.Routes, &vpc.Route{
			DestinationCidrBlock: common.StringPtr(r.Destination.String()),
			GatewayType:          common.StringPtr(GatewayTypeNormalCVM),
			GatewayId:            common.StringPtr(r.Gateway.String()),
			RouteDescription:     common.StringPtr(routeDescription),
		})
	}
	resp, err := b.api.CreateRoutesWithContext(ctx, req)
	if err != nil {
		return nil, err
	}
	if resp != nil && resp.Response != nil {
		for _, t := range resp.Response.RouteTableSet {
			if t != nil && deref(t.RouteTableId) == b.id {
				return t, nil
			}
		}
	}
	return nil, nil
}

// refusesOneRoute reports whether a CreateRoutes error code may be caused
// by one route of a batch (the documented parameter and operation refusals,
// and the table's quota), rather than by the call (throttling, auth,
// internal errors), which retrying alone would only repeat.
func refusesOneRoute(code string) bool {
	return strings.HasPrefix(code, "InvalidParameter") || strings.HasPrefix(code, "UnsupportedOperation") ||
		code == "LimitExceeded"
}

// withRouteID returns r with the RouteId the table gives it; without one,
// DeleteRoute looks it up.
func withRouteID(r Route, t *vpc.RouteTable) Route {
	created := Route{Destination: r.Destination, Gateway: r.Gateway}
	if t == nil {
		return created
	}
	for _, x := range normalCVMRoutes(t) {
		if x.same(r) {
			created.ID = x.ID
		}
	}
	return created
}

func wrapCreate(err error, r Route, b *VPC) error {
	if err == nil {
		return nil
	}
	return &callerr.Error{Action: "CreateRoutes", Target: fmt.Sprintf("%s in %s", r, b), Kind: vpcKind(err, false), Err: err}
}
