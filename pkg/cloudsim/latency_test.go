package cloudsim_test

import (
	"testing"
	"time"

	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"

	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// TestLatencyThroughSDK: a call through the real SDK takes at least the
// configured answer time, and the default is the dialect's realistic one.
func TestLatencyThroughSDK(t *testing.T) {
	lat, err := cloudsim.ParseLatency("read=60ms,write=60ms")
	if err != nil {
		t.Fatal(err)
	}
	sim, url := start(t, cloudsim.Options{Latency: lat})
	c := sdkClient(t, url, "ap-guangzhou")
	for range 3 {
		began := time.Now()
		if _, err := c.DescribeInstances(cvm.NewDescribeInstancesRequest()); err != nil {
			t.Fatal(err)
		}
		if el := time.Since(began); el < 60*time.Millisecond {
			t.Fatalf("DescribeInstances answered in %v, want at least 60ms", el)
		}
	}
	if got := sim.Core().LatencyFor("tencent"); got != *lat {
		t.Fatalf("LatencyFor(tencent) = %v, want %v", got, lat)
	}

	def := cloudsim.New(cloudsim.Options{DisableDataPlane: true})
	t.Cleanup(func() { _ = def.Close() })
	if got := def.Core().LatencyFor("tencent"); got.Read.Median < 10*time.Millisecond || got.Write.Median < got.Read.Median {
		t.Fatalf("default Tencent latency %v: want realistic reads (>= 10ms) and slower writes", got)
	}
	if got := def.Core().LatencyFor("oci"); got.Read.Median < 10*time.Millisecond || got.Write.Median < got.Read.Median {
		t.Fatalf("default OCI latency %v: want realistic reads (>= 10ms) and slower writes", got)
	}
}
