package clbops

import (
	"context"
	"errors"
	"sync"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"k8s.io/klog/v2"
)

// DefaultTargetQuota is TOTAL_TARGET_BIND_QUOTA's documented default: "Number
// of servers that can be bound to a forwarding rule in a CLB instance: 100"
// (CLB Use Limits, https://www.tencentcloud.com/document/product/214/6187).
// A layer-4 listener is one forwarding rule. A ticket can raise it, which is
// why the quota is read with DescribeQuota.
const DefaultTargetQuota = 100

// QuotaTargetBind is the QuotaId of the targets-per-listener quota (Quota
// model comment, clb@v1.3.105: "TOTAL_TARGET_BIND_QUOTA：一条转发规则下可绑定设备的配额").
const QuotaTargetBind = "TOTAL_TARGET_BIND_QUOTA"

// Default lifetimes of the cached quota.
const (
	DefaultQuotaTTL      = time.Hour
	DefaultQuotaRetryTTL = time.Minute // after a failed read
)

// QuotaAPI is the part of the CLB API that reads quotas.
type QuotaAPI interface {
	DescribeQuotaWithContext(context.Context, *clb.DescribeQuotaRequest) (*clb.DescribeQuotaResponse, error)
}

// Quotas caches the account's targets-per-listener quota. Quotas change only
// by ticket, so one DescribeQuota an hour is plenty; when it fails, the
// documented default is used (and logged once until a read succeeds again),
// and the read is retried a minute later.
type Quotas struct {
	api           QuotaAPI
	ttl, retryTTL time.Duration
	now           func() time.Time

	mu      sync.Mutex
	value   int
	expires time.Time
	failing bool
}

// NewQuotas returns a cache over api; ttl 0 means DefaultQuotaTTL.
func NewQuotas(api QuotaAPI, ttl time.Duration) *Quotas {
	if ttl <= 0 {
		ttl = DefaultQuotaTTL
	}
	return &Quotas{api: api, ttl: ttl, retryTTL: min(DefaultQuotaRetryTTL, ttl), now: time.Now}
}

// TargetsPerListener returns TOTAL_TARGET_BIND_QUOTA: how many targets one
// listener can bind.
func (q *Quotas) TargetsPerListener(ctx context.Context) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.value > 0 && q.now().Before(q.expires) {
		return q.value
	}
	v, err := q.read(ctx)
	if err != nil {
		if !q.failing {
			klog.ErrorS(err, "Reading the CLB target quota failed; using the documented default until a read succeeds",
				"quota", QuotaTargetBind, "default", DefaultTargetQuota)
		}
		q.failing = true
		q.value, q.expires = DefaultTargetQuota, q.now().Add(q.retryTTL)
		return q.value
	}
	if q.failing || v != q.value {
		klog.InfoS("CLB target quota", "quota", QuotaTargetBind, "targetsPerListener", v)
	}
	q.failing = false
	q.value, q.expires = v, q.now().Add(q.ttl)
	return v
}

func (q *Quotas) read(ctx context.Context) (int, error) {
	resp, err := q.api.DescribeQuotaWithContext(ctx, clb.NewDescribeQuotaRequest())
	if err != nil {
		return 0, callError("DescribeQuota", "the region", err)
	}
	if resp != nil && resp.Response != nil {
		for _, item := range resp.Response.QuotaSet {
			if item != nil && deref(item.QuotaId) == QuotaTargetBind && item.QuotaLimit != nil && *item.QuotaLimit > 0 {
				return int(*item.QuotaLimit), nil
			}
		}
	}
	return 0, callError("DescribeQuota", "the region", errNoTargetQuota)
}

var errNoTargetQuota = errors.New("the answer has no " + QuotaTargetBind + " with a positive QuotaLimit")
