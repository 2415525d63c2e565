package annotations

import (
	"errors"
	"strings"
	"testing"

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
		TencentLBType.Name, TencentLBInternalSubnetID, TencentLBName, TencentLBKind.Name,
		TKEExistedLBID, TKEInternalSubnetID, TKEBackendsLabel, TKELoadBalanceID, TKELocalOnlyBindNodeWithPod.Name,
		TKELocalWeightedBalance.Name, TKEInternetChargeType.Name, TKEInternetMaxBandwidthOut.Name, TKELegacyInternetChargeType.Name,
		TKELegacyInternetMaxBandwidthOut.Name, TKEExtensiveParameters,
		HealthCheckEnabled.Name, HealthCheckProtocol.Name, HealthCheckPort.Name, HealthCheckPath,
		HealthCheckInterval.Name, HealthCheckTimeout.Name, HealthCheckHealthyThreshold.Name,
		HealthCheckUnhealthyThreshold.Name, NodeSelector, SessionAffinityTimeout.Name, DriftDetected, EndpointsChanged,
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
