package tencentcloud

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/lb/lbspec"
	"github.com/ccmkit/ccm/internal/tencent/clbops"
)

func TestCreationAnnotations(t *testing.T) {
	var (
		charge    = annotations.TKEInternetChargeType.String()
		bandwidth = annotations.TKEInternetMaxBandwidthOut.String()
		oldCharge = annotations.TKELegacyInternetChargeType.String()
		oldBW     = annotations.TKELegacyInternetMaxBandwidthOut.String()
		ext       = string(annotations.TKEExtensiveParameters)
	)
	public, private, adopted := lbspec.Placement{}, lbspec.Placement{Internal: true, SubnetID: "subnet-12345678"}, lbspec.Placement{AdoptID: "lb-12345678"}
	for _, tt := range []struct {
		name     string
		ann      map[string]string
		p        lbspec.Placement
		want     clbops.Creation
		wantName string
		warning  string // a substring of the one warning, if any
		wantErr  string
	}{
		{name: "none", p: public},
		{name: "TKE's annotations", ann: map[string]string{charge: "BANDWIDTH_POSTPAID_BY_HOUR", bandwidth: "100"}, p: public,
			want: clbops.Creation{InternetChargeType: "BANDWIDTH_POSTPAID_BY_HOUR", InternetMaxBandwidthOut: 100}},
		{name: "legacy names", ann: map[string]string{oldCharge: "TRAFFIC_POSTPAID_BY_HOUR", oldBW: "2048"}, p: public,
			want: clbops.Creation{InternetChargeType: "TRAFFIC_POSTPAID_BY_HOUR", InternetMaxBandwidthOut: 2048}},
		{name: "both names agree", ann: map[string]string{charge: "TRAFFIC_POSTPAID_BY_HOUR", oldCharge: "TRAFFIC_POSTPAID_BY_HOUR"}, p: public,
			want: clbops.Creation{InternetChargeType: "TRAFFIC_POSTPAID_BY_HOUR"}},
		{name: "both names disagree", ann: map[string]string{bandwidth: "10", oldBW: "20"}, p: public, wantErr: "disagree: set only one of them"},
		{name: "bandwidth out of range", ann: map[string]string{bandwidth: "4096"}, p: public, wantErr: bandwidth},
		{name: "prepaid is not TKE's annotation", ann: map[string]string{charge: "BANDWIDTH_PREPAID"}, p: public, wantErr: charge},
		{name: "passthrough", p: public, ann: map[string]string{ext: `{"AddressIPVersion":"ipv4","VipIsp":"CTCC","InternetAccessible":{"InternetChargeType":"BANDWIDTH_PACKAGE","BandwidthpkgSubType":"SINGLEISP_CTCC"},` +
			`"BandwidthPackageId":"bwp-12345678","MasterZoneId":"ap-guangzhou-3","SlaveZoneId":"ap-guangzhou-4","LoadBalancerName":"shop_web","Tags":[{"TagKey":"team","TagValue":"shop"}]}`},
			want: clbops.Creation{AddressIPVersion: "ipv4", VipIsp: "CTCC", InternetChargeType: "BANDWIDTH_PACKAGE", BandwidthPackageSubType: "SINGLEISP_CTCC",
				BandwidthPackageID: "bwp-12345678", MasterZoneID: "ap-guangzhou-3", SlaveZoneID: "ap-guangzhou-4", Tags: map[string]string{"team": "shop"}},
			wantName: "shop_web"},
		{name: "passthrough agrees with the annotation", p: public, ann: map[string]string{bandwidth: "30", ext: `{"InternetAccessible":{"InternetMaxBandwidthOut":30}}`},
			want: clbops.Creation{InternetMaxBandwidthOut: 30}},
		{name: "passthrough disagrees with the annotation", p: public, ann: map[string]string{charge: "TRAFFIC_POSTPAID_BY_HOUR", ext: `{"InternetAccessible":{"InternetChargeType":"BANDWIDTH_POSTPAID_BY_HOUR"}}`},
			wantErr: "disagrees with the dedicated annotation"},
		{name: "unknown field", p: public, ann: map[string]string{ext: `{"VipIsp":"BGP","Foo":1}`}, wantErr: `unknown field "Foo"; the accepted fields are`},
		{name: "field the CCM sets", p: public, ann: map[string]string{ext: `{"VpcId":"vpc-12345678"}`}, wantErr: "field VpcId is set by the CCM"},
		{name: "not JSON", p: public, ann: map[string]string{ext: `VipIsp=CTCC`}, wantErr: "must be a JSON object"},
		{name: "bad enum", p: public, ann: map[string]string{ext: `{"VipIsp":"ACME"}`}, wantErr: "VipIsp must be one of"},
		{name: "our tag keys", p: public, ann: map[string]string{ext: `{"Tags":[{"TagKey":"ccmkit.io/service-uid","TagValue":"x"}]}`}, wantErr: "keys under ccmkit.io/ are the CCM's own"},
		{name: "two names for the CLB", p: public, ann: map[string]string{string(annotations.TencentLBName): "a", ext: `{"LoadBalancerName":"b"}`}, wantErr: "name the CLB differently"},
		{name: "private: public settings ignored", p: private, ann: map[string]string{charge: "TRAFFIC_POSTPAID_BY_HOUR", bandwidth: "20"},
			warning: "The CLB is private"},
		{name: "adopted: all ignored", p: adopted, ann: map[string]string{ext: `{"Tags":[{"TagKey":"team","TagValue":"shop"}]}`},
			warning: "The CLB is adopted (service.kubernetes.io/tke-existed-lbid lb-12345678)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, name, warnings, err := creation(lbService(tt.ann), tt.p)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c, tt.want) || name != tt.wantName {
				t.Errorf("got %+v name %q, want %+v name %q", c, name, tt.want, tt.wantName)
			}
			switch {
			case tt.warning == "" && len(warnings) > 0:
				t.Errorf("unexpected warnings %v", warnings)
			case tt.warning != "" && (len(warnings) != 1 || !strings.Contains(warnings[0].Message, tt.warning)):
				t.Errorf("warnings = %v, want one containing %q", warnings, tt.warning)
			}
		})
	}
}

