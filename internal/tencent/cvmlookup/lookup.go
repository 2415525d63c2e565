// Package cvmlookup finds the instances of the cluster's VPC through CVM
// DescribeInstances, within the API's documented limits (100 ids or
// results per call, five values per filter), and checks every answer's
// shape before anyone reads it.
package cvmlookup

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"

	"github.com/ccmkit/ccm/internal/callerr"
)

// API is the slice of the CVM API the node side uses. *cvm.Client
// implements it; tests wrap it to record calls or to answer malformed.
type API interface {
	DescribeInstancesWithContext(ctx context.Context, req *cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error)
}

const (
	// PageSize is DescribeInstances' maximum Limit, and also its maximum
	// number of InstanceIds per call.
	PageSize = 100
	// MaxFilterValues is the documented limit of values per filter
	// (cvm@v1.3.183 models.go, DescribeInstancesRequestParams.Filters:
	// "`Filter.Values`的上限为5"). Filters AND together, so a lookup of
	// many IPs takes one call per five.
	MaxFilterValues = 5
	// maxPages stops pagination against an answer whose TotalCount never
	// comes within reach (100 pages = 10,000 instances for one filter).
	maxPages = 100
	// maxVPCPages bounds a listing of the whole VPC (100,000 instances).
	maxVPCPages = 1000
)

// Lookup finds instances of our VPC. Every result has been checked
// to be well-formed (id, VPC), so callers can trust the fields they read.
type Lookup struct {
	api   API
	vpcID string
}

// New returns a Lookup of the instances of VPC vpcID.
func New(api API, vpcID string) *Lookup { return &Lookup{api: api, vpcID: vpcID} }

// VPC is the VPC the Lookup serves.
func (l *Lookup) VPC() string { return l.vpcID }

// ByID describes the given instances. DescribeInstances cannot combine
// InstanceIds with Filters, so the VPC is not filtered here: the caller
// decides what an instance in another VPC means. An id missing from the
// result means the cloud does not know it.
func (l *Lookup) ByID(ctx context.Context, target string, ids ...string) ([]*cvm.Instance, error) {
	var out []*cvm.Instance
	for chunk := range slices.Chunk(ids, PageSize) {
		req := cvm.NewDescribeInstancesRequest()
		req.InstanceIds = common.StringPtrs(chunk)
		req.Limit = common.Int64Ptr(PageSize)
		what := fmt.Sprintf("%s (InstanceIds %s)", target, Abbreviate(chunk))
		set, total, err := l.describe(ctx, what, req)
		if err != nil {
			return nil, err
		}
		if err := checkIDAnswer(chunk, set, total); err != nil {
			return nil, &callerr.Error{Action: "DescribeInstances", Target: "for " + what, Err: err}
		}
		out = append(out, set...)
	}
	return out, nil
}

// Abbreviate lists up to five ids (or values), so that an error about a batch of
// 100 stays one readable line.
func Abbreviate(ids []string) string {
	if len(ids) <= 5 {
		return strings.Join(ids, ",")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:5], ","), len(ids)-5)
}

// checkIDAnswer rejects an answer that does not match the question, because
// a by-id answer decides whether a node is deleted: only a consistent
// answer without the id may mean "gone".
func checkIDAnswer(asked []string, set []*cvm.Instance, total int64) error {
	if total != int64(len(set)) {
		return fmt.Errorf("malformed answer: TotalCount %d but %d instances", total, len(set))
	}
	seen := map[string]bool{}
	for _, ins := range set {
		id := *ins.InstanceId
		if !slices.Contains(asked, id) {
			return fmt.Errorf("malformed answer: instance %s was not asked for", id)
		}
		if seen[id] {
			return fmt.Errorf("malformed answer: instance %s listed twice", id)
		}
		seen[id] = true
	}
	return nil
}

// ByFilter lists the instances of our VPC that match name=values. It
// always adds the vpc-id filter, splits values into groups of five (the
// API's limit) and pages through every result. Instances that are
// nevertheless outside our VPC are dropped.
func (l *Lookup) ByFilter(ctx context.Context, target, name string, values []string) ([]*cvm.Instance, error) {
	var out []*cvm.Instance
	seen := map[string]bool{}
	for chunk := range slices.Chunk(values, MaxFilterValues) {
		what := fmt.Sprintf("%s (%s filter)", target, name)
		set, err := l.allPages(ctx, what, maxPages, []*cvm.Filter{
			{Name: common.StringPtr("vpc-id"), Values: common.StringPtrs([]string{l.vpcID})},
			{Name: common.StringPtr(name), Values: common.StringPtrs(chunk)},
		})
		if err != nil {
			return nil, err
		}
		for _, ins := range set {
			if !seen[*ins.InstanceId] && VPCOf(ins) == l.vpcID {
				seen[*ins.InstanceId] = true
				out = append(out, ins)
			}
		}
	}
	return out, nil
}

