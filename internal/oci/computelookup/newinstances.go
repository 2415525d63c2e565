package computelookup

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"

	"github.com/ccmkit/ccm/internal/oci/ocierr"
)

// ListInstancesSince lists the compartment's instances created at or after
// since: the inventory's delta, which finds a burst of new nodes' machines
// in one call per availability domain instead of one ListInstances per
// display name (OCI's displayName filter takes one value).
//
// ListInstances sorts by TIMECREATED newest first by default, but
// "without an availability domain, the resources are grouped by
// availability domain, then sorted" (core.ListInstancesRequest.SortBy), so
// a walk newest first is only a delta within one availability domain: it
// lists each domain the compartment's instances were seen in and stops at
// the first older instance. Before any instance was seen it lists the
// whole compartment (then every instance is new). An instance in a domain
// not seen yet is missing from the answer, which the inventory never takes
// as proof of anything: that node is found by its display name.
func (r *Reader) ListInstancesSince(ctx context.Context, since time.Time) ([]core.Instance, error) {
	ads := r.availabilityDomains()
	if len(ads) == 0 {
		all, err := r.ListInstances(ctx, "")
		return slices.DeleteFunc(all, func(ins core.Instance) bool { return createdBefore(ins, since) }), err
	}
	var out []core.Instance
	for _, ad := range ads {
		set, err := r.newestInDomain(ctx, ad, since)
		if err != nil {
			return nil, err
		}
		out = append(out, set...)
	}
	return out, nil
}

// newestInDomain walks one availability domain's instances newest first
// up to the first created before since.
func (r *Reader) newestInDomain(ctx context.Context, ad string, since time.Time) ([]core.Instance, error) {
	what := fmt.Sprintf("compartment %s availabilityDomain=%s, created since %s", r.compartment, ad, since.UTC().Format(time.RFC3339))
	req := core.ListInstancesRequest{CompartmentId: &r.compartment, AvailabilityDomain: common.String(ad),
		SortBy: core.ListInstancesSortByTimecreated, SortOrder: core.ListInstancesSortOrderDesc, Limit: common.Int(DeltaPageSize)}
	var out []core.Instance
	for range maxPages {
		resp, err := r.compute.ListInstances(ctx, req)
		if err != nil {
			return nil, ocierr.Wrap("ListInstances", what, err)
		}
		for _, ins := range resp.Items {
			if createdBefore(ins, since) {
				return out, nil
			}
			out = append(out, kept(ins))
		}
		if resp.OpcNextPage == nil || *resp.OpcNextPage == "" {
			return out, nil
		}
		req.Page = resp.OpcNextPage
	}
	return nil, fmt.Errorf("OCI ListInstances %s: more than %d pages", what, maxPages)
}

// createdBefore: the instance says when it was created, and that is before
// since. One that does not say counts as new.
func createdBefore(ins core.Instance, since time.Time) bool {
	return ins.TimeCreated != nil && ins.TimeCreated.Before(since)
}

// learnDomains remembers the availability domains of listed instances.
func (r *Reader) learnDomains(items []core.Instance) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ins := range items {
		if ad := deref(ins.AvailabilityDomain); ad != "" {
			r.domains[ad] = true
		}
	}
}

// availabilityDomains returns the domains seen so far, sorted.
func (r *Reader) availabilityDomains() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.domains))
}
