package ociapi

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"
)

// With ReadPerOperation, a burst of one read operation waits for its own
// bucket, while another read operation goes at once; with one shared
// bucket it waits too. The waits are the limiter's own (client_wait_seconds),
// not wall time, which a loaded machine stretches.
func TestClientsReadPerOperation(t *testing.T) {
	for _, tt := range []struct {
		name         string
		perOperation bool
		otherWaits   bool
	}{
		{"per operation", true, false},
		{"shared", false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(&recorder{})
			defer srv.Close()
			c := testClients(t, srv.URL, Limits{ReadQPS: 2, ReadBurst: 1, WriteQPS: 2, WriteBurst: 1, ReadPerOperation: tt.perOperation})
			ctx := context.Background()
			get := func() {
				if _, err := c.Compute.GetInstance(ctx, core.GetInstanceRequest{InstanceId: common.String(instanceID)}); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now()
			get()
			get()
			if d := time.Since(start); d < 400*time.Millisecond {
				t.Errorf("2 GetInstance at 2/s, burst 1, took %s; want >= 500ms", d)
			}
			before := waitedSeconds(t, "compute", "GET /instances")
			_, _ = c.Compute.ListInstances(ctx, core.ListInstancesRequest{CompartmentId: common.String("ocid1.compartment.oc1..x")})
			w := waitedSeconds(t, "compute", "GET /instances") - before
			// Shared: the next token is due 500 ms after the second
			// GetInstance took its own; the GetInstance answer itself
			// takes a little of that.
			if waited := w > 0.2; waited != tt.otherWaits || (!tt.otherWaits && w > 0.02) {
				t.Errorf("ListInstances after GetInstance waited %.3fs for the limiter; want waiting=%v", w, tt.otherWaits)
			}
		})
	}
}