// InVPC lists every instance of our VPC, 100 per page: the inventory's
// full refresh.
func (l *Lookup) InVPC(ctx context.Context) ([]*cvm.Instance, error) {
	set, err := l.allPages(ctx, "the instances of VPC "+l.vpcID, maxVPCPages, []*cvm.Filter{
		{Name: common.StringPtr("vpc-id"), Values: common.StringPtrs([]string{l.vpcID})},
	})
	if err != nil {
		return nil, err
	}
	return l.ours(set), nil
}

// CreatedSince lists the instances of our VPC created at or after since,
// 100 per page: the inventory's delta, which finds a burst of new nodes'
// machines in about one call per 100 instead of one per five IPs.
//
// The creation-start-time filter takes "YYYY-MM-DD hh:mm:ss" without a
// zone (cvm@v1.3.183 models.go, DescribeInstancesRequestParams.Filters).
// It is written in Beijing time (UTC+8), the zone of the API's other
// zone-less times (CLB's CreateTime, VPC's CreatedTime). Were the API to
// read it as UTC, it would ask from eight hours later, find nothing new,
// and every node would still be found by its own filter (the fallback):
// more calls, never a wrong answer.
func (l *Lookup) CreatedSince(ctx context.Context, since time.Time) ([]*cvm.Instance, error) {
	set, err := l.allPages(ctx, "the instances of VPC "+l.vpcID+" created since "+since.UTC().Format(time.RFC3339), maxVPCPages, []*cvm.Filter{
		{Name: common.StringPtr("vpc-id"), Values: common.StringPtrs([]string{l.vpcID})},
		{Name: common.StringPtr("creation-start-time"), Values: common.StringPtrs([]string{since.In(apiZone).Format(creationTimeLayout)})},
	})
	if err != nil {
		return nil, err
	}
	return l.ours(set), nil
}

// creationTimeLayout and apiZone are how the creation-*-time filters write
// a time (see CreatedSince).
const creationTimeLayout = "2006-01-02 15:04:05"

var apiZone = time.FixedZone("UTC+8", 8*3600)

// ours keeps the instances of our VPC, each once: one that shows up twice
// (the list shifted between pages) is kept once; one that a shift hid is
// simply absent, which the inventory never takes as proof of anything.
func (l *Lookup) ours(set []*cvm.Instance) []*cvm.Instance {
	out := make([]*cvm.Instance, 0, len(set))
	seen := make(map[string]bool, len(set))
	for _, ins := range set {
		if !seen[*ins.InstanceId] && VPCOf(ins) == l.vpcID {
			seen[*ins.InstanceId] = true
			out = append(out, ins)
		}
	}
	return out
}

// FilterIndexes lets the inventory answer the node mapping's filter
// lookups from a listing: for each DescribeInstances filter the mapping
// uses, the values under which the API would match an instance of our VPC.
// Instances of other VPCs have no keys, as the vpc-id filter hides them.
func FilterIndexes(vpcID string) map[string]func(*cvm.Instance) []string {
	inVPC := func(keys func(*cvm.Instance) []string) func(*cvm.Instance) []string {
		return func(ins *cvm.Instance) []string {
			if VPCOf(ins) != vpcID {
				return nil
			}
			return keys(ins)
		}
	}
	return map[string]func(*cvm.Instance) []string{
		"private-ip-address": inVPC(func(ins *cvm.Instance) []string { return common.StringValues(ins.PrivateIpAddresses) }),
		"instance-name":      inVPC(func(ins *cvm.Instance) []string { return []string{deref(ins.InstanceName)} }),
	}
}

// allPages pages through a filtered DescribeInstances until TotalCount
// instances have been seen, or limit pages. After a full page the rest of
// the pages go out together, up to pageConcurrency at a time, because a
// listing of the VPC is on every starting node's path (1,000 nodes: ten
// pages, 0.7 s one after the other at cloudsim's realistic latency). Pages
// are taken in offset order up to the first short one, so the answer is
// the one a sequential walk would have assembled; after a short page (the
// list shifted) the walk goes on one page at a time from there.
func (l *Lookup) allPages(ctx context.Context, what string, limit int, filters []*cvm.Filter) ([]*cvm.Instance, error) {
	page := func(ctx context.Context, offset int) ([]*cvm.Instance, int64, error) {
		req := cvm.NewDescribeInstancesRequest()
		req.Filters = filters
		req.Offset = common.Int64Ptr(int64(offset))
		req.Limit = common.Int64Ptr(PageSize)
		return l.describe(ctx, what, req)
	}
	var out []*cvm.Instance
	total, full := int64(1), false
	for pages := 0; int64(len(out)) < total; {
		if pages == limit {
			return nil, &callerr.Error{Action: "DescribeInstances", Target: "for " + what,
				Err: fmt.Errorf("gave up after %d pages of %d", limit, PageSize)}
		}
		n := 1
		if full {
			n = min(int((total-int64(len(out))+PageSize-1)/PageSize), limit-pages)
		}
		sets, totals, err := l.pagesFrom(ctx, len(out), n, page)
		if err != nil {
			return nil, err
		}
		pages += n
		for i, set := range sets {
			if len(set) == 0 && int64(len(out)) < totals[i] {
				// The list shrank between pages; the next sync will see it whole.
				return nil, &callerr.Error{Action: "DescribeInstances", Target: "for " + what,
					Err: fmt.Errorf("page at offset %d was empty but TotalCount is %d", len(out), totals[i])}
			}
			out, total, full = append(out, set...), totals[i], len(set) == PageSize
			if !full {
				break
			}
		}
	}
	return out, nil
}

