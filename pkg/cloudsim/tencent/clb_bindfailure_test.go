package tencent

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
)

// TestCLBBatchRegisterPartialFailure: BatchRegisterTargets answers the
// listeners it could not bind in FailListenerIdSet with a Message, and binds
// the others ("绑定失败的监听器ID，如为空表示全部绑定成功",
// BatchRegisterTargetsResponseParams in clb@v1.3.105 models.go). cloudsim
// fails a listener only when a BindFailure is armed.
func TestCLBBatchRegisterPartialFailure(t *testing.T) {
	e := newCLBEnv(t, CLBOptions{}, dataplane.Config{Disabled: true})
	id := e.createLB(t, nil)
	a := e.createListener(t, id, "TCP", 80, nil)
	b := e.createListener(t, id, "TCP", 81, nil)
	register := func() *clb.BatchRegisterTargetsResponseParams {
		t.Helper()
		req := clb.NewBatchRegisterTargetsRequest()
		req.LoadBalancerId = common.StringPtr(id)
		for _, l := range []string{a, b} {
			req.Targets = append(req.Targets, &clb.BatchTarget{ListenerId: common.StringPtr(l), EniIp: common.StringPtr("10.9.0.1"), Port: common.Int64Ptr(30080)})
		}
		resp, err := e.api.BatchRegisterTargets(req)
		if err != nil {
			t.Fatal(err)
		}
		if st, msg := e.waitTask(t, *resp.Response.RequestId); st != 0 {
			t.Fatalf("task %d %s", st, msg)
		}
		return resp.Response
	}
	bound := func(lis string) int {
		lb, _ := e.clb.LoadBalancer(id)
		for _, l := range lb.Listeners {
			if l.ID == lis {
				return len(l.Targets)
			}
		}
		return -1
	}

	// Armed through the admin API, for one call.
	rec := httptest.NewRecorder()
	e.core.AdminHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/admin/tencent/clb/bindfailures",
		strings.NewReader(`{"listenerID":"`+b+`","message":"RS quota exceeded"}`)))
	if rec.Code != http.StatusCreated {
		t.Fatalf("arming: %d %s", rec.Code, rec.Body)
	}
	r := register()
	if got := common.StringValues(r.FailListenerIdSet); !slices.Equal(got, []string{b}) || r.Message == nil || !strings.Contains(*r.Message, "RS quota exceeded") {
		t.Fatalf("FailListenerIdSet %v Message %v, want [%s] with the message", got, r.Message, b)
	}
	if bound(a) != 1 || bound(b) != 0 {
		t.Fatalf("bound %d/%d, want the other listener's target only", bound(a), bound(b))
	}
	// The failure was for one call: the retry of the failed listener binds.
	req := clb.NewBatchRegisterTargetsRequest()
	req.LoadBalancerId = common.StringPtr(id)
	req.Targets = []*clb.BatchTarget{{ListenerId: common.StringPtr(b), EniIp: common.StringPtr("10.9.0.1"), Port: common.Int64Ptr(30080)}}
	retry, err := e.api.BatchRegisterTargets(req)
	if err != nil || len(retry.Response.FailListenerIdSet) != 0 {
		t.Fatalf("retry: %v %v", retry, err)
	}
	e.waitTask(t, *retry.Response.RequestId)
	if bound(b) != 1 {
		t.Fatalf("after the retry: %d targets", bound(b))
	}

	// Until cleared, every listener fails: the task binds nothing.
	if err := e.clb.FailBindings(BindFailure{ListenerID: a, Times: -1}); err != nil {
		t.Fatal(err)
	}
	req.Targets[0].ListenerId, req.Targets[0].EniIp = common.StringPtr(a), common.StringPtr("10.9.0.2")
	for range 2 {
		r, err := e.api.BatchRegisterTargets(req)
		if err != nil || len(r.Response.FailListenerIdSet) != 1 || *r.Response.Message != a+": "+DefaultBindFailureMessage {
			t.Fatalf("persistent failure: %v %v", r, err)
		}
		e.waitTask(t, *r.Response.RequestId)
	}
	if bound(a) != 1 {
		t.Fatalf("a failed listener got targets: %d", bound(a))
	}
	e.clb.ClearBindFailures()
	if len(e.clb.BindFailures()) != 0 {
		t.Fatal("not cleared")
	}
	// Invalid targets still refuse the whole call.
	req.Targets[0].ListenerId = common.StringPtr("lbl-nothere")
	if _, err := e.api.BatchRegisterTargets(req); sdkCode(err) != "InvalidParameter.ListenerIdNotFound" {
		t.Fatalf("unknown listener: %v", err)
	}
}
