package oci

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	nlb "github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

func nlbDetails(name string, backends ...nlb.Backend) nlb.CreateNetworkLoadBalancerDetails {
	return nlb.CreateNetworkLoadBalancerDetails{
		CompartmentId: common.String(DefaultCompartmentID),
		DisplayName:   common.String(name),
		SubnetId:      common.String(DefaultSubnetID),
		BackendSets: map[string]nlb.BackendSetDetails{"TCP-80": {
			Policy:        nlb.NetworkLoadBalancingPolicyFiveTuple,
			HealthChecker: &nlb.HealthChecker{Protocol: nlb.HealthCheckProtocolsTcp, Port: common.Int(30080)},
			Backends:      backends,
		}},
		Listeners: map[string]nlb.ListenerDetails{"TCP-80": {
			Name: common.String("TCP-80"), DefaultBackendSetName: common.String("TCP-80"), Port: common.Int(80), Protocol: nlb.ListenerProtocolsTcp,
		}},
	}
}

func waitNLBWorkRequest(t *testing.T, c nlb.NetworkLoadBalancerClient, id string) nlb.WorkRequest {
	t.Helper()
	var wr nlb.WorkRequest
	eventually(t, 10*time.Second, func() error {
		resp, err := c.GetWorkRequest(ctx(t), nlb.GetWorkRequestRequest{WorkRequestId: common.String(id)})
		if err != nil {
			return err
		}
		wr = resp.WorkRequest
		if wr.Status == nlb.OperationStatusSucceeded || wr.Status == nlb.OperationStatusFailed {
			return nil
		}
		return errorf("work request %s is %s", id, wr.Status)
	})
	return wr
}

