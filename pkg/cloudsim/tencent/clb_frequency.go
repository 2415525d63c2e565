package tencent

import (
	"slices"
	"time"
)

// DeleteLoadBalancer's frequency check (clb@v1.3.105 models.go,
// DeleteLoadBalancerRequestParams.ForceDelete, case 3: "单地域内 5 分钟 内删除
// 大于等于 30 个实例时"): a deletion that would make 30 or more load balancers
// deleted in one region within 5 minutes is refused with
// FailedOperation.FrequencyCheckRisk, with or without ForceDelete, which
// the SDK allows only for cases 1 and 2. Our reading of "大于等于 30": the
// 30th deletion within a window is the first one refused. The window
// slides; a deletion is counted when its call is accepted.

// checkDeleteFrequencyLocked refuses a deletion of n load balancers in
// region if it would reach the limit, and otherwise counts it and returns
// the undo for a call that is then refused anyway (busy), to be run under
// l.mu. Callers hold l.mu.
func (l *CLB) checkDeleteFrequencyLocked(region string, n int) (undo func(), err *Error) {
	now := l.core.Now()
	recent := slices.DeleteFunc(l.deletions[region], func(t time.Time) bool { return now.Sub(t) >= l.deleteWindow })
	l.deletions[region] = recent
	if len(recent)+n >= l.deleteLimit {
		var next time.Duration
		if len(recent) > 0 {
			next = recent[0].Add(l.deleteWindow).Sub(now)
		}
		return nil, Errorf(codeFrequencyCheckRisk,
			"Deleting %d load balancer(s) now would make %d deleted in region %s within %s; the limit is fewer than %d (ForceDelete does not override this check). The oldest counted deletion leaves the window in %s.",
			n, len(recent)+n, region, l.deleteWindow, l.deleteLimit, next.Round(time.Second))
	}
	for range n {
		l.deletions[region] = append(l.deletions[region], now)
	}
	return func() {
		d := l.deletions[region]
		for range n {
			if i := slices.Index(d, now); i >= 0 {
				d = slices.Delete(d, i, i+1)
			}
		}
		l.deletions[region] = d
	}, nil
}
