package clbops

import (
	"reflect"
	"strings"
	"testing"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
)

// A create request carries exactly what Creation sets, after the CCM's tags.
func TestCreationApply(t *testing.T) {
	req := clb.NewCreateLoadBalancerRequest()
	req.Tags = []*clb.TagInfo{{TagKey: common.StringPtr(TagServiceUID), TagValue: common.StringPtr("u")}}
	Creation{}.apply(req)
	if req.InternetAccessible != nil || req.VipIsp != nil || req.AddressIPVersion != nil || len(req.Tags) != 1 {
		t.Fatalf("the zero Creation changed the request: %s", req.ToJsonString())
	}
	Creation{InternetChargeType: "TRAFFIC_POSTPAID_BY_HOUR", InternetMaxBandwidthOut: 50, VipIsp: "CTCC",
		MasterZoneID: "ap-guangzhou-3", Tags: map[string]string{"team": "shop", "env": "prod"}}.apply(req)
	got := req.ToJsonString()
	for _, want := range []string{`"InternetChargeType":"TRAFFIC_POSTPAID_BY_HOUR"`, `"InternetMaxBandwidthOut":50`, `"VipIsp":"CTCC"`,
		`"MasterZoneId":"ap-guangzhou-3"`, `{"TagKey":"env","TagValue":"prod"},{"TagKey":"team","TagValue":"shop"}`} {
		if !strings.Contains(got, want) {
			t.Errorf("request %s lacks %s", got, want)
		}
	}
	if req.ZoneId != nil || req.BandwidthPackageId != nil {
		t.Errorf("unset fields were sent: %s", got)
	}
}

func TestCreationDrift(t *testing.T) {
	lb := &loadBalancer{createdWith: createdWith{chargeType: "TRAFFIC_POSTPAID_BY_HOUR", bandwidthOut: 10, vipIsp: "BGP", addressIPVersion: "ipv4"}}
	for _, tt := range []struct {
		name string
		c    Creation
		want []string
	}{
		{name: "nothing asked", c: Creation{}},
		{name: "same, case-insensitive address family", c: Creation{InternetChargeType: "TRAFFIC_POSTPAID_BY_HOUR", InternetMaxBandwidthOut: 10, AddressIPVersion: "IPV4", VipIsp: "BGP"}},
		{name: "charge type changed", c: Creation{InternetChargeType: "BANDWIDTH_POSTPAID_BY_HOUR"},
			want: []string{"InternetChargeType is TRAFFIC_POSTPAID_BY_HOUR, not BANDWIDTH_POSTPAID_BY_HOUR"}},
		{name: "bandwidth and ISP changed", c: Creation{InternetMaxBandwidthOut: 100, VipIsp: "CTCC"},
			want: []string{"InternetMaxBandwidthOut is 10 Mbps, not 100", "VipIsp is BGP, not CTCC"}},
		{name: "zones and tags are not compared", c: Creation{ZoneID: "ap-guangzhou-3", Tags: map[string]string{"a": "b"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.drift(lb); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("drift = %q, want %q", got, tt.want)
			}
		})
	}
	// An answer that does not say is not drift.
	if got := (Creation{InternetChargeType: "BANDWIDTH_POSTPAID_BY_HOUR"}).drift(&loadBalancer{}); got != nil {
		t.Errorf("drift against an answer without NetworkAttributes = %q", got)
	}
}
