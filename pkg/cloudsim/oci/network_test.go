package oci

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/identity"
)

func TestSecurityListEtag(t *testing.T) {
	e := newTestEnv(t, Options{}, core.Config{})
	vn := e.network()
	got, err := vn.GetSecurityList(ctx(t), ocicore.GetSecurityListRequest{SecurityListId: common.String(DefaultSecurityListID)})
	if err != nil {
		t.Fatal(err)
	}
	etag0 := *got.Etag
	rule := ocicore.IngressSecurityRule{
		Protocol: common.String("6"), Source: common.String("192.0.2.0/24"),
		TcpOptions: &ocicore.TcpOptions{DestinationPortRange: &ocicore.PortRange{Min: common.Int(80), Max: common.Int(80)}},
	}
	upd, err := vn.UpdateSecurityList(ctx(t), ocicore.UpdateSecurityListRequest{
		SecurityListId: common.String(DefaultSecurityListID), IfMatch: common.String(etag0),
		UpdateSecurityListDetails: ocicore.UpdateSecurityListDetails{IngressSecurityRules: append(got.IngressSecurityRules, rule)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if *upd.Etag == etag0 || len(upd.IngressSecurityRules) != 2 || len(upd.EgressSecurityRules) != 1 {
		t.Fatalf("update: etag %s (was %s), %d ingress, %d egress", *upd.Etag, etag0, len(upd.IngressSecurityRules), len(upd.EgressSecurityRules))
	}

	tests := []struct {
		name    string
		ifMatch *string
		rules   []ocicore.IngressSecurityRule
		status  int
		code    string
	}{
		{"stale etag", common.String(etag0), nil, http.StatusPreconditionFailed, CodeNoEtagMatch},
		{"bad cidr", nil, []ocicore.IngressSecurityRule{{Protocol: common.String("6"), Source: common.String("nope")}}, 400, CodeInvalidParameter},
		{"udp options on tcp", nil, []ocicore.IngressSecurityRule{{Protocol: common.String("6"), Source: common.String("0.0.0.0/0"), UdpOptions: &ocicore.UdpOptions{}}}, 400, CodeInvalidParameter},
		{"bad port range", nil, []ocicore.IngressSecurityRule{{Protocol: common.String("6"), Source: common.String("0.0.0.0/0"),
			TcpOptions: &ocicore.TcpOptions{DestinationPortRange: &ocicore.PortRange{Min: common.Int(90), Max: common.Int(80)}}}}, 400, CodeInvalidParameter},
		{"too many rules", nil, make([]ocicore.IngressSecurityRule, MaxSecurityRules+1), 400, CodeLimitExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules := tt.rules
			if rules == nil {
				rules = []ocicore.IngressSecurityRule{}
			}
			_, err := vn.UpdateSecurityList(ctx(t), ocicore.UpdateSecurityListRequest{
				SecurityListId: common.String(DefaultSecurityListID), IfMatch: tt.ifMatch,
				UpdateSecurityListDetails: ocicore.UpdateSecurityListDetails{IngressSecurityRules: rules},
			})
			wantErr(t, err, tt.status, tt.code)
		})
	}
	// Nothing changed after the failures.
	now, err := vn.GetSecurityList(ctx(t), ocicore.GetSecurityListRequest{SecurityListId: common.String(DefaultSecurityListID)})
	if err != nil || *now.Etag != *upd.Etag || len(now.IngressSecurityRules) != 2 {
		t.Fatalf("after failures: %v %v", now.Etag, err)
	}
}

func TestAvailabilityDomainsThroughIdentityClient(t *testing.T) {
	e := newTestEnv(t, Options{Network: NetworkSeed{AvailabilityDomains: []string{"Uocm:PHX-AD-2", "Uocm:PHX-AD-1"}}}, core.Config{})
	resp, err := e.identity().ListAvailabilityDomains(ctx(t), identity.ListAvailabilityDomainsRequest{CompartmentId: common.String(testTenancy)})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Items) != 2 || *resp.Items[0].Name != "Uocm:PHX-AD-1" || !strings.HasPrefix(*resp.Items[0].Id, "ocid1.availabilitydomain.") {
		t.Fatalf("ADs: %+v", resp.Items)
	}
	if got := e.core.Calls()["oci:ListAvailabilityDomains"]["OK"]; got != 1 {
		t.Fatalf("calls %d", got)
	}
}

func TestNetworkSeed(t *testing.T) {
	vcn := "ocid1.vcn.oc1..aaaaaaaavcn1"
	tests := []struct {
		name    string
		seed    NetworkSeed
		wantErr string
	}{
		{"vcn and subnets", NetworkSeed{
			VCNs:    []VCN{{ID: vcn, CIDRBlock: "10.1.0.0/16"}},
			Subnets: []Subnet{{ID: "ocid1.subnet.oc1..aaaaaaaalb1", VCNID: vcn, CIDRBlock: "10.1.1.0/24", AvailabilityDomain: "cSim:US-ASHBURN-AD-2"}},
		}, ""},
		{"subnet outside vcn", NetworkSeed{
			VCNs:    []VCN{{ID: vcn, CIDRBlock: "10.1.0.0/16"}},
			Subnets: []Subnet{{VCNID: vcn, CIDRBlock: "10.2.1.0/24"}},
		}, "inside the VCN"},
		{"unknown vcn", NetworkSeed{Subnets: []Subnet{{VCNID: vcn}}}, "does not exist"},
		{"bad id", NetworkSeed{VCNs: []VCN{{ID: "vcn-1"}}}, "not a VCN OCID"},
		{"vcn too big", NetworkSeed{VCNs: []VCN{{CIDRBlock: "10.0.0.0/8"}}}, "/16 to /30"},
		{"unknown AD", NetworkSeed{Subnets: []Subnet{{AvailabilityDomain: "AD-9"}}}, "availabilityDomain"},
		{"security list of another vcn", NetworkSeed{
			VCNs:    []VCN{{ID: vcn, CIDRBlock: "10.1.0.0/16"}},
			Subnets: []Subnet{{VCNID: vcn, SecurityListIDs: []string{DefaultSecurityListID}}},
		}, "does not exist in VCN"},
		{"bad compartment", NetworkSeed{Compartments: []string{"ocid1.vcn.oc1..x"}}, "compartment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newNetwork(DefaultRegion)
			before := n.state()
			err := n.seed(tt.seed)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if after := n.state(); len(after.VCNs) != len(before.VCNs) || len(after.Subnets) != len(before.Subnets) {
				t.Fatal("a failed seed changed the network")
			}
		})
	}
}
