package tencent

import (
	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
)

// describeTaskStatus implements DescribeTaskStatus: the task of an
// asynchronous call, found by the call's RequestId (TaskId) or, for
// CreateLoadBalancer, its DealName. Status 0 succeeded, 1 failed (Message
// says why), 2 running.
func (l *CLB) describeTaskStatus(call *Call, body []byte) (any, error) {
	var req clb.DescribeTaskStatusRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	id, deal := ptrStr(req.TaskId), ptrStr(req.DealName)
	if id == "" && deal == "" {
		return nil, Errorf("MissingParameter", "One of `TaskId` and `DealName` is required.")
	}
	key := id
	if key == "" {
		key = deal
	}
	t, ok := l.tasks.Get(key)
	if !ok {
		return nil, Errorf("InvalidParameter", "The task `%s` does not exist (cloudsim keeps finished tasks for %s).", key, core.DefaultTaskRetention)
	}
	out := &clb.DescribeTaskStatusResponseParams{
		Status:          common.Int64Ptr(int64(t.State)),
		LoadBalancerIds: common.StringPtrs(t.Result),
	}
	if t.State == core.TaskFailed {
		out.Message = common.StringPtr(t.Message)
	}
	return out, nil
}
