package clbops

import (
	"context"
	"errors"
	"fmt"
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

// DefaultListenerQuota is TOTAL_LISTENER_QUOTA's documented default: "Number
// of listeners that can be added to an instance: 50" (CLB Use Limits,
// https://www.tencentcloud.com/document/product/214/6187). QuotaListener is
// its QuotaId (Quota model comment, clb@v1.3.105: "TOTAL_LISTENER_QUOTA：一个
// CLB下的监听器配额"). Each port of a Service is one layer-4 listener.
const (
	DefaultListenerQuota = 50
	QuotaListener        = "TOTAL_LISTENER_QUOTA"
)

// Default lifetimes of the cached quota.
const (
	DefaultQuotaTTL      = time.Hour
	DefaultQuotaRetryTTL = time.Minute // after a failed read
)

// QuotaAPI is the part of the CLB API that reads quotas.
type QuotaAPI interface {
	DescribeQuotaWithContext(context.Context, *clb.DescribeQuotaRequest) (*clb.DescribeQuotaResponse, error)
}

// Quotas caches the account's CLB quotas that bound one Service: targets per
// listener and listeners per CLB. Quotas change only by ticket, so one
// DescribeQuota an hour per quota is plenty; when it fails, the documented
// default is used (and logged once until a read succeeds again), and the
// read is retried a minute later.
type Quotas struct {
	api           QuotaAPI
	ttl, retryTTL time.Duration
	now           func() time.Time

	mu     sync.Mutex
	cached map[string]*cachedQuota // by QuotaId
}

type cachedQuota struct {
	value   int
	expires time.Time
	failing bool
}

// NewQuotas returns a cache over api; ttl 0 means DefaultQuotaTTL.
func NewQuotas(api QuotaAPI, ttl time.Duration) *Quotas {
	if ttl <= 0 {
		ttl = DefaultQuotaTTL
	}
	return &Quotas{api: api, ttl: ttl, retryTTL: min(DefaultQuotaRetryTTL, ttl), now: time.Now, cached: map[string]*cachedQuota{}}
}

// TargetsPerListener returns TOTAL_TARGET_BIND_QUOTA: how many targets one
// listener can bind.
func (q *Quotas) TargetsPerListener(ctx context.Context) int {
	return q.get(ctx, QuotaTargetBind, DefaultTargetQuota)
}

// ListenersPerCLB returns TOTAL_LISTENER_QUOTA: how many listeners one CLB
// can hold.
func (q *Quotas) ListenersPerCLB(ctx context.Context) int {
	return q.get(ctx, QuotaListener, DefaultListenerQuota)
}

func (q *Quotas) get(ctx context.Context, id string, def int) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	c := q.cached[id]
	if c == nil {
		c = &cachedQuota{}
		q.cached[id] = c
	}
	if c.value > 0 && q.now().Before(c.expires) {
		return c.value
	}
	v, err := q.read(ctx, id)
	if err != nil {
		if !c.failing {
			klog.ErrorS(err, "Reading a CLB quota failed; using the documented default until a read succeeds",
				"quota", id, "default", def)
		}
		c.failing = true
		c.value, c.expires = def, q.now().Add(q.retryTTL)
		return c.value
	}
	if c.failing || v != c.value {
		klog.InfoS("CLB quota", "quota", id, "limit", v)
	}
	c.failing = false
	c.value, c.expires = v, q.now().Add(q.ttl)
	return v
}

func (q *Quotas) read(ctx context.Context, id string) (int, error) {
	resp, err := q.api.DescribeQuotaWithContext(ctx, clb.NewDescribeQuotaRequest())
	if err != nil {
		return 0, callError("DescribeQuota", "the region", err)
	}
	if resp != nil && resp.Response != nil {
		for _, item := range resp.Response.QuotaSet {
			if item != nil && deref(item.QuotaId) == id && item.QuotaLimit != nil && *item.QuotaLimit > 0 {
				return int(*item.QuotaLimit), nil
			}
		}
	}
	return 0, callError("DescribeQuota", "the region", fmt.Errorf("%w: no %s with a positive QuotaLimit", errNoQuota, id))
}

// errNoQuota: DescribeQuota answered without the quota asked for.
var errNoQuota = errors.New("the answer lacks the quota")
