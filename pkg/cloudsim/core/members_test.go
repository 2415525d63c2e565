package core

import (
	"net/netip"
	"testing"
)

func TestMembersBind(t *testing.T) {
	m := Members{}
	a, b := netip.MustParseAddr("127.240.0.1"), netip.MustParseAddr("127.240.0.2")
	m.Bind("lb-1", a, []string{"sg-1", "sg-2"})
	m.Bind("lb-2", b, []string{"sg-2"})
	if len(m["sg-1"]) != 1 || m["sg-2"]["lb-1"] != a || m["sg-2"]["lb-2"] != b {
		t.Fatalf("after binding: %v", m)
	}
	m.Bind("lb-1", a, []string{"sg-3"}) // replaces, does not add
	if _, ok := m["sg-1"]; ok {
		t.Errorf("sg-1 kept with no member: %v", m)
	}
	if _, ok := m["sg-2"]["lb-1"]; ok || m["sg-3"]["lb-1"] != a {
		t.Errorf("after rebinding: %v", m)
	}
	m.Bind("lb-2", b, nil) // unbinds
	if len(m) != 1 || len(m["sg-3"]) != 1 {
		t.Errorf("after unbinding: %v", m)
	}
}
