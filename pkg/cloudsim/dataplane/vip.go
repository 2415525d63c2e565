package dataplane

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
)

// DefaultVIPRange is the default pool of VIPs. Linux routes all of
// 127.0.0.0/8 to the loopback interface, so any of these addresses can be
// bound without configuring anything, and it stays clear of the 127.0.x.y
// addresses tests use for their stand-in nodes.
const DefaultVIPRange = "127.240.0.1-127.240.255.254"

// ErrNoVIP is returned when the VIP pool is exhausted.
var ErrNoVIP = errors.New("no free VIP left in the pool")

// vipPool hands out IPv4 addresses from an inclusive range. It allocates
// with a moving cursor that starts at a random place, so a released address
// is not reused until the pool wraps around: connections to a deleted LB's
// VIP cannot reach a new LB at once. Callers hold Plane.mu.
type vipPool struct {
	first, last uint32
	next        uint32
	used        map[uint32]string // address -> owner
}

// parseVIPRange accepts "A-B" (inclusive) or a CIDR prefix; for a prefix the
// network and broadcast addresses are left out when the prefix is shorter
// than /31.
func parseVIPRange(s string) (*vipPool, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		s = DefaultVIPRange
	}
	var first, last netip.Addr
	if a, b, ok := strings.Cut(s, "-"); ok {
		var err1, err2 error
		first, err1 = netip.ParseAddr(strings.TrimSpace(a))
		last, err2 = netip.ParseAddr(strings.TrimSpace(b))
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("VIP range %q: want A-B with two IPv4 addresses, or a CIDR prefix", s)
		}
	} else {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("VIP range %q: want A-B with two IPv4 addresses, or a CIDR prefix", s)
		}
		p = p.Masked()
		if !p.Addr().Is4() {
			return nil, fmt.Errorf("VIP range %q: only IPv4 is supported", s)
		}
		if p.Bits() < 8 {
			return nil, fmt.Errorf("VIP range %q: a prefix shorter than /8 is not supported", s)
		}
		first = p.Addr()
		size := uint32(1) << (32 - p.Bits())
		last = u32Addr(addrU32(first) + size - 1)
		if p.Bits() < 31 {
			first, last = first.Next(), last.Prev()
		}
	}
	if !first.Is4() || !last.Is4() {
		return nil, fmt.Errorf("VIP range %q: only IPv4 is supported", s)
	}
	if last.Less(first) {
		return nil, fmt.Errorf("VIP range %q: the last address is before the first", s)
	}
	p := &vipPool{first: addrU32(first), last: addrU32(last), used: map[uint32]string{}}
	// Start at a random address so that two simulators on one machine (for
	// example parallel test processes) rarely hand out the same VIP.
	p.next = p.first + uint32(rand.Uint64N(p.size()))
	return p, nil
}

func addrU32(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func u32Addr(v uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

func (p *vipPool) size() uint64 { return uint64(p.last-p.first) + 1 }

func (p *vipPool) alloc(owner string) (netip.Addr, error) {
	if uint64(len(p.used)) >= p.size() {
		return netip.Addr{}, fmt.Errorf("allocating a VIP for %s: %w (%s - %s, %d addresses)",
			owner, ErrNoVIP, u32Addr(p.first), u32Addr(p.last), p.size())
	}
	for {
		v := p.next
		if p.next == p.last {
			p.next = p.first
		} else {
			p.next++
		}
		if _, taken := p.used[v]; !taken {
			p.used[v] = owner
			return u32Addr(v), nil
		}
	}
}

// reserve takes a specific address (for example one a caller asked for).
func (p *vipPool) reserve(a netip.Addr, owner string) error {
	if !a.Is4() {
		return fmt.Errorf("VIP %s is not IPv4", a)
	}
	v := addrU32(a)
	if v < p.first || v > p.last {
		return fmt.Errorf("VIP %s is outside the pool %s - %s", a, u32Addr(p.first), u32Addr(p.last))
	}
	if o, taken := p.used[v]; taken {
		return fmt.Errorf("VIP %s is already used by %s", a, o)
	}
	p.used[v] = owner
	return nil
}

func (p *vipPool) release(a netip.Addr) {
	if a.Is4() {
		delete(p.used, addrU32(a))
	}
}
