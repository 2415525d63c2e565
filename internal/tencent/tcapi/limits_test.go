package tcapi

import (
	"strings"
	"testing"
)

func TestDocumentedLimits(t *testing.T) {
	tests := []struct {
		service, action string
		want            float64
	}{
		{"cvm", "DescribeInstances", 40},
		{"cvm", "DescribeInstancesStatus", FallbackQPS},
		{"tke", "DescribeClusterRoutes", 50},
		{"tke", "DescribeClusterRouteTables", 50},
		{"tke", "CreateClusterRoute", 20},
		{"tke", "DeleteClusterRoute", 20},
		{"clb", "DescribeLoadBalancers", 20},
		{"clb", "CreateListener", 20},
		{"vpc", "DescribeRouteTables", FallbackQPS},
		{"unknown", "Anything", FallbackQPS},
	}
	for _, tt := range tests {
		if got := (Limits{}).qps(tt.service, tt.action); got != tt.want {
			t.Errorf("%s.%s: %v, want %v", tt.service, tt.action, got, tt.want)
		}
	}
}

func TestLimitOverrides(t *testing.T) {
	l, err := ParseLimits(" DescribeInstances=10, cvm.DescribeInstances = 5 ,CreateListener=0,clb.DeleteListener=-1,DescribeTargets=2.5,")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		service, action string
		want            float64
	}{
		{"cvm", "DescribeInstances", 5},    // service.Action wins over Action
		{"other", "DescribeInstances", 10}, // Action applies to any service
		{"clb", "CreateListener", 0},
		{"clb", "DeleteListener", -1},
		{"clb", "DescribeTargets", 2.5},
		{"clb", "DescribeLoadBalancers", 20}, // untouched
	}
	for _, tt := range tests {
		if got := l.qps(tt.service, tt.action); got != tt.want {
			t.Errorf("%s.%s: %v, want %v", tt.service, tt.action, got, tt.want)
		}
	}
}

func TestParseLimitsErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"DescribeInstances", "want Action=QPS"},
		{"describeInstances=4", "want Action=QPS"},
		{"CVM.DescribeInstances=4", "want Action=QPS"},
		{"Describe Instances=4", "want Action=QPS"},
		{"DescribeInstances=fast", "QPS must be a number"},
		{"DescribeInstances=NaN", "QPS must be a number"},
		{"DescribeInstances=1,DescribeInstances=2", "set twice"},
	}
	for _, tt := range tests {
		_, err := ParseLimits(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseLimits(%q) = %v, want an error with %q", tt.in, err, tt.want)
		}
	}
	if l, err := ParseLimits(""); err != nil || len(l) != 0 {
		t.Errorf("empty: %v, %v", l, err)
	}
}
