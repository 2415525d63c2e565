package computelookup

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"
)

// sortedCompute answers ListInstances as OCI documents it: newest first,
// grouped by availability domain when none is given, two items per page.
type sortedCompute struct {
	ComputeAPI
	instances []core.Instance

	mu    sync.Mutex
	pages map[string]int // availability domain ("" for all) -> pages served
}

func (s *sortedCompute) ListInstances(_ context.Context, req core.ListInstancesRequest) (core.ListInstancesResponse, error) {
	ad := deref(req.AvailabilityDomain)
	s.mu.Lock()
	s.pages[ad]++
	s.mu.Unlock()
	var set []core.Instance
	for _, ins := range s.instances {
		if ad == "" || deref(ins.AvailabilityDomain) == ad {
			set = append(set, ins)
		}
	}
	slices.SortStableFunc(set, func(a, b core.Instance) int {
		if c := strings.Compare(deref(a.AvailabilityDomain), deref(b.AvailabilityDomain)); c != 0 && ad == "" {
			return c
		}
		return b.TimeCreated.Compare(a.TimeCreated.Time)
	})
	from, _ := strconv.Atoi(deref(req.Page))
	to := min(from+2, len(set))
	resp := core.ListInstancesResponse{Items: set[from:to]}
	if to < len(set) {
		resp.OpcNextPage = common.String(strconv.Itoa(to))
	}
	return resp, nil
}

// A delta walks each availability domain seen newest first and stops at
// the first older instance; before any was seen, it lists everything.
func TestListInstancesSince(t *testing.T) {
	now := time.Unix(100_000, 0)
	var all []core.Instance
	for k := range 12 {
		all = append(all, core.Instance{Id: common.String(fmt.Sprintf("ocid1.instance.%02d", k)),
			AvailabilityDomain: common.String(fmt.Sprintf("AD-%d", k%2+1)),
			TimeCreated:        &common.SDKTime{Time: now.Add(time.Duration(k-12) * time.Minute)}})
	}
	since := now.Add(-3*time.Minute - time.Second) // the last three: 09 (AD-2), 10 (AD-1), 11 (AD-2)
	tests := []struct {
		name      string
		learn     bool // a full listing first, which shows the domains
		wantPages map[string]int
	}{
		{name: "domains known: two pages in AD-2, one in AD-1", learn: true, wantPages: map[string]int{"AD-1": 1, "AD-2": 2}},
		{name: "no domain known yet: the whole compartment", wantPages: map[string]int{"": 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := &sortedCompute{instances: all, pages: map[string]int{}}
			r := New(api, nil, "ocid1.compartment.c", "ocid1.vcn.v")
			if tt.learn {
				if _, err := r.ListInstances(context.Background(), ""); err != nil {
					t.Fatal(err)
				}
				api.pages = map[string]int{}
			}
			got, err := r.ListInstancesSince(context.Background(), since)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, ins := range got {
				ids = append(ids, deref(ins.Id))
			}
			slices.Sort(ids)
			if want := []string{"ocid1.instance.09", "ocid1.instance.10", "ocid1.instance.11"}; !slices.Equal(ids, want) {
				t.Errorf("got %v, want %v", ids, want)
			}
			if fmt.Sprint(api.pages) != fmt.Sprint(tt.wantPages) {
				t.Errorf("pages %v, want %v", api.pages, tt.wantPages)
			}
		})
	}
}
