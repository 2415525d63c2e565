package annotations

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

const testName Name = Prefix + "test"

func svcWith(value *string) *corev1.Service {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{}}}
	if value != nil {
		svc.Annotations[string(testName)] = *value
	}
	return svc
}

func ptr(s string) *string { return &s }

// wantErr: "" no error, "unset" ErrNotSet, else a substring of an *InvalidError.
func checkErr(t *testing.T, err error, wantErr string) {
	t.Helper()
	switch wantErr {
	case "":
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
	case "unset":
		if !errors.Is(err, ErrNotSet) {
			t.Fatalf("err = %v, want ErrNotSet", err)
		}
	default:
		var inv *InvalidError
		if !errors.As(err, &inv) {
			t.Fatalf("err = %v, want an *InvalidError", err)
		}
		if inv.Name != testName || !strings.Contains(err.Error(), wantErr) || !strings.Contains(err.Error(), string(testName)) {
			t.Fatalf("err = %q, want it to name %s and contain %q", err, testName, wantErr)
		}
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		value   *string
		want    string
		wantErr string
	}{
		{nil, "", "unset"},
		{ptr(""), "", "unset"},
		{ptr("   "), "", "unset"},
		{ptr(" lb-abc "), "lb-abc", ""},
	}
	for _, tc := range tests {
		got, err := testName.StringFromService(svcWith(tc.value))
		checkErr(t, err, tc.wantErr)
		if got != tc.want {
			t.Errorf("StringFromService(%v) = %q, want %q", tc.value, got, tc.want)
		}
	}
	if _, err := testName.StringFromService(nil); !errors.Is(err, ErrNotSet) {
		t.Errorf("nil Service: err = %v, want ErrNotSet", err)
	}
}

func TestBool(t *testing.T) {
	tests := []struct {
		value   *string
		want    bool
		wantErr string
	}{
		{nil, false, "unset"},
		{ptr("true"), true, ""},
		{ptr("FALSE"), false, ""},
		{ptr("1"), true, ""},
		{ptr("yes"), false, `invalid value "yes": must be true or false`},
	}
	for _, tc := range tests {
		got, err := testName.BoolFromService(svcWith(tc.value))
		checkErr(t, err, tc.wantErr)
		if got != tc.want {
			t.Errorf("BoolFromService(%v) = %v, want %v", tc.value, got, tc.want)
		}
	}
}

func TestInt(t *testing.T) {
	tests := []struct {
		value    *string
		min, max int
		want     int
		wantErr  string
	}{
		{nil, 0, 10, 0, "unset"},
		{ptr("7"), 0, 10, 7, ""},
		{ptr(" 2 "), 2, 10, 2, ""},
		{ptr("11"), 2, 10, 0, `invalid value "11": must be between 2 and 10`},
		{ptr("1"), 2, 10, 0, "must be between 2 and 10"},
		{ptr("3.5"), 2, 10, 0, "must be an integer"},
	}
	for _, tc := range tests {
		got, err := testName.IntInRangeFromService(svcWith(tc.value), tc.min, tc.max)
		checkErr(t, err, tc.wantErr)
		if got != tc.want {
			t.Errorf("IntInRangeFromService(%v) = %v, want %v", tc.value, got, tc.want)
		}
	}
}

func TestDuration(t *testing.T) {
	tests := []struct {
		value   *string
		want    time.Duration
		wantErr string
	}{
		{nil, 0, "unset"},
		{ptr("10s"), 10 * time.Second, ""},
		{ptr("1m30s"), 90 * time.Second, ""},
		{ptr("30"), 30 * time.Second, ""},
		{ptr("-5s"), 0, "must not be negative"},
		{ptr("soon"), 0, `invalid value "soon": must be a duration`},
	}
	for _, tc := range tests {
		got, err := testName.DurationFromService(svcWith(tc.value))
		checkErr(t, err, tc.wantErr)
		if got != tc.want {
			t.Errorf("DurationFromService(%v) = %v, want %v", tc.value, got, tc.want)
		}
	}
}

func TestEnum(t *testing.T) {
	tests := []struct {
		value   *string
		want    string
		wantErr string
	}{
		{nil, "", "unset"},
		{ptr("private"), "private", ""},
		{ptr("Private"), "private", ""},
		{ptr("internal"), "", `invalid value "internal": must be one of public, private`},
	}
	for _, tc := range tests {
		got, err := testName.EnumFromService(svcWith(tc.value), "public", "private")
		checkErr(t, err, tc.wantErr)
		if got != tc.want {
			t.Errorf("EnumFromService(%v) = %q, want %q", tc.value, got, tc.want)
		}
	}
}

func TestSelector(t *testing.T) {
	sel, err := testName.SelectorFromService(svcWith(ptr("pool=edge,!spot")))
	checkErr(t, err, "")
	if !sel.Matches(labels.Set{"pool": "edge"}) || sel.Matches(labels.Set{"pool": "edge", "spot": "1"}) {
		t.Errorf("selector %s matches wrongly", sel)
	}
	_, err = testName.SelectorFromService(svcWith(ptr("pool in edge")))
	checkErr(t, err, "must be a label selector")
	_, err = testName.SelectorFromService(svcWith(nil))
	checkErr(t, err, "unset")
}

// Every constant is under one of the three known prefixes, so that a typo
// in a name shows up here rather than as a silently ignored annotation.
func TestNamesArePrefixed(t *testing.T) {
	for _, n := range []Name{
		TencentLBType, TencentLBInternalSubnetID, TencentLBName, TencentLBKind,
		TKEExistedLBID, TKEInternalSubnetID, TKEBackendsLabel, TKELoadBalanceID, TKELocalOnlyBindNodeWithPod,
		TKELocalWeightedBalance, TKEInternetChargeType, TKEInternetMaxBandwidthOut, TKELegacyInternetChargeType, TKELegacyInternetMaxBandwidthOut, TKEExtensiveParameters,
		HealthCheckEnabled, HealthCheckProtocol, HealthCheckPort, HealthCheckPath,
		HealthCheckInterval, HealthCheckTimeout, HealthCheckHealthyThreshold,
		HealthCheckUnhealthyThreshold, NodeSelector, SessionAffinityTimeout, DriftDetected, EndpointsChanged,
	} {
		s := n.String()
		if !strings.HasPrefix(s, Prefix) &&
			!strings.HasPrefix(s, "service.beta.kubernetes.io/tencentcloud-loadbalancer-") &&
			!strings.HasPrefix(s, "service.kubernetes.io/") &&
			!strings.HasPrefix(s, "kubernetes.io/service.") &&
			!strings.HasPrefix(s, "service.cloud.tencent.com/") {
			t.Errorf("%s: unexpected prefix", s)
		}
	}
}
