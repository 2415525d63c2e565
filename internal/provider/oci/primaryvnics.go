package oci

import (
	"context"
	"fmt"
	"time"

	"github.com/oracle/oci-go-sdk/v65/core"

	"github.com/ccmkit/ccm/internal/inventory"
	"github.com/ccmkit/ccm/internal/oci/computelookup"
)

// vnicProvider labels the primary-VNIC inventory's metrics, apart from the
// instances'.
const vnicProvider = ProviderName + "-vnic"

// newVnicInventory keeps the instances' primary VNICs (node addresses).
// A lookup misses into the per-instance path (ListVnicAttachments and
// GetVnic: two calls) until those calls, within a TTL, reach what a listing
// cost last time; then one compartment-wide listing
// (computelookup.PrimaryVnics: attachment pages, private-IP pages per
// subnet, public-IP pages) answers every node: initializing N nodes costs
// about 3·N/computelookup.PageSize calls instead of 2·N. An instance the listing cannot answer
// (several attached VNICs, attached meanwhile) goes the per-instance way.
func newVnicInventory(reader *computelookup.Reader, ttl time.Duration) *inventory.Inventory[computelookup.InstanceVnic] {
	return inventory.New(inventory.Source[computelookup.InstanceVnic]{
		FetchByID: oneByOne(reader.PrimaryVnicOf),
		ListAll:   reader.PrimaryVnics,
		ID:        func(v computelookup.InstanceVnic) string { return v.InstanceID },
	}, inventory.Options{Provider: vnicProvider, TTL: ttl, MaxBatch: 1, PageSize: computelookup.PageSize})
}

// primaryVnic returns the instance's primary VNIC, read at most maxAge ago.
// A public IP can be assigned or released at any time; maxAge (the
// instance cache TTL) is how late the node's ExternalIP may follow.
func (i *instances) primaryVnic(ctx context.Context, instanceID string, maxAge time.Duration) (core.Vnic, error) {
	r, err := i.vnics.Get(ctx, instanceID, maxAge)
	if err != nil {
		return core.Vnic{}, err
	}
	if !r.Found {
		// FetchByID never answers "absent" without an error; be safe anyway.
		return core.Vnic{}, fmt.Errorf("instance %s: no primary VNIC in the answer", instanceID)
	}
	return r.Item.Vnic, nil
}

// oneByOne is an inventory's FetchByID from a read of one id: OCI has no
// batch get, so the inventories use MaxBatch 1.
func oneByOne[T any](get func(context.Context, string) (T, error)) func(context.Context, []string) ([]T, error) {
	return func(ctx context.Context, ids []string) ([]T, error) {
		out := make([]T, 0, len(ids))
		for _, id := range ids {
			v, err := get(ctx, id)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
}
