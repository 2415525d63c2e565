package cloudsim_test

import (
	"context"
	"testing"
	"time"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"

	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// The read lag set through the admin API: DescribeInstances by id answers
// a new instance as it answers an unknown id (an empty set) until its
// creation is due, within the lag; then it is there.
func TestReadLagThroughTheAdminAPI(t *testing.T) {
	sim, url := start(t, cloudsim.Options{RateLimits: map[string]float64{"DescribeInstances": 0}})
	admin := &cloudsim.AdminClient{BaseURL: url}
	const lag = 700 * time.Millisecond
	if err := admin.SetReadLag(context.Background(), lag); err != nil {
		t.Fatal(err)
	}
	if err := admin.SetReadLag(context.Background(), -time.Second); err == nil {
		t.Error("a negative read lag was accepted")
	}
	added, err := sim.AddInstances(cloudsim.Instance{PrivateIP: "10.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	cl := sdkClient(t, url, "ap-guangzhou")
	req := cvm.NewDescribeInstancesRequest()
	req.InstanceIds = common.StringPtrs([]string{added[0].ID})
	for {
		resp, err := cl.DescribeInstances(req)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Response.InstanceSet) == 1 {
			break
		}
		if *resp.Response.TotalCount != 0 {
			t.Fatalf("an invisible instance counted: %d", *resp.Response.TotalCount)
		}
		if time.Since(begin) > lag+time.Second {
			t.Fatalf("instance %s not visible %s after it was added", added[0].ID, time.Since(begin))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Off again: every write is seen at once.
	if err := sim.SetReadLag(0); err != nil {
		t.Fatal(err)
	}
	more, _ := sim.AddInstances(cloudsim.Instance{PrivateIP: "10.0.0.2"})
	req.InstanceIds = common.StringPtrs([]string{more[0].ID})
	if resp, err := cl.DescribeInstances(req); err != nil || len(resp.Response.InstanceSet) != 1 {
		t.Fatalf("with the lag off: %v %v", resp, err)
	}
}
