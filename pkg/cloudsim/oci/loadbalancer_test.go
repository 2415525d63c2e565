package oci

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// lbDetails is what the provider sends: a flexible LB with one TCP
// listener, its backend set named after it, nodes as backends.
func lbDetails(name string, backends ...string) loadbalancer.CreateLoadBalancerDetails {
	var bs []loadbalancer.BackendDetails
	for _, ip := range backends {
		bs = append(bs, loadbalancer.BackendDetails{IpAddress: common.String(ip), Port: common.Int(30080)})
	}
	return loadbalancer.CreateLoadBalancerDetails{
		CompartmentId: common.String(DefaultCompartmentID),
		DisplayName:   common.String(name),
		ShapeName:     common.String(ShapeFlexible),
		ShapeDetails:  &loadbalancer.ShapeDetails{MinimumBandwidthInMbps: common.Int(10), MaximumBandwidthInMbps: common.Int(100)},
		SubnetIds:     []string{DefaultSubnetID},
		BackendSets: map[string]loadbalancer.BackendSetDetails{"TCP-80": {
			Policy:        common.String("ROUND_ROBIN"),
			HealthChecker: &loadbalancer.HealthCheckerDetails{Protocol: common.String("HTTP"), Port: common.Int(10256), UrlPath: common.String("/healthz")},
			Backends:      bs,
		}},
		Listeners: map[string]loadbalancer.ListenerDetails{"TCP-80": {
			DefaultBackendSetName: common.String("TCP-80"), Port: common.Int(80), Protocol: common.String("TCP"),
		}},
	}
}

func waitLBWorkRequest(t *testing.T, c loadbalancer.LoadBalancerClient, id string) loadbalancer.WorkRequest {
	t.Helper()
	var wr loadbalancer.WorkRequest
	eventually(t, 10*time.Second, func() error {
		resp, err := c.GetWorkRequest(ctx(t), loadbalancer.GetWorkRequestRequest{WorkRequestId: common.String(id)})
		if err != nil {
			return err
		}
		wr = resp.WorkRequest
		if wr.LifecycleState == loadbalancer.WorkRequestLifecycleStateSucceeded || wr.LifecycleState == loadbalancer.WorkRequestLifecycleStateFailed {
			return nil
		}
		return errorf("work request %s is %s", id, wr.LifecycleState)
	})
	return wr
}

