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
// not wall time, which a loaded machine stretches; and a token takes 2 s to
// come back, far more than a starved goroutine takes between two calls
// (at 2/s, a 500 ms gap on a loaded CI machine once refilled the shared
// bucket before the second call asked).
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
			c := testClients(t, srv.URL, Limits{ReadQPS: 0.5, ReadBurst: 1, WriteQPS: 2, WriteBurst: 1, ReadPerOperation: tt.perOperation})
			ctx := context.Background()
			get := func() {
				if _, err := c.Compute.GetInstance(ctx, core.GetInstanceRequest{InstanceId: common.String(instanceID)}); err != nil {
					t.Fatal(err)
				}
			}
			get() // takes GetInstance's token (shared: the only one)
			before := waitedSeconds(t, "compute", "GET /instances")
			_, _ = c.Compute.ListInstances(ctx, core.ListInstancesRequest{CompartmentId: common.String("ocid1.compartment.oc1..x")})
			w := waitedSeconds(t, "compute", "GET /instances") - before
			if waited := w > 0.5; waited != tt.otherWaits || (!tt.otherWaits && w > 0.02) {
				t.Errorf("ListInstances after GetInstance waited %.3fs for the limiter; want waiting=%v", w, tt.otherWaits)
			}
			if !tt.perOperation {
				return
			}
			// GetInstance's own bucket is still empty: its next call waits.
			start := time.Now()
			get()
			if d := time.Since(start); d < time.Second {
				t.Errorf("a second GetInstance at 0.5/s, burst 1, took %s; want about 2s", d)
			}
		})
	}
}