func TestNetworkLoadBalancer(t *testing.T) {
	e := newTestEnv(t, Options{WorkRequestLatency: 600 * time.Millisecond}, core.Config{})
	node := e.addInstances(core.Instance{Name: "node-1", PrivateIP: "10.0.0.7"})[0]
	c := e.nlb()
	created, err := c.CreateNetworkLoadBalancer(ctx(t), nlb.CreateNetworkLoadBalancerRequest{
		CreateNetworkLoadBalancerDetails: nlbDetails("svc-uid-2",
			nlb.Backend{IpAddress: common.String("10.0.0.5"), Port: common.Int(30080)},
			nlb.Backend{TargetId: common.String(node.OCID), Port: common.Int(30080)}),
		OpcRetryToken: common.String("svc-uid-2"),
	})
	if err != nil {
		t.Fatal(err)
	}
	id := *created.Id
	if created.LifecycleState != nlb.LifecycleStateCreating || created.Etag == nil || created.OpcWorkRequestId == nil {
		t.Fatalf("create answered %+v", created)
	}
	wr, err := c.GetWorkRequest(ctx(t), nlb.GetWorkRequestRequest{WorkRequestId: created.OpcWorkRequestId})
	if err != nil {
		t.Fatal(err)
	}
	if wr.OperationType != nlb.OperationTypeCreateNetworkLoadBalancer || len(wr.Resources) != 1 || *wr.Resources[0].Identifier != id ||
		(wr.Status != nlb.OperationStatusAccepted && wr.Status != nlb.OperationStatusInProgress) || *wr.PercentComplete >= 100 {
		t.Fatalf("fresh work request: %+v", wr.WorkRequest)
	}
	done := waitNLBWorkRequest(t, c, *created.OpcWorkRequestId)
	if done.Status != nlb.OperationStatusSucceeded || *done.PercentComplete != 100 || done.Resources[0].ActionType != nlb.ActionTypeCreated {
		t.Fatalf("done: %+v", done)
	}
	got, err := c.GetNetworkLoadBalancer(ctx(t), nlb.GetNetworkLoadBalancerRequest{NetworkLoadBalancerId: common.String(id)})
	if err != nil {
		t.Fatal(err)
	}
	backends := got.BackendSets["TCP-80"].Backends
	// A public NLB lists its private address too (IsPublic false): OKE,
	// "Configuring Load Balancers and Network Load Balancers": "by default, the kubectl get
	// service command returns both the network load balancer's public IP
	// address and its private IP address"; networkloadbalancer/ip_address.go
	// IsPublic: "If "false", then the IP address is private".
	if len(got.IpAddresses) != 2 || *got.IpAddresses[0].IsPublic || !*got.IpAddresses[1].IsPublic ||
		!strings.HasPrefix(*got.IpAddresses[0].IpAddress, "10.0.") {
		t.Fatalf("addresses of a public NLB: %+v", got.IpAddresses)
	}
	if got.LifecycleState != nlb.LifecycleStateActive || len(backends) != 2 ||
		*backends[1].Name != node.OCID+":30080" || !*got.BackendSets["TCP-80"].IsPreserveSource {
		t.Fatalf("active NLB: %+v", got.NetworkLoadBalancer)
	}

	// A partial update: only the backends change; UPDATING meanwhile, and
	// a second change is refused.
	upd, err := c.UpdateBackendSet(ctx(t), nlb.UpdateBackendSetRequest{
		NetworkLoadBalancerId: common.String(id), BackendSetName: common.String("TCP-80"), IfMatch: got.Etag,
		UpdateBackendSetDetails: nlb.UpdateBackendSetDetails{Backends: []nlb.BackendDetails{{IpAddress: common.String("10.0.0.9"), Port: common.Int(30080)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	mid, err := c.GetNetworkLoadBalancer(ctx(t), nlb.GetNetworkLoadBalancerRequest{NetworkLoadBalancerId: common.String(id)})
	if err != nil || mid.LifecycleState != nlb.LifecycleStateUpdating {
		t.Fatalf("during the update: %v %v", mid.LifecycleState, err)
	}
	// Issue 11 item 11 (../shared/reference/oci-api.md, "NLB busy"): 409
	// Conflict "Invalid State Transition of NLB lifeCycle state from
	// Updating to Updating"; the NLB does not queue.
	_, err = c.DeleteListener(ctx(t), nlb.DeleteListenerRequest{NetworkLoadBalancerId: common.String(id), ListenerName: common.String("TCP-80")})
	wantErr(t, err, http.StatusConflict, CodeConflict)
	if msg := err.(common.ServiceError).GetMessage(); msg != "Invalid State Transition of NLB lifeCycle state from Updating to Updating" {
		t.Errorf("busy message = %q", msg)
	}
	waitNLBWorkRequest(t, c, *upd.OpcWorkRequestId)
	bs, err := c.GetBackendSet(ctx(t), nlb.GetBackendSetRequest{NetworkLoadBalancerId: common.String(id), BackendSetName: common.String("TCP-80")})
	if err != nil || len(bs.Backends) != 1 || *bs.Backends[0].Name != "10.0.0.9:30080" || bs.HealthChecker.Protocol != nlb.HealthCheckProtocolsTcp {
		t.Fatalf("backend set after update: %+v %v", bs.BackendSet, err)
	}

	// Listeners on TCP and UDP may share a port; TCP_AND_UDP takes both.
	lst, err := c.CreateListener(ctx(t), nlb.CreateListenerRequest{NetworkLoadBalancerId: common.String(id), CreateListenerDetails: nlb.CreateListenerDetails{
		Name: common.String("UDP-80"), DefaultBackendSetName: common.String("TCP-80"), Port: common.Int(80), Protocol: nlb.ListenerProtocolsUdp}})
	if err != nil {
		t.Fatal(err)
	}
	waitNLBWorkRequest(t, c, *lst.OpcWorkRequestId)
	_, err = c.CreateListener(ctx(t), nlb.CreateListenerRequest{NetworkLoadBalancerId: common.String(id), CreateListenerDetails: nlb.CreateListenerDetails{
		Name: common.String("BOTH-80"), DefaultBackendSetName: common.String("TCP-80"), Port: common.Int(80), Protocol: nlb.ListenerProtocolsTcpAndUdp}})
	wantErr(t, err, 400, CodeInvalidParameter)

	list, err := c.ListNetworkLoadBalancers(ctx(t), nlb.ListNetworkLoadBalancersRequest{CompartmentId: common.String(DefaultCompartmentID), DisplayName: common.String("svc-uid-2")})
	if err != nil || len(list.Items) != 1 || len(list.Items[0].Listeners) != 2 {
		t.Fatalf("list: %+v %v", list.Items, err)
	}
	wrs, err := c.ListWorkRequests(ctx(t), nlb.ListWorkRequestsRequest{CompartmentId: common.String(DefaultCompartmentID)})
	if err != nil || len(wrs.Items) != 3 {
		t.Fatalf("work requests: %d %v", len(wrs.Items), err)
	}

	del, err := c.DeleteNetworkLoadBalancer(ctx(t), nlb.DeleteNetworkLoadBalancerRequest{NetworkLoadBalancerId: common.String(id)})
	if err != nil {
		t.Fatal(err)
	}
	if wr := waitNLBWorkRequest(t, c, *del.OpcWorkRequestId); wr.Resources[0].ActionType != nlb.ActionTypeDeleted {
		t.Fatalf("delete: %+v", wr)
	}
	// The action names are apart from Load Balancing's.
	if calls := e.core.Calls(); calls["oci:nlb:CreateNetworkLoadBalancer"]["OK"] != 1 || calls["oci:nlb:DeleteListener"][CodeConflict] != 1 {
		t.Fatalf("calls: %v", calls)
	}
}

func TestNetworkLoadBalancerValidation(t *testing.T) {
	e := newTestEnv(t, Options{}, core.Config{})
	c := e.nlb()
	tests := []struct {
		name     string
		backends []nlb.Backend
		edit     func(d *nlb.CreateNetworkLoadBalancerDetails)
		code     string
	}{
		{"ok", []nlb.Backend{{IpAddress: common.String("10.0.0.5"), Port: common.Int(1)}}, nil, ""},
		{"unknown target", []nlb.Backend{{TargetId: common.String(core.NewOCID("instance")), Port: common.Int(1)}}, nil, CodeRelatedResourceNotFound},
		{"neither ip nor target", []nlb.Backend{{Port: common.Int(1)}}, nil, CodeMissingParameter},
		{"listener name is not the key", nil, func(d *nlb.CreateNetworkLoadBalancerDetails) {
			l := d.Listeners["TCP-80"]
			l.Name = common.String("other")
			d.Listeners["TCP-80"] = l
		}, CodeInvalidParameter},
		{"bad protocol", nil, func(d *nlb.CreateNetworkLoadBalancerDetails) {
			l := d.Listeners["TCP-80"]
			l.Protocol = "HTTP"
			d.Listeners["TCP-80"] = l
		}, CodeInvalidParameter},
		// BackendSetDetails.IsPreserveSource: "If the isPreserveSourceDestination
		// parameter is enabled for the network load balancer resource, then
		// this parameter cannot be disabled" (issue 32 item 5).
		{"isPreserveSource off with isPreserveSourceDestination", nil, func(d *nlb.CreateNetworkLoadBalancerDetails) {
			d.IsPreserveSourceDestination = common.Bool(true)
			bs := d.BackendSets["TCP-80"]
			bs.IsPreserveSource = common.Bool(false)
			d.BackendSets["TCP-80"] = bs
		}, CodeInvalidParameter},
		{"isPreserveSource default with isPreserveSourceDestination", nil, func(d *nlb.CreateNetworkLoadBalancerDetails) {
			d.IsPreserveSourceDestination = common.Bool(true)
		}, ""},
		{"isPreserveSource off alone", nil, func(d *nlb.CreateNetworkLoadBalancerDetails) {
			bs := d.BackendSets["TCP-80"]
			bs.IsPreserveSource = common.Bool(false)
			d.BackendSets["TCP-80"] = bs
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := nlbDetails("v", tt.backends...)
			if tt.edit != nil {
				tt.edit(&d)
			}
			_, err := c.CreateNetworkLoadBalancer(ctx(t), nlb.CreateNetworkLoadBalancerRequest{CreateNetworkLoadBalancerDetails: d})
			if tt.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantErr(t, err, 400, tt.code)
		})
	}
}

// TestNLBPreserveSourceDestination: on a network load balancer with
// isPreserveSourceDestination, no backend set may turn isPreserveSource off
// ("cannot be disabled", networkloadbalancer CreateBackendSetDetails and
// UpdateBackendSetDetails.IsPreserveSource; issue 32 item 5): the call is
// refused, nothing is stored.
func TestNLBPreserveSourceDestination(t *testing.T) {
	e := newTestEnv(t, Options{WorkRequestLatency: -1}, core.Config{})
	c := e.nlb()
	d := nlbDetails("psd")
	d.IsPreserveSourceDestination = common.Bool(true)
	created, err := c.CreateNetworkLoadBalancer(ctx(t), nlb.CreateNetworkLoadBalancerRequest{CreateNetworkLoadBalancerDetails: d})
	if err != nil {
		t.Fatal(err)
	}
	waitNLBWorkRequest(t, c, *created.OpcWorkRequestId)
	id := created.Id
	_, err = c.CreateBackendSet(ctx(t), nlb.CreateBackendSetRequest{NetworkLoadBalancerId: id, CreateBackendSetDetails: nlb.CreateBackendSetDetails{
		Name: common.String("TCP-81"), Policy: nlb.NetworkLoadBalancingPolicyFiveTuple, IsPreserveSource: common.Bool(false),
		HealthChecker: &nlb.HealthCheckerDetails{Protocol: nlb.HealthCheckProtocolsTcp, Port: common.Int(30081)}, Backends: []nlb.BackendDetails{}}})
	wantErr(t, err, http.StatusBadRequest, CodeInvalidParameter)
	_, err = c.UpdateBackendSet(ctx(t), nlb.UpdateBackendSetRequest{NetworkLoadBalancerId: id, BackendSetName: common.String("TCP-80"),
		UpdateBackendSetDetails: nlb.UpdateBackendSetDetails{IsPreserveSource: common.Bool(false)}})
	wantErr(t, err, http.StatusBadRequest, CodeInvalidParameter)
	bs, err := c.GetBackendSet(ctx(t), nlb.GetBackendSetRequest{NetworkLoadBalancerId: id, BackendSetName: common.String("TCP-80")})
	if err != nil || bs.IsPreserveSource == nil || !*bs.IsPreserveSource {
		t.Fatalf("backend set after the refused update: %+v %v", bs.BackendSet, err)
	}
	if _, err := c.GetBackendSet(ctx(t), nlb.GetBackendSetRequest{NetworkLoadBalancerId: id, BackendSetName: common.String("TCP-81")}); err == nil {
		t.Fatal("the refused backend set was created")
	}
}