func TestLoadBalancerLifecycle(t *testing.T) {
	e := newTestEnv(t, Options{WorkRequestLatency: 600 * time.Millisecond}, core.Config{})
	c := e.lb()
	created, err := c.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{
		CreateLoadBalancerDetails: lbDetails("svc-uid-1", "10.0.0.5"), OpcRetryToken: common.String("svc-uid-1"),
	})
	if err != nil {
		t.Fatal(err)
	}
	wrID := *created.OpcWorkRequestId

	// The same retry token answers the same work request, and creates nothing.
	again, err := c.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{
		CreateLoadBalancerDetails: lbDetails("svc-uid-1", "10.0.0.5"), OpcRetryToken: common.String("svc-uid-1"),
	})
	if err != nil || *again.OpcWorkRequestId != wrID {
		t.Fatalf("retry: %v %v, want work request %s", again.OpcWorkRequestId, err, wrID)
	}

	wr, err := c.GetWorkRequest(ctx(t), loadbalancer.GetWorkRequestRequest{WorkRequestId: common.String(wrID)})
	if err != nil {
		t.Fatal(err)
	}
	if s := wr.LifecycleState; s != loadbalancer.WorkRequestLifecycleStateAccepted && s != loadbalancer.WorkRequestLifecycleStateInProgress {
		t.Fatalf("fresh work request is %s", s)
	}
	lbID := *wr.LoadBalancerId
	got, err := c.GetLoadBalancer(ctx(t), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: common.String(lbID)})
	if err != nil {
		t.Fatal(err)
	}
	if got.LifecycleState != loadbalancer.LoadBalancerLifecycleStateCreating || len(got.IpAddresses) != 0 {
		t.Fatalf("while creating: %s %v", got.LifecycleState, got.IpAddresses)
	}
	// One change at a time: a change while the create runs is queued
	// behind it (ACCEPTED), and runs once the load balancer is ACTIVE.
	tagged, err := c.UpdateLoadBalancer(ctx(t), loadbalancer.UpdateLoadBalancerRequest{LoadBalancerId: common.String(lbID),
		UpdateLoadBalancerDetails: loadbalancer.UpdateLoadBalancerDetails{FreeformTags: map[string]string{"queued": "yes"}}})
	if err != nil {
		t.Fatalf("a change during the create: %v", err)
	}
	if q, err := c.GetWorkRequest(ctx(t), loadbalancer.GetWorkRequestRequest{WorkRequestId: tagged.OpcWorkRequestId}); err != nil ||
		q.LifecycleState != loadbalancer.WorkRequestLifecycleStateAccepted {
		t.Fatalf("queued work request: %v %v", q.LifecycleState, err)
	}

	if wr := waitLBWorkRequest(t, c, wrID); wr.LifecycleState != loadbalancer.WorkRequestLifecycleStateSucceeded || wr.TimeFinished == nil {
		t.Fatalf("work request: %+v", wr)
	}
	if wr := waitLBWorkRequest(t, c, *tagged.OpcWorkRequestId); wr.LifecycleState != loadbalancer.WorkRequestLifecycleStateSucceeded {
		t.Fatalf("queued work request: %+v", wr)
	}
	got, err = c.GetLoadBalancer(ctx(t), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: common.String(lbID)})
	if err != nil {
		t.Fatal(err)
	}
	if got.LifecycleState != loadbalancer.LoadBalancerLifecycleStateActive || len(got.IpAddresses) != 1 || !*got.IpAddresses[0].IsPublic ||
		*got.Listeners["TCP-80"].Port != 80 || *got.BackendSets["TCP-80"].Backends[0].Name != "10.0.0.5:30080" ||
		*got.BackendSets["TCP-80"].HealthChecker.Port != 10256 || *got.ShapeDetails.MaximumBandwidthInMbps != 100 {
		t.Fatalf("active LB: %+v", got.LoadBalancer)
	}
	list, err := c.ListLoadBalancers(ctx(t), loadbalancer.ListLoadBalancersRequest{CompartmentId: common.String(DefaultCompartmentID), DisplayName: common.String("svc-uid-1")})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %d %v", len(list.Items), err)
	}

	// Update the backend set; a second change meanwhile is refused.
	upd, err := c.UpdateBackendSet(ctx(t), loadbalancer.UpdateBackendSetRequest{
		LoadBalancerId: common.String(lbID), BackendSetName: common.String("TCP-80"),
		UpdateBackendSetDetails: loadbalancer.UpdateBackendSetDetails{
			Policy:        common.String("LEAST_CONNECTIONS"),
			HealthChecker: &loadbalancer.HealthCheckerDetails{Protocol: common.String("TCP"), Port: common.Int(30080)},
			Backends: []loadbalancer.BackendDetails{
				{IpAddress: common.String("10.0.0.5"), Port: common.Int(30080)},
				{IpAddress: common.String("10.0.0.6"), Port: common.Int(30080), Weight: common.Int(3)},
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	idle, err := c.UpdateListener(ctx(t), loadbalancer.UpdateListenerRequest{LoadBalancerId: common.String(lbID), ListenerName: common.String("TCP-80"),
		UpdateListenerDetails: loadbalancer.UpdateListenerDetails{DefaultBackendSetName: common.String("TCP-80"), Port: common.Int(80), Protocol: common.String("TCP"),
			ConnectionConfiguration: &loadbalancer.ConnectionConfiguration{IdleTimeout: common.Int64(120)}}})
	if err != nil {
		t.Fatalf("a second change is queued, not refused: %v", err)
	}
	first, second := waitLBWorkRequest(t, c, *upd.OpcWorkRequestId), waitLBWorkRequest(t, c, *idle.OpcWorkRequestId)
	if second.LifecycleState != loadbalancer.WorkRequestLifecycleStateSucceeded || second.TimeFinished.Before(first.TimeFinished.Time) {
		t.Fatalf("queued work request: %+v after %+v", second, first)
	}
	if l, err := c.GetLoadBalancer(ctx(t), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: common.String(lbID)}); err != nil ||
		*l.Listeners["TCP-80"].ConnectionConfiguration.IdleTimeout != 120 || l.FreeformTags["queued"] != "yes" {
		t.Fatalf("after the queued changes: %+v %v", l.LoadBalancer, err)
	}
	bs, err := c.GetBackendSet(ctx(t), loadbalancer.GetBackendSetRequest{LoadBalancerId: common.String(lbID), BackendSetName: common.String("TCP-80")})
	if err != nil || len(bs.Backends) != 2 || *bs.Policy != "LEAST_CONNECTIONS" || *bs.Backends[1].Weight != 3 {
		t.Fatalf("backend set: %+v %v", bs.BackendSet, err)
	}

	// Invalid changes are refused at once, before any work request.
	_, err = c.CreateListener(ctx(t), loadbalancer.CreateListenerRequest{LoadBalancerId: common.String(lbID), CreateListenerDetails: loadbalancer.CreateListenerDetails{
		Name: common.String("TCP-8080"), DefaultBackendSetName: common.String("TCP-80"), Port: common.Int(80), Protocol: common.String("TCP"),
	}})
	wantErr(t, err, 400, CodeInvalidParameter) // port 80 is taken
	_, err = c.DeleteBackendSet(ctx(t), loadbalancer.DeleteBackendSetRequest{LoadBalancerId: common.String(lbID), BackendSetName: common.String("TCP-80")})
	wantErr(t, err, 400, CodeInvalidParameter) // still the listener's default
	_, err = c.UpdateBackendSet(ctx(t), loadbalancer.UpdateBackendSetRequest{LoadBalancerId: common.String(lbID), BackendSetName: common.String("nope"),
		UpdateBackendSetDetails: loadbalancer.UpdateBackendSetDetails{Policy: common.String("ROUND_ROBIN"), Backends: []loadbalancer.BackendDetails{},
			HealthChecker: &loadbalancer.HealthCheckerDetails{Protocol: common.String("TCP")}}})
	wantErr(t, err, 404, CodeNotAuthorizedOrNotFound)
	_, err = c.CreateBackendSet(ctx(t), loadbalancer.CreateBackendSetRequest{LoadBalancerId: common.String(lbID), IfMatch: common.String("stale"),
		CreateBackendSetDetails: loadbalancer.CreateBackendSetDetails{Name: common.String("x"), Policy: common.String("ROUND_ROBIN"),
			HealthChecker: &loadbalancer.HealthCheckerDetails{Protocol: common.String("TCP")}}})
	wantErr(t, err, http.StatusPreconditionFailed, CodeNoEtagMatch)
	// backendMaxConnections "must be greater or equal to 256" when not 0
	// (CreateBackendSetDetails, UpdateBackendSetDetails): refused, nothing
	// stored, no work request.
	_, err = c.CreateBackendSet(ctx(t), loadbalancer.CreateBackendSetRequest{LoadBalancerId: common.String(lbID),
		CreateBackendSetDetails: loadbalancer.CreateBackendSetDetails{Name: common.String("TCP-81"), Policy: common.String("ROUND_ROBIN"),
			HealthChecker: &loadbalancer.HealthCheckerDetails{Protocol: common.String("TCP")}, BackendMaxConnections: common.Int(100)}})
	wantErr(t, err, 400, CodeInvalidParameter)
	_, err = c.UpdateBackendSet(ctx(t), loadbalancer.UpdateBackendSetRequest{LoadBalancerId: common.String(lbID), BackendSetName: common.String("TCP-80"),
		UpdateBackendSetDetails: loadbalancer.UpdateBackendSetDetails{Policy: common.String("ROUND_ROBIN"), Backends: []loadbalancer.BackendDetails{},
			HealthChecker: &loadbalancer.HealthCheckerDetails{Protocol: common.String("TCP")}, BackendMaxConnections: common.Int(100)}})
	wantErr(t, err, 400, CodeInvalidParameter)

	wrs, err := c.ListWorkRequests(ctx(t), loadbalancer.ListWorkRequestsRequest{LoadBalancerId: common.String(lbID)})
	if err != nil || len(wrs.Items) != 4 || *wrs.Items[0].Type != "UpdateListener" || *wrs.Items[1].Type != "UpdateBackendSet" ||
		*wrs.Items[2].Type != "UpdateLoadBalancer" || *wrs.Items[3].Type != "CreateLoadBalancer" {
		t.Fatalf("work requests: %v %v", wrs.Items, err)
	}

	del, err := c.DeleteLoadBalancer(ctx(t), loadbalancer.DeleteLoadBalancerRequest{LoadBalancerId: common.String(lbID)})
	if err != nil {
		t.Fatal(err)
	}
	got, err = c.GetLoadBalancer(ctx(t), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: common.String(lbID)})
	if err != nil || got.LifecycleState != loadbalancer.LoadBalancerLifecycleStateDeleting {
		t.Fatalf("deleting: %v %v", got.LifecycleState, err)
	}
	waitLBWorkRequest(t, c, *del.OpcWorkRequestId)
	got, err = c.GetLoadBalancer(ctx(t), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: common.String(lbID)})
	if err != nil || got.LifecycleState != loadbalancer.LoadBalancerLifecycleStateDeleted {
		t.Fatalf("deleted: %v %v", got.LifecycleState, err)
	}
	// The token's load balancer is gone: the token is spent.
	_, err = c.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{
		CreateLoadBalancerDetails: lbDetails("svc-uid-1", "10.0.0.5"), OpcRetryToken: common.String("svc-uid-1"),
	})
	wantErr(t, err, http.StatusConflict, CodeInvalidatedRetryToken)

	calls := e.core.Calls()
	if calls["oci:CreateLoadBalancer"]["OK"] != 2 || calls["oci:UpdateLoadBalancer"]["OK"] != 1 || calls["oci:UpdateListener"]["OK"] != 1 {
		t.Fatalf("calls: %v", calls)
	}
}

