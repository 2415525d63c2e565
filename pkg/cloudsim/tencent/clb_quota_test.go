package tencent

import (
	"fmt"
	"testing"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
)

// quotas returns DescribeQuota's answer as QuotaId -> [current (-1: null), limit].
func (e *clbEnv) quotas(t *testing.T) map[string][2]int64 {
	t.Helper()
	resp, err := e.api.DescribeQuota(clb.NewDescribeQuotaRequest())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]int64{}
	for _, q := range resp.Response.QuotaSet {
		cur := int64(-1)
		if q.QuotaCurrent != nil {
			cur = *q.QuotaCurrent
		}
		out[*q.QuotaId] = [2]int64{cur, *q.QuotaLimit}
	}
	return out
}

// TOTAL_TARGET_BIND_QUOTA: "Number of servers that can be bound to a
// forwarding rule in a CLB instance: 100" (CLB Use Limits,
// https://www.tencentcloud.com/document/product/214/6187); the Quota model
// comment of clb@v1.3.105 names it "一条转发规则下可绑定设备的配额". Past it,
// RegisterTargets and BatchRegisterTargets answer LimitExceeded, one of
// their documented codes.
func TestCLBTargetQuota(t *testing.T) {
	tests := []struct {
		name  string
		quota int // CLBOptions.TargetQuota
		want  int // the effective quota
		batch bool
	}{
		{"default 100, BatchRegisterTargets", 0, 100, true},
		{"default 100, RegisterTargets", 0, 100, false},
		{"raised by ticket to 120", 120, 120, true},
		{"lowered to 5", 5, 5, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newCLBEnv(t, CLBOptions{TargetQuota: tt.quota}, dataplane.Config{Disabled: true})
			var nodes []core.Instance
			for i := range tt.want + 1 {
				nodes = append(nodes, core.Instance{ID: fmt.Sprintf("ins-q%07d", i), VpcID: clbTestVPC,
					PrivateIP: fmt.Sprintf("10.1.%d.%d", i/200, 1+i%200)})
			}
			e.mustAdd(t, nodes...)
			id := e.createLB(t, nil)
			lis := e.createListener(t, id, "TCP", 80, nil)
			other := e.createListener(t, id, "TCP", 81, nil)
			register := func(listener string, in []core.Instance) error {
				if tt.batch {
					req := clb.NewBatchRegisterTargetsRequest()
					req.LoadBalancerId = common.StringPtr(id)
					for _, n := range in {
						req.Targets = append(req.Targets, &clb.BatchTarget{ListenerId: common.StringPtr(listener),
							InstanceId: common.StringPtr(n.ID), Port: common.Int64Ptr(30080)})
					}
					_, err := e.api.BatchRegisterTargets(req)
					return err
				}
				for start := 0; start < len(in); start += MaxTargetsPerCall {
					req := clb.NewRegisterTargetsRequest()
					req.LoadBalancerId, req.ListenerId = common.StringPtr(id), common.StringPtr(listener)
					for _, n := range in[start:min(start+MaxTargetsPerCall, len(in))] {
						req.Targets = append(req.Targets, insTarget(n.ID, 30080))
					}
					if _, err := e.api.RegisterTargets(req); err != nil {
						return err
					}
				}
				return nil
			}
			// Exactly the quota fits.
			if err := register(lis, nodes[:tt.want]); err != nil {
				t.Fatalf("binding %d targets (the quota): %v", tt.want, err)
			}
			// One more is refused, and nothing of the call is bound.
			if err := register(lis, nodes[tt.want:]); sdkCode(err) != "LimitExceeded" {
				t.Fatalf("target %d past a quota of %d: %v, want LimitExceeded", tt.want+1, tt.want, err)
			}
			if got := len(e.boundTargets(t, id, lis)); got != tt.want {
				t.Fatalf("%d targets bound, want %d", got, tt.want)
			}
			// The quota is per listener: another listener of the same CLB
			// takes the same instances.
			if err := register(other, nodes[:tt.want]); err != nil {
				t.Fatalf("the quota is per listener: %v", err)
			}
			if q := e.quotas(t)["TOTAL_TARGET_BIND_QUOTA"]; q != [2]int64{-1, int64(tt.want)} {
				t.Fatalf("DescribeQuota TOTAL_TARGET_BIND_QUOTA = %v, want current null, limit %d", q, tt.want)
			}
		})
	}
}

// TOTAL_LISTENER_QUOTA: "Number of listeners that can be added to an
// instance: 50" (CLB Use Limits); "一个CLB下的监听器配额" (Quota model comment).
// LimitExceeded is a documented code of CreateListener. DescribeQuota
// reports every quota cloudsim enforces, with the region's use of the
// per-region ones.
func TestCLBListenerQuotaAndDescribeQuota(t *testing.T) {
	e := newCLBEnv(t, CLBOptions{QuotaOpen: 7, QuotaInternal: 3}, dataplane.Config{Disabled: true})
	id := e.createLB(t, nil)
	for port := range int64(ListenerQuota) {
		e.createListener(t, id, "TCP", 1000+port, nil)
	}
	req := clb.NewCreateListenerRequest()
	req.LoadBalancerId, req.Protocol, req.Ports = common.StringPtr(id), common.StringPtr("UDP"), []*int64{common.Int64Ptr(53)}
	if _, err := e.api.CreateListener(req); sdkCode(err) != "LimitExceeded" {
		t.Fatalf("listener 51: %v, want LimitExceeded", err)
	}
	want := map[string][2]int64{
		"TOTAL_OPEN_CLB_QUOTA":     {1, 7},
		"TOTAL_INTERNAL_CLB_QUOTA": {0, 3},
		"TOTAL_LISTENER_QUOTA":     {-1, ListenerQuota},
		"TOTAL_TARGET_BIND_QUOTA":  {-1, DefaultTargetQuota},
	}
	got := e.quotas(t)
	if len(got) != len(want) {
		t.Errorf("DescribeQuota answered %v, want exactly %v", got, want)
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("DescribeQuota %s = %v, want %v ([current, limit], -1: null)", id, got[id], w)
		}
	}
}
