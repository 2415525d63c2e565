package oci

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	nlb "github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// Why a work request failed. Network Load Balancing lists it through
// ListWorkRequestErrors (networkloadbalancer/work_request_error.go: "A
// machine-usable code for the error that occured", "A human-readable error
// string"); Load Balancing has no such operation and carries errorDetails
// in the work request (loadbalancer/work_request_error.go, errorCode
// BAD_INPUT or INTERNAL_ERROR).
func TestWorkRequestErrors(t *testing.T) {
	e := newTestEnv(t, Options{WorkRequestLatency: 50 * time.Millisecond}, core.Config{})
	t.Run("nlb", func(t *testing.T) {
		c := e.nlb()
		created, err := c.CreateNetworkLoadBalancer(ctx(t), nlb.CreateNetworkLoadBalancerRequest{CreateNetworkLoadBalancerDetails: nlbDetails("wr-errors")})
		if err != nil {
			t.Fatal(err)
		}
		waitNLBWorkRequest(t, c, *created.OpcWorkRequestId)
		e.core.SetFault(core.Fault{Action: "oci:nlb:CreateBackendSet", ErrorRate: 1, FailTask: true, ErrorCode: "InternalServerError"})
		defer e.core.ClearFaults()
		bs, err := c.CreateBackendSet(ctx(t), nlb.CreateBackendSetRequest{NetworkLoadBalancerId: created.Id, CreateBackendSetDetails: nlb.CreateBackendSetDetails{
			Name: common.String("TCP-81"), Policy: nlb.NetworkLoadBalancingPolicyFiveTuple,
			HealthChecker: &nlb.HealthCheckerDetails{Protocol: nlb.HealthCheckProtocolsTcp, Port: common.Int(30081)}}})
		if err != nil {
			t.Fatal(err)
		}
		if wr := waitNLBWorkRequest(t, c, *bs.OpcWorkRequestId); wr.Status != nlb.OperationStatusFailed {
			t.Fatalf("work request %s", wr.Status)
		}
		errs, err := c.ListWorkRequestErrors(ctx(t), nlb.ListWorkRequestErrorsRequest{WorkRequestId: bs.OpcWorkRequestId, CompartmentId: common.String(DefaultCompartmentID)})
		if err != nil || len(errs.Items) != 1 {
			t.Fatalf("errors: %+v %v", errs.Items, err)
		}
		got := errs.Items[0]
		if *got.Code != CodeInternalServerError || got.Timestamp == nil ||
			!strings.HasPrefix(*got.Message, "CREATE_BACKENDSET of networkloadbalancer "+*created.Id+" failed: ") {
			t.Errorf("error: %+v", got)
		}
	})
	t.Run("lb, and a queued change that no longer applies", func(t *testing.T) {
		// The update must reach cloudsim while the create still runs: on a
		// loaded machine (-race, two cores) 50 ms was not always enough.
		e := newTestEnv(t, Options{WorkRequestLatency: time.Second}, core.Config{})
		c := e.lb()
		created, err := c.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: lbDetails("wr-errors")})
		if err != nil {
			t.Fatal(err)
		}
		first, err := c.GetWorkRequest(ctx(t), loadbalancer.GetWorkRequestRequest{WorkRequestId: created.OpcWorkRequestId})
		if err != nil {
			t.Fatal(err)
		}
		lbID := *first.LoadBalancerId
		// Queued behind the create, and by its turn its backend set is
		// still missing: the work request fails with BAD_INPUT.
		upd, err := c.UpdateBackendSet(ctx(t), loadbalancer.UpdateBackendSetRequest{LoadBalancerId: common.String(lbID), BackendSetName: common.String("TCP-99"),
			UpdateBackendSetDetails: loadbalancer.UpdateBackendSetDetails{Policy: common.String("ROUND_ROBIN"), Backends: []loadbalancer.BackendDetails{},
				HealthChecker: &loadbalancer.HealthCheckerDetails{Protocol: common.String("TCP"), Port: common.Int(1)}}})
		if err != nil {
			t.Fatalf("a change queued behind the create: %v", err)
		}
		e.lbIDOf(t, *created.OpcWorkRequestId)
		wr := waitLBWorkRequest(t, c, *upd.OpcWorkRequestId)
		if wr.LifecycleState != loadbalancer.WorkRequestLifecycleStateFailed || len(wr.ErrorDetails) != 1 ||
			wr.ErrorDetails[0].ErrorCode != loadbalancer.WorkRequestErrorErrorCodeBadInput ||
			!strings.Contains(*wr.ErrorDetails[0].Message, "UpdateBackendSet of loadbalancer "+lbID+" failed: ") ||
			!strings.Contains(*wr.ErrorDetails[0].Message, "TCP-99") {
			t.Fatalf("queued work request: %+v", wr)
		}
		// While it is not queued, the same mistake is an answer at once.
		_, err = c.UpdateBackendSet(ctx(t), loadbalancer.UpdateBackendSetRequest{LoadBalancerId: common.String(lbID), BackendSetName: common.String("TCP-99"),
			UpdateBackendSetDetails: loadbalancer.UpdateBackendSetDetails{Policy: common.String("ROUND_ROBIN"), Backends: []loadbalancer.BackendDetails{},
				HealthChecker: &loadbalancer.HealthCheckerDetails{Protocol: common.String("TCP"), Port: common.Int(1)}}})
		wantErr(t, err, http.StatusNotFound, CodeNotAuthorizedOrNotFound)
	})
}

// Load Balancing queues: three changes sent at once all succeed, one after
// the other, in the order they were made.
func TestLoadBalancerQueuesWorkRequests(t *testing.T) {
	e := newTestEnv(t, Options{WorkRequestLatency: 100 * time.Millisecond}, core.Config{})
	c := e.lb()
	created, err := c.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: lbDetails("queue")})
	if err != nil {
		t.Fatal(err)
	}
	lbID := e.lbIDOf(t, *created.OpcWorkRequestId)
	waitLBWorkRequest(t, c, *created.OpcWorkRequestId)
	var ids []string
	for _, port := range []int{81, 82, 83} {
		name := "TCP-" + string(rune('0'+port/10)) + string(rune('0'+port%10))
		resp, err := c.CreateListener(ctx(t), loadbalancer.CreateListenerRequest{LoadBalancerId: common.String(lbID), CreateListenerDetails: loadbalancer.CreateListenerDetails{
			Name: common.String(name), DefaultBackendSetName: common.String("TCP-80"), Port: common.Int(port), Protocol: common.String("TCP")}})
		if err != nil {
			t.Fatalf("listener %d: %v", port, err)
		}
		ids = append(ids, *resp.OpcWorkRequestId)
	}
	var last time.Time
	for i, id := range ids {
		wr := waitLBWorkRequest(t, c, id)
		if wr.LifecycleState != loadbalancer.WorkRequestLifecycleStateSucceeded || !wr.TimeFinished.After(last) {
			t.Fatalf("work request %d: %+v (previous finished %s)", i, wr, last)
		}
		last = wr.TimeFinished.Time
	}
	got, err := c.GetLoadBalancer(ctx(t), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: common.String(lbID)})
	if err != nil || len(got.Listeners) != 4 {
		t.Fatalf("listeners: %v %v", got.Listeners, err)
	}
}
