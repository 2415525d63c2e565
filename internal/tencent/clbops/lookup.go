package clbops

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/cloudbase"
	"github.com/ccmkit/ccm/internal/inventory"
)

// Finding a Service's CLB by its service-uid tag (issue 33). Every sync
// looks its CLB up, and a CCM that starts (or a node that joins) syncs
// every Service at once: one filtered DescribeLoadBalancers each was S
// calls, where one listing of the cluster's tagged CLBs takes ⌈S/100⌉
// pages (clb@v1.3.105 models.go, DescribeLoadBalancersRequestParams:
// Limit "最大值为100"; Filter.Values "上限为100"; the tag-key filter).
//
// So the lookups share an inventory (internal/inventory). Misses gather for
// lookupKeyWindow into one tag-filtered call per 100 Services; once the
// calls that found a CLB within the TTL have cost what a listing does, one
// listing answers the rest. A lookup that found nothing (a Service whose
// CLB is not made yet) is not charged: a listing would not have spared it
// its call, since absence from a listing is never taken as proof.
//
// Our own writes: a listing answers a Service's lookup only when it began
// after that Service's last reconcile ended (plus the read-lag window, when
// one is set), so it holds whatever the reconcile changed. Out-of-band
// changes (a CLB edited or deleted in the console) reach a lookup at most
// the TTL later than with a call each; a sync that then fails on the gone
// CLB counts as a reconcile, so its retry reads afresh. Deletion and Get
// still read afresh every time.

// DefaultLookupTTL is how long one listing of the cluster's CLBs may
// answer lookups: the instance cache's default TTL (our choice, so that one
// staleness bound holds for the whole CCM).
const DefaultLookupTTL = 60 * time.Second

// lookupKeyWindow is how long a lookup that missed waits for others to
// share its filtered call (our choice: small beside a sync's writes, and
// twice the 20/s pace at which a resync's workers come back).
const lookupKeyWindow = 100 * time.Millisecond

// indexServiceUID indexes CLBs by their service-uid tag.
const indexServiceUID = "service-uid"

// clbLookup is the inventory of the cluster's tagged CLBs, and when each
// Service's last reconcile ended.
type clbLookup struct {
	inv        *inventory.Inventory[*loadBalancer]
	ttl        time.Duration
	lag        time.Duration
	now        func() time.Time
	reconciled cloudbase.Reconciled
}

func newLookup(o *Ops, ttl time.Duration) *clbLookup {
	return &clbLookup{
		inv: inventory.New(inventory.Source[*loadBalancer]{
			FetchByID: func(ctx context.Context, ids []string) ([]*loadBalancer, error) {
				req := clb.NewDescribeLoadBalancersRequest()
				req.LoadBalancerIds = common.StringPtrs(ids)
				return o.describeLoadBalancers(ctx, "CLBs "+abbreviate(ids), req)
			},
			ListAll: o.listTagged,
			ID:      func(lb *loadBalancer) string { return lb.id },
			Indexes: map[string]func(*loadBalancer) []string{indexServiceUID: func(lb *loadBalancer) []string {
				if uid, ok := lb.tags[TagServiceUID]; ok {
					return []string{uid}
				}
				return nil
			}},
			FetchByKeys: func(ctx context.Context, _ string, keys []string) ([]*loadBalancer, error) {
				uids := make([]types.UID, len(keys))
				for i, k := range keys {
					uids[i] = types.UID(k)
				}
				tagged, err := o.describeTagged(ctx, uids)
				var out []*loadBalancer
				for _, lbs := range tagged {
					out = append(out, lbs...)
				}
				return out, err
			},
		}, inventory.Options{Provider: "tencentcloud/clb", TTL: ttl, MaxBatch: maxLoadBalancerIDs, PageSize: maxPageSize,
			MaxKeys: maxFilterValues, KeyWindow: lookupKeyWindow, ChargeFoundOnly: true}),
		ttl: ttl,
		lag: o.readLagWindow,
		now: o.now,
	}
}

// listTagged lists every CLB of the cluster's VPC that carries a
// service-uid tag, through all pages.
func (o *Ops) listTagged(ctx context.Context) ([]*loadBalancer, error) {
	req := clb.NewDescribeLoadBalancersRequest()
	req.VpcId = common.StringPtr(o.vpcID)
	req.Filters = []*clb.Filter{{Name: common.StringPtr("tag-key"), Values: common.StringPtrs([]string{TagServiceUID})}}
	return o.describeLoadBalancers(ctx, "the CLBs tagged "+TagServiceUID+" in "+o.vpcID, req)
}

// lookupTagged returns the CLBs tagged for the Service, each the caller's
// own copy.
func (o *Ops) lookupTagged(ctx context.Context, uid types.UID) ([]*loadBalancer, error) {
	if o.lookup == nil {
		tagged, err := o.describeTagged(ctx, []types.UID{uid})
		return tagged[uid], err
	}
	direct := func(ctx context.Context) ([]*loadBalancer, error) {
		tagged, err := o.describeTagged(ctx, []types.UID{uid})
		return tagged[uid], err
	}
	lbs, err := o.lookup.inv.MatchIndex(ctx, o.lookup.maxAge(uid), indexServiceUID, []string{string(uid)}, direct)
	if err != nil {
		return nil, err
	}
	out := make([]*loadBalancer, len(lbs))
	for i, lb := range lbs {
		out[i] = lb.clone() // the pipeline marks and updates its CLB
	}
	return out, nil
}

// touch records that a reconcile of the Service ended now: only a listing
// that begins later may answer its next lookup.
func (o *Ops) touch(uid types.UID) {
	if l := o.lookup; l != nil {
		l.reconciled.Done(uid, l.now(), l.ttl+l.lag)
	}
}

// maxAge is how old an answer may be for the Service's lookup.
func (l *clbLookup) maxAge(uid types.UID) time.Duration {
	age := l.ttl
	if nb := l.reconciled.NotBefore(uid, l.lag); !nb.IsZero() {
		age = min(age, l.now().Sub(nb))
	}
	return max(age, 0)
}

func (lb *loadBalancer) clone() *loadBalancer {
	c := *lb
	c.vips = slices.Clone(lb.vips)
	c.securityGroups = slices.Clone(lb.securityGroups)
	c.tags = maps.Clone(lb.tags)
	return &c
}

// abbreviate names up to three ids and counts the rest.
func abbreviate(ids []string) string {
	if len(ids) <= 3 {
		return strings.Join(ids, ",")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:3], ","), len(ids)-3)
}
