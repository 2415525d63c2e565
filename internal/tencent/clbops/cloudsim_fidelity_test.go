package clbops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	"k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccm/internal/lb/lbspec"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// The fidelity points of fidelity_test.go, against cloudsim's emulation of
// them over the wire.

func TestHealthCheckNullsAgainstCloudsim(t *testing.T) {
	sim, client := startSimWith(t, func(o *cloudsim.Options) { o.Tencent.CLBNullHealthCheckFields = true })
	ops := simOps(client)
	ctx := context.Background()
	if _, err := sim.AddInstances(cloudsim.Instance{ID: "ins-clbnull1", PrivateIP: "10.0.7.1", VpcID: testVPC}); err != nil {
		t.Fatal(err)
	}
	spec := testSpec(withBackends("ins-clbnull1"), func(s *Desired) {
		s.HealthCheck.Protocol, s.HealthCheck.Port, s.HealthCheck.Path = lbspec.HealthCheckHTTP, 31999, "/healthz"
		s.Listeners = []lbspec.Listener{{Protocol: lbspec.TCP, Port: 80, NodePort: 30080}, {Protocol: lbspec.UDP, Port: 53, NodePort: 30053}}
	})
	if _, err := ops.Ensure(ctx, spec); err != nil {
		t.Fatal(err)
	}
	sim.ResetCalls()
	if _, err := ops.Ensure(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if w := writes(sim.Calls()); len(w) != 0 {
		t.Fatalf("an unchanged resync with null health check fields wrote: %v", w)
	}
	if d, err := ops.Drift(ctx, spec); err != nil || d != nil {
		t.Fatalf("drift = %v, %v", d, err)
	}
}

func TestCreateReplayAgainstCloudsim(t *testing.T) {
	sim, client := startSimWith(t, func(o *cloudsim.Options) { o.Tencent.TaskLatency = 300 * time.Millisecond })
	ops := simOps(client)
	ctx := context.Background()
	spec := testSpec(withBackends(), onlyTCP80)
	// The first create's answer was "lost": the CLB is being created.
	req := clb.NewCreateLoadBalancerRequest()
	req.LoadBalancerType, req.VpcId, req.ClientToken = common.StringPtr("OPEN"), common.StringPtr(testVPC), common.StringPtr(clientToken(spec.UID, 0))
	for k, v := range tags(spec) {
		req.Tags = append(req.Tags, &clb.TagInfo{TagKey: common.StringPtr(k), TagValue: common.StringPtr(v)})
	}
	first, err := client.CreateLoadBalancer(req)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := ops.create(ctx, spec)
	if err != nil || lb == nil || lb.id != *first.Response.LoadBalancerIds[0] {
		t.Fatalf("create after a lost answer = %v, %v", lb, err)
	}
	if lb, err = ops.waitReady(ctx, lb); err != nil || lb.state != lbNormal || len(lb.vips) != 1 {
		t.Fatalf("waitReady = %+v, %v", lb, err)
	}
	calls := sim.Calls()
	if n := len(sim.Tencent().CLB().LoadBalancers()); n != 1 {
		t.Errorf("CLBs = %d, want 1", n)
	}
	if calls["DescribeTaskStatus"]["InvalidParameter"] != 1 {
		t.Errorf("DescribeTaskStatus calls = %v, want one unknown task (the replay's RequestId)", calls["DescribeTaskStatus"])
	}
}

func TestBatchPartialFailureAgainstCloudsim(t *testing.T) {
	sim, client := startSim(t)
	simCLB := sim.Tencent().CLB()
	ops := simOps(client)
	ctx := context.Background()
	for i := range 2 {
		if _, err := sim.AddInstances(cloudsim.Instance{ID: fmt.Sprintf("ins-clbpart%d", i), PrivateIP: fmt.Sprintf("10.0.8.%d", i+1), VpcID: testVPC}); err != nil {
			t.Fatal(err)
		}
	}
	two := func(ids ...string) *Desired {
		return testSpec(withBackends(ids...), func(s *Desired) {
			s.Listeners = []lbspec.Listener{{Protocol: lbspec.TCP, Port: 80, NodePort: 30080}, {Protocol: lbspec.TCP, Port: 81, NodePort: 30081}}
		})
	}
	if _, err := ops.Ensure(ctx, two("ins-clbpart0")); err != nil {
		t.Fatal(err)
	}
	var tcp81 string
	for _, l := range simCLB.LoadBalancers()[0].Listeners {
		if l.Port == 81 {
			tcp81 = l.ID
		}
	}
	if err := simCLB.FailBindings(tencent.BindFailure{ListenerID: tcp81, Message: "RS quota exceeded", Times: 2}); err != nil {
		t.Fatal(err)
	}
	_, err := ops.Ensure(ctx, two("ins-clbpart0", "ins-clbpart1"))
	if err == nil || !strings.Contains(err.Error(), "failed twice for listeners TCP-81 ("+tcp81+")") || !strings.Contains(err.Error(), "RS quota exceeded") {
		t.Fatalf("Ensure = %v", err)
	}
	for _, l := range simCLB.LoadBalancers()[0].Listeners {
		if want := map[int]int{80: 2, 81: 1}[l.Port]; len(l.Targets) != want {
			t.Errorf("listener %d has %d targets, want %d", l.Port, len(l.Targets), want)
		}
	}
	if _, err := ops.Ensure(ctx, two("ins-clbpart0", "ins-clbpart1")); err != nil {
		t.Fatal(err)
	}
}

func TestDeleteFrequencyAgainstCloudsim(t *testing.T) {
	sim, client := startSimWith(t, func(o *cloudsim.Options) { o.Tencent.CLBDeleteFrequencyLimit = 3 })
	ops := simOps(client)
	ctx := context.Background()
	var specs []*Desired
	for i := range 4 {
		s := testSpec(withBackends(), onlyTCP80, withUID(fmt.Sprintf("uid-freq-%d", i)))
		if _, err := ops.Ensure(ctx, s); err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
	}
	for _, s := range specs[:2] {
		if err := ops.Delete(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	// The third deletion within the window (limit 3) is refused, forced
	// or not; the fourth is not even tried.
	var re *api.RetryError
	if err := ops.Delete(ctx, specs[2]); !errors.As(err, &re) || !strings.Contains(err.Error(), "[FailedOperation.FrequencyCheckRisk]") {
		t.Fatalf("third Delete = %v", err)
	}
	if err := ops.Delete(ctx, specs[3]); !errors.As(err, &re) || !strings.Contains(err.Error(), "no call made") {
		t.Fatalf("fourth Delete = %v", err)
	}
	if n := sim.Calls()["DeleteLoadBalancer"]; n["OK"] != 2 || n["FailedOperation.FrequencyCheckRisk"] != 1 {
		t.Errorf("DeleteLoadBalancer calls = %v", n)
	}
	if n := len(sim.Tencent().CLB().LoadBalancers()); n != 2 {
		t.Errorf("CLBs left = %d, want 2", n)
	}
}

func TestDeleteListenerGoneAgainstCloudsim(t *testing.T) {
	sim, client := startSim(t)
	ops := simOps(client)
	ctx := context.Background()
	spec := testSpec(withBackends(), onlyTCP80)
	if _, err := ops.Ensure(ctx, spec); err != nil {
		t.Fatal(err)
	}
	lb := sim.Tencent().CLB().LoadBalancers()[0]
	gone := lb.Listeners[0]
	if err := sim.Tencent().CLB().DeleteListener(lb.ID, gone.ID); err != nil {
		t.Fatal(err)
	}
	if err := ops.deleteListener(ctx, &loadBalancer{id: lb.ID}, &listener{id: gone.ID, name: gone.Name}); err != nil {
		t.Fatalf("deleting a listener already gone: %v", err)
	}
	if n := sim.Calls()["DeleteListener"]["InvalidParameter"]; n != 1 {
		t.Errorf("DeleteListener answers = %v, want one InvalidParameter (its documented code)", sim.Calls()["DeleteListener"])
	}
}
