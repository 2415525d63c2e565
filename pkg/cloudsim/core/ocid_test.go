package core

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestValidOCID(t *testing.T) {
	tests := []struct {
		s, typ string
		want   bool
	}{
		{"ocid1.instance.oc1..aaaaaaaaabc", "instance", true},
		{"ocid1.instance.oc1.phx.abyhqljtabc", "instance", true},
		{"ocid1.instance.oc1.phx.future.abc", "instance", true},
		{"ocid1.instance.oc1..aaaaaaaaabc", "vcn", false},
		{"ocid1.instance.oc1..", "instance", false},
		{"ins-abcdefgh", "instance", false},
		{"ocid1.instance.oc1..ABC", "instance", false},
		{"ocid2.instance.oc1..abc", "instance", false},
		{NewOCID("subnet"), "subnet", true},
	}
	for _, tt := range tests {
		if got := ValidOCID(tt.s, tt.typ); got != tt.want {
			t.Errorf("ValidOCID(%q, %q) = %v, want %v", tt.s, tt.typ, got, tt.want)
		}
	}
}

func TestOCIFieldsInTheFleet(t *testing.T) {
	tests := []struct {
		name    string
		add     []Instance
		wantErr string
	}{
		{"generated ocid", []Instance{{}}, ""},
		{"given ocid", []Instance{{OCID: "ocid1.instance.oc1..aaaaaaaanode1"}}, ""},
		{"vcn and subnet ocids", []Instance{{VpcID: "ocid1.vcn.oc1..aaaaaaaavcn", SubnetID: "ocid1.subnet.oc1..aaaaaaaasn"}}, ""},
		{"malformed ocid", []Instance{{OCID: "ocid1.vnic.oc1..x"}}, "ocid"},
		{"duplicate ocid", []Instance{{OCID: "ocid1.instance.oc1..aaaaaaaadup"}, {OCID: "ocid1.instance.oc1..aaaaaaaadup"}}, "already exists"},
		{"subnet ocid as vpc", []Instance{{VpcID: "ocid1.subnet.oc1..x"}}, "vpcID"},
		{"bad compartment", []Instance{{CompartmentID: "ocid1.vcn.oc1..x"}}, "compartmentID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Config{})
			out, err := c.AddInstances(tt.add...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalid) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range out {
				if !ValidOCID(in.OCID, "instance") {
					t.Fatalf("ocid %q", in.OCID)
				}
				// Found by either id.
				if got, err := c.Instance(in.OCID); err != nil || got.ID != in.ID {
					t.Fatalf("by OCID: %v %v", got.ID, err)
				}
			}
		})
	}
}

func TestStateByOCIDAndAliases(t *testing.T) {
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	c := New(Config{Clock: clk.Now, TerminatedLinger: time.Second})
	in, err := c.AddInstances(Instance{State: "provisioning"})
	if err != nil || in[0].State != StatePending {
		t.Fatalf("alias on add: %v %v", in, err)
	}
	if _, err := c.SetInstanceState(in[0].OCID, "terminated"); err != nil {
		t.Fatal(err)
	}
	r, err := c.InstanceRecord(in[0].OCID)
	if err != nil || r.State != StateTerminating || !r.Terminated.Equal(clk.Now()) {
		t.Fatalf("record %+v %v", r, err)
	}
	clk.Advance(time.Second)
	if _, err := c.Instance(in[0].OCID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after the linger: %v", err)
	}
	// The OCID is free again once the instance is gone.
	if _, err := c.AddInstances(Instance{OCID: in[0].OCID}); err != nil {
		t.Fatal(err)
	}
}
