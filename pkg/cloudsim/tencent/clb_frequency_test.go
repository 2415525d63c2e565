package tencent

import (
	"strings"
	"testing"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
)

// TestCLBDeleteFrequencyCheck: deleting 30 or more load balancers in one
// region within 5 minutes is refused with FailedOperation.FrequencyCheckRisk,
// and ForceDelete does not override it (clb@v1.3.105 models.go,
// DeleteLoadBalancerRequestParams.ForceDelete, case 3: "单地域内 5 分钟 内删除
// 大于等于 30 个实例时"; only cases 1 and 2 may be forced).
func TestCLBDeleteFrequencyCheck(t *testing.T) {
	if d := NewCLB(core.New(core.Config{}), CLBOptions{}); d.deleteLimit != 30 || d.deleteWindow != 5*time.Minute {
		t.Fatalf("defaults %d per %s, want the documented 30 per 5m", d.deleteLimit, d.deleteWindow)
	}
	// The fake clock cannot move 5 minutes (signatures would expire): the
	// window is 2 minutes here, as tests shorten it.
	const window = 2 * time.Minute
	clock := newFakeClock()
	e := newCLBEnvWith(t, core.Config{Clock: clock.Now}, CLBOptions{QuotaOpen: 200, DeleteFrequencyWindow: window}, dataplane.Config{Disabled: true})
	var ids []string
	for range 50 {
		ids = append(ids, e.createLB(t, nil))
	}
	del := func(force bool, ids ...string) error {
		req := clb.NewDeleteLoadBalancerRequest()
		req.LoadBalancerIds = common.StringPtrs(ids)
		req.ForceDelete = common.BoolPtr(force)
		_, err := e.api.DeleteLoadBalancer(req)
		return err
	}
	// 20 in one call (the most a call takes), then 9 one by one: 29 deleted.
	if err := del(false, ids[:20]...); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids[20:29] {
		clock.Advance(time.Second)
		if err := del(false, id); err != nil {
			t.Fatalf("deletion %s: %v", id, err)
		}
	}
	// The 30th within the window is refused, forced or not; nothing is
	// deleted, and an unknown id is still reported first.
	for _, force := range []bool{false, true} {
		err := del(force, ids[29])
		if sdkCode(err) != "FailedOperation.FrequencyCheckRisk" || !strings.Contains(err.Error(), "ForceDelete does not override") {
			t.Fatalf("30th deletion (ForceDelete %v): %v", force, err)
		}
	}
	if e.describeLB(t, ids[29]) == nil {
		t.Fatal("a refused deletion deleted the LB")
	}
	if err := del(false, "lb-nothere"); sdkCode(err) != "InvalidParameter.LBIdNotFound" {
		t.Fatalf("unknown id during the block: %v", err)
	}
	// The window slides: when the 20 of the first call have left it, 20
	// more can go (9 + 20 = 29), and then not one more.
	clock.Advance(window - 9*time.Second)
	if err := del(false, ids[29:49]...); err != nil {
		t.Fatalf("20 more after the first 20 left the window: %v", err)
	}
	if err := del(true, ids[49]); sdkCode(err) != "FailedOperation.FrequencyCheckRisk" {
		t.Fatalf("one more: %v", err)
	}
	if n := len(e.clb.LoadBalancers()); n != 1 {
		t.Fatalf("%d load balancers left, want 1", n)
	}
}