// Against cloudsim: the CLB is created with the annotations' settings; a
// later change of them is a Warning Event, once, with no write.
func TestCreationSettingsAgainstCloudsim(t *testing.T) {
	e := newSubsetEnv(t, 2)
	e.lb.UseRecorder(e.events)
	ctx := context.Background()
	svc := subsetService("web", types.UID("uid-creation"))
	svc.Annotations = map[string]string{
		annotations.TKEInternetMaxBandwidthOut.String(): "200",
		string(annotations.TKEExtensiveParameters): `{"InternetAccessible":{"InternetChargeType":"BANDWIDTH_PACKAGE"},"VipIsp":"CTCC",` +
			`"LoadBalancerName":"shop_web","Tags":[{"TagKey":"team","TagValue":"shop"}]}`,
	}
	if _, err := e.lb.EnsureLoadBalancer(ctx, "k8s", svc, e.nodes); err != nil {
		t.Fatal(err)
	}
	lbs := e.sim.Tencent().CLB().LoadBalancers()
	if len(lbs) != 1 {
		t.Fatalf("%d CLBs, want 1", len(lbs))
	}
	got := lbs[0]
	if got.Internet == nil || got.Internet.ChargeType != "BANDWIDTH_PACKAGE" || got.Internet.BandwidthOut != 200 || got.Internet.VipIsp != "CTCC" {
		t.Errorf("CLB network settings = %+v, want BANDWIDTH_PACKAGE, 200 Mbps, CTCC", got.Internet)
	}
	if got.Name != "shop_web" || got.Tags["team"] != "shop" || got.Tags["ccmkit.io/service-uid"] != "uid-creation" {
		t.Errorf("CLB name %q tags %v, want shop_web with team=shop and the CCM's own", got.Name, got.Tags)
	}
	if ev := e.drainEvents(); len(ev) > 0 {
		t.Errorf("events after a matching create: %q", ev)
	}

	// The user now asks for another bandwidth: reported once, nothing written.
	svc.Annotations[annotations.TKEInternetMaxBandwidthOut.String()] = "500"
	e.sim.ResetCalls()
	for range 2 {
		if _, err := e.lb.EnsureLoadBalancer(ctx, "k8s", svc, e.nodes); err != nil {
			t.Fatal(err)
		}
	}
	var drift []string
	for _, ev := range e.drainEvents() {
		if strings.Contains(ev, clbops.CreationDriftReason) {
			drift = append(drift, ev)
		}
	}
	if len(drift) != 1 || !strings.Contains(drift[0], "InternetMaxBandwidthOut is 200 Mbps, not 500") {
		t.Errorf("drift events = %q, want one naming the bandwidth", drift)
	}
	for action := range e.sim.Calls() {
		if !strings.HasPrefix(action, "Describe") {
			t.Errorf("an unchanged CLB was written: %s", action)
		}
	}
	if e.sim.Tencent().CLB().LoadBalancers()[0].Internet.BandwidthOut != 200 {
		t.Errorf("the CLB's bandwidth changed")
	}
}