func TestCreateLoadBalancerValidation(t *testing.T) {
	e := newTestEnv(t, Options{}, core.Config{})
	c := e.lb()
	tests := []struct {
		name   string
		edit   func(d *loadbalancer.CreateLoadBalancerDetails)
		status int
		code   string
	}{
		// CreateLoadBalancerDetails.ShapeName: "After May 2023, Fixed shapes -
		// 10Mbps, 100Mbps, 400Mbps, 8000Mbps would be deprecated and only
		// shape allowed would be `Flexible`" (cloudsim plays a newer tenancy).
		{"fixed shape", func(d *loadbalancer.CreateLoadBalancerDetails) {
			d.ShapeName, d.ShapeDetails = common.String("100Mbps"), nil
		}, 400, CodeInvalidParameter},
		{"unknown shape", func(d *loadbalancer.CreateLoadBalancerDetails) { d.ShapeName = common.String("huge") }, 400, CodeInvalidParameter},
		{"flexible without details", func(d *loadbalancer.CreateLoadBalancerDetails) { d.ShapeDetails = nil }, 400, CodeInvalidParameter},
		{"min above max", func(d *loadbalancer.CreateLoadBalancerDetails) {
			d.ShapeDetails = &loadbalancer.ShapeDetails{MinimumBandwidthInMbps: common.Int(200), MaximumBandwidthInMbps: common.Int(100)}
		}, 400, CodeInvalidParameter},
		{"no subnets", func(d *loadbalancer.CreateLoadBalancerDetails) { d.SubnetIds = []string{} }, 400, CodeMissingParameter},
		{"unknown subnet", func(d *loadbalancer.CreateLoadBalancerDetails) {
			d.SubnetIds = []string{"ocid1.subnet.oc1..aaaaaaaanope"}
		}, 400, CodeRelatedResourceNotFound},
		{"private with two subnets", func(d *loadbalancer.CreateLoadBalancerDetails) {
			d.IsPrivate, d.SubnetIds = common.Bool(true), []string{DefaultSubnetID, DefaultSubnetID}
		}, 400, CodeInvalidParameter},
		{"unknown compartment", func(d *loadbalancer.CreateLoadBalancerDetails) {
			d.CompartmentId = common.String("ocid1.compartment.oc1..aaaaaaaanope")
		}, 404, CodeNotAuthorizedOrNotFound},
		{"listener without its backend set", func(d *loadbalancer.CreateLoadBalancerDetails) {
			l := d.Listeners["TCP-80"]
			l.DefaultBackendSetName = common.String("UDP-53")
			d.Listeners["TCP-80"] = l
		}, 400, CodeInvalidParameter},
		{"bad backend ip", func(d *loadbalancer.CreateLoadBalancerDetails) {
			bs := d.BackendSets["TCP-80"]
			bs.Backends = []loadbalancer.BackendDetails{{IpAddress: common.String("node-1"), Port: common.Int(1)}}
			d.BackendSets["TCP-80"] = bs
		}, 400, CodeInvalidParameter},
		{"http check without path", func(d *loadbalancer.CreateLoadBalancerDetails) {
			bs := d.BackendSets["TCP-80"]
			bs.HealthChecker = &loadbalancer.HealthCheckerDetails{Protocol: common.String("HTTP")}
			d.BackendSets["TCP-80"] = bs
		}, 400, CodeInvalidParameter},
		// CreateBackendSetDetails.BackendMaxConnections: "If setting
		// backendMaxConnections to some value other than 0 then that value
		// must be greater or equal to 256"; the same for a backend's
		// maxConnections (oci-go-sdk v65.130.0 loadbalancer/
		// create_backend_set_details.go, backend_details.go; issue 32 item 4).
		{"backendMaxConnections below 256", func(d *loadbalancer.CreateLoadBalancerDetails) {
			bs := d.BackendSets["TCP-80"]
			bs.BackendMaxConnections = common.Int(100)
			d.BackendSets["TCP-80"] = bs
		}, 400, CodeInvalidParameter},
		{"backend maxConnections below 256", func(d *loadbalancer.CreateLoadBalancerDetails) {
			bs := d.BackendSets["TCP-80"]
			bs.Backends[0].MaxConnections = common.Int(255)
			d.BackendSets["TCP-80"] = bs
		}, 400, CodeInvalidParameter},
		{"backendMaxConnections 0 (unlimited) and 256", func(d *loadbalancer.CreateLoadBalancerDetails) {
			bs := d.BackendSets["TCP-80"]
			bs.BackendMaxConnections = common.Int(0)
			bs.Backends[0].MaxConnections = common.Int(256)
			d.BackendSets["TCP-80"] = bs
		}, 0, ""},
		{"unknown reserved ip", func(d *loadbalancer.CreateLoadBalancerDetails) {
			d.ReservedIps = []loadbalancer.ReservedIp{{Id: common.String("ocid1.publicip.oc1..x")}}
		}, 400, CodeRelatedResourceNotFound},
		{"two reserved ips", func(d *loadbalancer.CreateLoadBalancerDetails) {
			d.ReservedIps = []loadbalancer.ReservedIp{{Id: common.String("ocid1.publicip.oc1..x")}, {Id: common.String("ocid1.publicip.oc1..y")}}
		}, 400, CodeInvalidParameter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := lbDetails("v", "10.0.0.5")
			tt.edit(&d)
			_, err := c.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: d})
			if tt.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantErr(t, err, tt.status, tt.code)
		})
	}
}