// pageConcurrency is how many pages of one listing are in flight at once:
// the API transport's burst for DescribeInstances (40/s, a tenth as burst),
// so a listing does not queue behind itself in the pacer.
const pageConcurrency = 4

// pagesFrom fetches n pages starting at offset, up to pageConcurrency at a
// time, and returns them in offset order.
func (l *Lookup) pagesFrom(ctx context.Context, offset, n int,
	page func(context.Context, int) ([]*cvm.Instance, int64, error)) ([][]*cvm.Instance, []int64, error) {
	sets, totals := make([][]*cvm.Instance, n), make([]int64, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(pageConcurrency)
	for i := range n {
		g.Go(func() error {
			var err error
			sets[i], totals[i], err = page(gctx, offset+i*PageSize)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	return sets, totals, nil
}

// describe makes one call and checks the shape of the answer.
func (l *Lookup) describe(ctx context.Context, what string, req *cvm.DescribeInstancesRequest) ([]*cvm.Instance, int64, error) {
	resp, err := l.api.DescribeInstancesWithContext(ctx, req)
	if err == nil {
		err = checkAnswer(resp)
	}
	if err != nil {
		return nil, 0, &callerr.Error{Action: "DescribeInstances", Target: "for " + what, Err: err}
	}
	set := make([]*cvm.Instance, len(resp.Response.InstanceSet))
	for i, ins := range resp.Response.InstanceSet {
		set[i] = kept(ins)
	}
	return set, *resp.Response.TotalCount, nil
}

// kept is the part of an instance that the provider reads: the inventory
// holds one per instance of the VPC for as long as the process runs, and
// the SDK's Instance has 48 fields, most of them pointers (at 10,000
// instances the whole answers were 13.5 MB of the heap; docs/scale.md). A
// field read anywhere of an instance from this package must be copied
// here: TestKeptIsWhatTheProviderReads lists them.
func kept(ins *cvm.Instance) *cvm.Instance {
	k := &cvm.Instance{
		InstanceId: ins.InstanceId, InstanceName: ins.InstanceName, InstanceState: ins.InstanceState,
		InstanceType: ins.InstanceType, PrivateIpAddresses: ins.PrivateIpAddresses, PublicIpAddresses: ins.PublicIpAddresses,
	}
	if p := ins.Placement; p != nil {
		k.Placement = &cvm.Placement{Zone: p.Zone}
	}
	if v := ins.VirtualPrivateCloud; v != nil {
		k.VirtualPrivateCloud = &cvm.VirtualPrivateCloud{VpcId: v.VpcId}
	}
	return k
}

// checkAnswer rejects answers missing what we rely on. A body without
// TotalCount or without instance ids must never be read as "no instances".
func checkAnswer(resp *cvm.DescribeInstancesResponse) error {
	if resp == nil || resp.Response == nil {
		return errors.New("malformed answer: no Response")
	}
	if resp.Response.TotalCount == nil || *resp.Response.TotalCount < 0 {
		return errors.New("malformed answer: no valid TotalCount")
	}
	for i, ins := range resp.Response.InstanceSet {
		if ins == nil || ins.InstanceId == nil || *ins.InstanceId == "" {
			return fmt.Errorf("malformed answer: InstanceSet[%d] has no InstanceId", i)
		}
	}
	return nil
}

// VPCOf returns the instance's VPC id, "" if the answer has none.
func VPCOf(ins *cvm.Instance) string {
	if ins.VirtualPrivateCloud == nil {
		return ""
	}
	return deref(ins.VirtualPrivateCloud.VpcId)
}

// deref reads an optional string field of an answer.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// stateTerminating is the InstanceState of an instance being released.
const stateTerminating = "TERMINATING"

// Released returns the IPs among ips that no instance of our VPC holds any
// more: none has the private IP, or only instances being terminated. It
// always asks the API (the routes' orphan check must not trust a cache),
// five IPs per call, and an error means "cannot tell".
func (l *Lookup) Released(ctx context.Context, ips []netip.Addr) ([]netip.Addr, error) {
	values := make([]string, len(ips))
	for i, ip := range ips {
		values[i] = ip.String()
	}
	set, err := l.ByFilter(ctx, "route gateways", "private-ip-address", values)
	if err != nil {
		return nil, err
	}
	held := map[string]bool{}
	for _, ins := range set {
		if deref(ins.InstanceState) == stateTerminating {
			continue
		}
		for _, ip := range ins.PrivateIpAddresses {
			held[deref(ip)] = true
		}
	}
	var out []netip.Addr
	for _, ip := range ips {
		if !held[ip.String()] {
			out = append(out, ip)
		}
	}
	return out, nil
}
