package core

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestInstanceFirewalls(t *testing.T) {
	nsg := func(s string) string { return "ocid1.networksecuritygroup.oc1..aaaaaaaa" + s }
	tests := []struct {
		name    string
		sgs     []string
		nsgs    []string
		wantErr string
	}{
		{"none", nil, nil, ""},
		{"both", []string{"sg-abcd1234", "sg-00000001"}, []string{nsg("one")}, ""},
		{"malformed sg", []string{"sg-ABC"}, nil, "malformed"},
		{"duplicate sg", []string{"sg-abcd1234", "sg-abcd1234"}, nil, "twice"},
		{"not an NSG OCID", nil, []string{"ocid1.securitylist.oc1..aaaaaaaaone"}, "not a network security group OCID"},
		// "A VNIC can be added to a maximum of five NSGs" (securityrules.htm).
		{"six NSGs", nil, []string{nsg("a"), nsg("b"), nsg("c"), nsg("d"), nsg("e"), nsg("f")}, "at most 5"},
		{"duplicate NSG", nil, []string{nsg("a"), nsg("a")}, "twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Config{Region: "ap-guangzhou", Clock: func() time.Time { return time.Unix(1e9, 0) }})
			added, err := c.AddInstances(Instance{SecurityGroupIDs: tt.sgs, NSGIDs: tt.nsgs})
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("AddInstances: %v, want %q", err, tt.wantErr)
				}
				// The same check guards SetInstanceFirewalls.
				in, err := c.AddInstances(Instance{})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.SetInstanceFirewalls(in[0].ID, Firewalls{SecurityGroupIDs: &tt.sgs, NSGIDs: &tt.nsgs}); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("SetInstanceFirewalls: %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := c.Instance(added[0].ID)
			if strings.Join(got.SecurityGroupIDs, ",") != strings.Join(tt.sgs, ",") || strings.Join(got.NSGIDs, ",") != strings.Join(tt.nsgs, ",") {
				t.Fatalf("stored %v %v", got.SecurityGroupIDs, got.NSGIDs)
			}
		})
	}
}

func TestSetInstanceFirewallsKeepsWhatIsNotGiven(t *testing.T) {
	c := New(Config{Region: "ap-guangzhou"})
	in, err := c.AddInstances(Instance{SecurityGroupIDs: []string{"sg-aaaaaaaa"}})
	if err != nil {
		t.Fatal(err)
	}
	nsgs := []string{"ocid1.networksecuritygroup.oc1..aaaaaaaaone"}
	got, err := c.SetInstanceFirewalls(in[0].OCID, Firewalls{NSGIDs: &nsgs})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.SecurityGroupIDs) != 1 || len(got.NSGIDs) != 1 {
		t.Fatalf("after setting NSGs only: %+v", got)
	}
	// Copies handed out do not alias the fleet's slices.
	got.NSGIDs[0] = "changed"
	again, _ := c.Instance(in[0].ID)
	if again.NSGIDs[0] != nsgs[0] {
		t.Fatal("a returned instance aliases the stored NSG list")
	}
	empty := []string{}
	got, err = c.SetInstanceFirewalls(in[0].ID, Firewalls{SecurityGroupIDs: &empty})
	if err != nil || len(got.SecurityGroupIDs) != 0 || len(got.NSGIDs) != 1 {
		t.Fatalf("clearing security groups: %+v, %v", got, err)
	}
	if _, err := c.SetInstanceFirewalls("ins-missing1", Firewalls{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown instance: %v", err)
	}
}