func TestWorkRequestFailure(t *testing.T) {
	e := newTestEnv(t, Options{WorkRequestLatency: 50 * time.Millisecond}, core.Config{})
	e.core.SetFault(core.Fault{Action: "oci:CreateLoadBalancer", ErrorRate: 1, FailTask: true})
	c := e.lb()
	token := common.String("doomed-token")
	created, err := c.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: lbDetails("doomed"), OpcRetryToken: token})
	if err != nil {
		t.Fatal(err)
	}
	wr := waitLBWorkRequest(t, c, *created.OpcWorkRequestId)
	if wr.LifecycleState != loadbalancer.WorkRequestLifecycleStateFailed || len(wr.ErrorDetails) != 1 {
		t.Fatalf("work request: %+v", wr)
	}
	// The same opc-retry-token replays the first answer, the FAILED work
	// request: a retry within 24 hours returns what the first call did
	// (CreateNetworkLoadBalancerRequest.OpcRetryToken: "retried in case of
	// a timeout or server error without risk of rerunning that same
	// action"), so a new attempt needs a new token.
	e.core.ClearFaults()
	again, err := c.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: lbDetails("doomed"), OpcRetryToken: token})
	if err != nil || *again.OpcWorkRequestId != *created.OpcWorkRequestId {
		t.Fatalf("retry with the same token: %v %v, want the FAILED work request %s", again.OpcWorkRequestId, err, *created.OpcWorkRequestId)
	}
	got, err := c.GetLoadBalancer(ctx(t), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: wr.LoadBalancerId})
	if err != nil || got.LifecycleState != loadbalancer.LoadBalancerLifecycleStateFailed {
		t.Fatalf("LB: %v %v", got.LifecycleState, err)
	}
	// A FAILED load balancer can be deleted, and nothing else.
	_, err = c.CreateListener(ctx(t), loadbalancer.CreateListenerRequest{LoadBalancerId: wr.LoadBalancerId, CreateListenerDetails: loadbalancer.CreateListenerDetails{
		Name: common.String("x"), DefaultBackendSetName: common.String("TCP-80"), Port: common.Int(81), Protocol: common.String("TCP")}})
	wantErr(t, err, http.StatusConflict, CodeIncorrectState)
	del, err := c.DeleteLoadBalancer(ctx(t), loadbalancer.DeleteLoadBalancerRequest{LoadBalancerId: wr.LoadBalancerId})
	if err != nil {
		t.Fatal(err)
	}
	if wr := waitLBWorkRequest(t, c, *del.OpcWorkRequestId); wr.LifecycleState != loadbalancer.WorkRequestLifecycleStateSucceeded {
		t.Fatalf("delete: %s", wr.LifecycleState)
	}
	// Its load balancer deleted, the token is invalidated ("if a resource
	// has been deleted and purged from the system, then a retry of the
	// original creation request might be rejected").
	_, err = c.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: lbDetails("doomed"), OpcRetryToken: token})
	wantErr(t, err, http.StatusConflict, CodeInvalidatedRetryToken)
}

