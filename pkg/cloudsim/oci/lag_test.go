package oci

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	nlb "github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// With the read lag, a new instance and a new NLB are absent from Get and
// List (404 by id) until their writes are due, while writes act on them at
// once; a deletion is seen at once.
func TestReadLag(t *testing.T) {
	const lag = 800 * time.Millisecond
	e := newTestEnv(t, Options{}, core.Config{ReadLag: lag})
	in := e.addInstances(core.Instance{Name: "lagging", PrivateIP: "10.0.0.7"})[0]
	start := time.Now()
	comp := e.compute()
	get := func() error {
		_, err := comp.GetInstance(ctx(t), ocicore.GetInstanceRequest{InstanceId: common.String(in.OCID)})
		return err
	}
	listed := func() bool {
		resp, err := comp.ListInstances(ctx(t), ocicore.ListInstancesRequest{CompartmentId: common.String(DefaultCompartmentID)})
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range resp.Items {
			if *i.Id == in.OCID {
				return true
			}
		}
		return false
	}
	sawHidden := false
	for time.Since(start) < lag+time.Second {
		err := get()
		if err != nil {
			wantErr(t, err, http.StatusNotFound, CodeNotAuthorizedOrNotFound)
			sawHidden = true
		} else {
			break
		}
		time.Sleep(100 * time.Millisecond) // within GetInstance's rate limit
	}
	if err := get(); err != nil || !listed() {
		t.Fatalf("the instance is not visible %s after it was added: %v, listed %v", time.Since(start), err, listed())
	}
	t.Logf("instance hidden at first: %v (the delay is random within %s)", sawHidden, lag)

	c := e.nlb()
	created, err := c.CreateNetworkLoadBalancer(ctx(t), nlb.CreateNetworkLoadBalancerRequest{
		CreateNetworkLoadBalancerDetails: nlbDetails("lagging-nlb"), OpcRetryToken: common.String("lagging-nlb"),
	})
	if err != nil {
		t.Fatal(err)
	}
	id := *created.Id
	created2 := time.Now()
	eventually(t, lag+2*time.Second, func() error {
		got, err := c.GetNetworkLoadBalancer(ctx(t), nlb.GetNetworkLoadBalancerRequest{NetworkLoadBalancerId: common.String(id)})
		if err != nil {
			return err
		}
		if got.LifecycleState != nlb.LifecycleStateActive {
			return errorf("NLB is %s", got.LifecycleState)
		}
		return nil
	})
	if d := time.Since(created2); d > lag+time.Second {
		t.Errorf("the NLB became visible and ACTIVE only after %s", d)
	}
	// A deletion is seen at once.
	if _, err := c.DeleteNetworkLoadBalancer(ctx(t), nlb.DeleteNetworkLoadBalancerRequest{NetworkLoadBalancerId: common.String(id)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Second, func() error {
		got, err := c.GetNetworkLoadBalancer(ctx(t), nlb.GetNetworkLoadBalancerRequest{NetworkLoadBalancerId: common.String(id)})
		if err == nil && got.LifecycleState != nlb.LifecycleStateDeleted && got.LifecycleState != nlb.LifecycleStateDeleting {
			return errorf("NLB is %s", got.LifecycleState)
		}
		return nil
	})
}

// HoldLoadBalancer: someone else's work request; an NLB refuses changes
// meanwhile with the documented 409 Conflict, and takes them again after.
func TestHoldLoadBalancer(t *testing.T) {
	e := newTestEnv(t, Options{}, core.Config{})
	c := e.nlb()
	created, err := c.CreateNetworkLoadBalancer(ctx(t), nlb.CreateNetworkLoadBalancerRequest{CreateNetworkLoadBalancerDetails: nlbDetails("held")})
	if err != nil {
		t.Fatal(err)
	}
	id := *created.Id
	update := func() error {
		_, err := c.UpdateBackendSet(ctx(t), nlb.UpdateBackendSetRequest{
			NetworkLoadBalancerId: common.String(id), BackendSetName: common.String("TCP-80"),
			UpdateBackendSetDetails: nlb.UpdateBackendSetDetails{Backends: []nlb.BackendDetails{{IpAddress: common.String("10.0.0.9"), Port: common.Int(30080)}}},
		})
		return err
	}
	// The update and a second hold must come while the first holds. On a
	// starved machine they once came after a 500 ms hold ended (CI, under
	// load): then wait the hold out and hold four times longer.
	var wrID string
	var updateErr, secondHoldErr error
	for hold := 500 * time.Millisecond; ; hold *= 4 {
		held := time.Now()
		if wrID, err = e.d.HoldLoadBalancer(id, hold); err != nil {
			t.Fatal(err)
		}
		updateErr = update()
		var secondWR string
		secondWR, secondHoldErr = e.d.HoldLoadBalancer(id, time.Second)
		if time.Since(held) < hold {
			break
		}
		if 4*hold > MaxHold {
			t.Fatalf("an update and a hold took longer than a %v hold", hold)
		}
		waitNLBWorkRequest(t, c, wrID)
		if secondHoldErr == nil {
			waitNLBWorkRequest(t, c, secondWR)
		}
	}
	wantErr(t, updateErr, http.StatusConflict, CodeConflict)
	var se common.ServiceError
	if errors.As(updateErr, &se) && se.GetMessage() != "Invalid State Transition of NLB lifeCycle state from Updating to Updating" {
		t.Errorf("message = %q", se.GetMessage())
	}
	if secondHoldErr == nil {
		t.Error("a second hold of a busy NLB was accepted")
	}
	wr := waitNLBWorkRequest(t, c, wrID)
	if wr.Status != nlb.OperationStatusSucceeded || wr.OperationType != nlb.OperationTypeUpdateNetworkLoadBalancer {
		t.Errorf("hold work request: %s %s", wr.Status, wr.OperationType)
	}
	if err := update(); err != nil {
		t.Errorf("update after the hold: %v", err)
	}
	for _, bad := range []time.Duration{0, MaxHold + time.Second} {
		if _, err := e.d.HoldLoadBalancer(id, bad); err == nil {
			t.Errorf("hold of %v accepted", bad)
		}
	}
	if _, err := e.d.HoldLoadBalancer("ocid1.networkloadbalancer.oc1..nosuch", time.Second); err == nil {
		t.Error("hold of an unknown load balancer accepted")
	}
}
