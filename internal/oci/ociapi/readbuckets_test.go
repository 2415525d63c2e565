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
// bucket it waits too.
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
			c := testClients(t, srv.URL, Limits{ReadQPS: 5, ReadBurst: 1, WriteQPS: 5, WriteBurst: 1, ReadPerOperation: tt.perOperation})
			ctx := context.Background()
			get := func() {
				if _, err := c.Compute.GetInstance(ctx, core.GetInstanceRequest{InstanceId: common.String(instanceID)}); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now()
			get()
			get()
			if d := time.Since(start); d < 150*time.Millisecond {
				t.Errorf("2 GetInstance at 5/s, burst 1, took %s; want >= 200ms", d)
			}
			start = time.Now()
			_, _ = c.Compute.ListInstances(ctx, core.ListInstancesRequest{CompartmentId: common.String("ocid1.compartment.oc1..x")})
			d := time.Since(start)
			if waited := d > 120*time.Millisecond; waited != tt.otherWaits {
				t.Errorf("ListInstances after GetInstance took %s; want waiting=%v", d, tt.otherWaits)
			}
		})
	}
}
