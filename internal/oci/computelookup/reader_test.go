package computelookup

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"
)

// subnetAPI answers GetSubnet slowly (so that lookups overlap), counting
// the calls; err, if set, is the answer.
type subnetAPI struct {
	fakeAPI
	calls atomic.Int32
	err   error
}

func (s *subnetAPI) GetSubnet(_ context.Context, req core.GetSubnetRequest) (core.GetSubnetResponse, error) {
	s.calls.Add(1)
	time.Sleep(300 * time.Millisecond)
	if s.err != nil {
		return core.GetSubnetResponse{}, s.err
	}
	return core.GetSubnetResponse{Subnet: core.Subnet{Id: req.SubnetId, VcnId: common.String("vcn-1")}}, nil
}

// Concurrent lookups of one subnet share one GetSubnet, and its answer is
// kept; a failed one is not kept, so the next lookup asks again.
func TestVCNOfSharesOneCall(t *testing.T) {
	for _, tt := range []struct {
		name      string
		err       error
		wantCalls int32 // after the concurrent lookups and one more
	}{
		{"answer kept", nil, 1},
		{"error not kept", errors.New("boom"), 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api := &subnetAPI{err: tt.err}
			r := New(api, api, "comp", "vcn-1")
			var wg sync.WaitGroup
			for range 20 {
				wg.Go(func() {
					vcn, err := r.VCNOf(context.Background(), "subnet-1")
					if (err != nil) != (tt.err != nil) || (err == nil && vcn != "vcn-1") {
						t.Errorf("VCNOf = %q, %v", vcn, err)
					}
				})
			}
			wg.Wait()
			if n := api.calls.Load(); n != 1 {
				t.Errorf("20 concurrent lookups made %d GetSubnet calls, want 1", n)
			}
			_, _ = r.VCNOf(context.Background(), "subnet-1")
			if n := api.calls.Load(); n != tt.wantCalls {
				t.Errorf("after one more lookup: %d GetSubnet calls, want %d", n, tt.wantCalls)
			}
		})
	}
}