func TestRunningPhase(t *testing.T) {
	tests := []struct {
		elapsed, latency time.Duration
		state            string
		minPct, maxPct   float32
	}{
		{0, time.Second, wrAccepted, 0, 0},
		{200 * time.Millisecond, time.Second, wrAccepted, 0, 0},
		{300 * time.Millisecond, time.Second, wrInProgress, 29, 31},
		{2 * time.Second, time.Second, wrInProgress, 99, 99},
		{0, 0, wrInProgress, 99, 99},
	}
	for _, tt := range tests {
		state, pct := runningPhase(tt.elapsed, tt.latency)
		if state != tt.state || pct < tt.minPct || pct > tt.maxPct {
			t.Errorf("runningPhase(%s, %s) = %s %.1f, want %s %.0f..%.0f", tt.elapsed, tt.latency, state, pct, tt.state, tt.minPct, tt.maxPct)
		}
	}
}

// A tenancy older than May 2023 (Options.FixedShapes) may still create the
// fixed shapes; a newer one (the default) only "flexible", and ListShapes
// says which (CreateLoadBalancerDetails.ShapeName: "After May 2023, Fixed
// shapes - 10Mbps, 100Mbps, 400Mbps, 8000Mbps would be deprecated and only
// shape allowed would be `Flexible`").
func TestFixedShapes(t *testing.T) {
	for _, old := range []bool{false, true} {
		e := newTestEnv(t, Options{FixedShapes: old, WorkRequestLatency: -1}, core.Config{})
		c := e.lb()
		shapes, err := c.ListShapes(ctx(t), loadbalancer.ListShapesRequest{CompartmentId: common.String(DefaultCompartmentID)})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range shapes.Items {
			names = append(names, *s.Name)
		}
		for _, shape := range []string{"10Mbps", "100Mbps", "400Mbps", "8000Mbps"} {
			d := lbDetails("fixed-"+shape, "10.0.0.5")
			d.ShapeName, d.ShapeDetails = common.String(shape), nil
			_, err := c.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: d})
			switch {
			case old && err != nil:
				t.Errorf("older tenancy, %s: %v", shape, err)
			case !old:
				wantErr(t, err, 400, CodeInvalidParameter)
			}
			if listed := slices.Contains(names, shape); listed != old {
				t.Errorf("fixed shapes allowed %v: ListShapes %v", old, names)
			}
		}
		if !slices.Contains(names, ShapeFlexible) {
			t.Errorf("ListShapes %v: no flexible", names)
		}
	}
}
