package cloudsim_test

import (
	"testing"

	"github.com/ccmkit/ccm/pkg/cloudsim"
)

func TestRateLimitFlag(t *testing.T) {
	r := cloudsim.RateLimitFlag{}
	for _, s := range []string{"DescribeInstances=5", " CreateListener = 0.5 "} {
		if err := r.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	if r["DescribeInstances"] != 5 || r["CreateListener"] != 0.5 {
		t.Fatalf("%v", r)
	}
	for _, bad := range []string{"DescribeInstances", "=5", "A=fast", "A=NaN"} {
		if err := r.Set(bad); err == nil {
			t.Errorf("%q: want error", bad)
		}
	}
}
