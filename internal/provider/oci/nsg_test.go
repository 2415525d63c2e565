package oci

import (
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/oci/lbops"
)

func TestReadNSGs(t *testing.T) {
	const (
		n1 = "ocid1.networksecuritygroup.oc1.iad.aaaa1"
		n2 = "ocid1.networksecuritygroup.oc1.iad.aaaa2"
	)
	five := strings.Join([]string{n1, n2, n1 + "3", n1 + "4", n1 + "5"}, ",")
	tests := []struct {
		name        string
		kind        lbops.Kind
		ann         map[annotations.Name]string
		wantMode    string
		wantNSGs    []string
		wantBackend []string
		wantErr     string
	}{
		{name: "nothing: the security list mode stays", kind: lbops.KindLB, wantMode: "Frontend"},
		{name: "NSG mode with backends, spaces and a duplicate", kind: lbops.KindLB,
			ann:      map[annotations.Name]string{annotations.OCISecurityRuleManagementMode.Name: "nsg", annotations.OCINetworkSecurityGroups: n1 + " , " + n2 + "," + n1, annotations.OCIBackendNetworkSecurityGroup: n2},
			wantMode: lbops.SecurityRuleNSG, wantNSGs: []string{n1, n2}, wantBackend: []string{n2}},
		{name: "SL-All is All", kind: lbops.KindLB, ann: map[annotations.Name]string{annotations.OCISecurityRuleManagementMode.Name: "SL-All"}, wantMode: "All"},
		{name: "None overrides", kind: lbops.KindNLB, ann: map[annotations.Name]string{annotations.OCISecurityRuleManagementMode.Name: "None"}, wantMode: "None"},
		{name: "backends are read in mode NSG only", kind: lbops.KindLB, ann: map[annotations.Name]string{annotations.OCIBackendNetworkSecurityGroup: n2}, wantMode: "Frontend"},
		{name: "the NLB's own list name", kind: lbops.KindNLB,
			ann:      map[annotations.Name]string{annotations.OCINLBNetworkSecurityGroups: n1, annotations.OCINetworkSecurityGroups: n2},
			wantMode: "Frontend", wantNSGs: []string{n1}},
		{name: "five NSGs fit without mode NSG", kind: lbops.KindLB, ann: map[annotations.Name]string{annotations.OCINetworkSecurityGroups: five},
			wantMode: "Frontend", wantNSGs: strings.Split(five, ",")},
		{name: "five NSGs leave no place for the managed one", kind: lbops.KindLB,
			ann:     map[annotations.Name]string{annotations.OCINetworkSecurityGroups: five, annotations.OCISecurityRuleManagementMode.Name: "NSG"},
			wantErr: "at most 4"},
		{name: "not an NSG OCID", kind: lbops.KindLB, ann: map[annotations.Name]string{annotations.OCINetworkSecurityGroups: n1 + ",ocid1.subnet.oc1..x"},
			wantErr: "is not a network security group OCID"},
		{name: "an unknown mode", kind: lbops.KindLB, ann: map[annotations.Name]string{annotations.OCISecurityRuleManagementMode.Name: "SL-Some"},
			wantErr: "must be one of NSG, SL-All, SL-Frontend, None"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{}}}
			for k, v := range tc.ann {
				svc.Annotations[string(k)] = v
			}
			s := lbops.Settings{Kind: tc.kind, SecurityListMode: "Frontend"}
			err := errors.Join(readNSGs(svc, &s)...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.SecurityListMode != tc.wantMode || !slices.Equal(s.NSGs, tc.wantNSGs) || !slices.Equal(s.BackendNSGs, tc.wantBackend) {
				t.Errorf("mode %q NSGs %v backends %v, want %q %v %v", s.SecurityListMode, s.NSGs, s.BackendNSGs, tc.wantMode, tc.wantNSGs, tc.wantBackend)
			}
		})
	}
}
