package dataplane

import (
	"net/netip"
	"sync/atomic"
)

// ICMP is the protocol of a PING health check, for Flow.Protocol.
const ICMP = "ICMP"

// Firewall decides which flows the network around a load balancer carries:
// security groups, security lists, network security groups. The data plane
// is dialect-neutral, so a dialect hands each load balancer its Firewall in
// Sync, and the plane asks it about every new flow: a TCP connection or a
// UDP client's first datagram (Inbound, then Forward) and every health
// check probe (Probe). Rules are evaluated per flow when it starts, so a rule
// change applies to new flows at once while established ones go on, as
// with a stateful firewall.
//
// A nil error admits the flow; an error denies it and says why (it shows
// in the listener's status and the target's LastError). Implementations
// must not call back into the Plane and must not block on a lock that is
// held while the dialect calls Sync, Remove or Close: the plane waits for
// its connections while syncing.
type Firewall interface {
	// Inbound: the client's packets to VIP:port.
	Inbound(f Flow) error
	// Forward: the load balancer sends the client's traffic to a target.
	Forward(f Flow) error
	// Probe: the load balancer health-checks a target.
	Probe(f Flow) error
}

// Flow describes one flow for a Firewall.
type Flow struct {
	LB       string // load balancer ID
	Listener string // listener ID
	// Protocol is TCP or UDP (the listener's, or a probe's transport), or
	// ICMP for a PING probe.
	Protocol string
	// Client is the client's address and port (the TCP peer or UDP
	// source); zero for probes.
	Client netip.AddrPort
	// VIP is the load balancer's address and the listener port.
	VIP netip.AddrPort
	// Target is the target's address and the port the flow goes to (the
	// probe port for a probe); zero for Inbound.
	Target netip.AddrPort
	// TargetID is Target.ID (e.g. an instance id); empty for Inbound.
	TargetID string
}

// fwRef holds a load balancer's current Firewall; its listeners share it,
// so Sync can replace it without restarting them.
type fwRef struct{ p atomic.Pointer[fwBox] }

type fwBox struct{ fw Firewall }

func (r *fwRef) set(fw Firewall) { r.p.Store(&fwBox{fw}) }

func (r *fwRef) get() Firewall {
	if r == nil {
		return nil
	}
	if b := r.p.Load(); b != nil {
		return b.fw
	}
	return nil
}

// admitInbound asks only about the client's packets to the VIP (before a
// target is chosen).
func (l *listener) admitInbound(client netip.AddrPort) error {
	fw := l.fw.get()
	if fw == nil {
		return nil
	}
	err := fw.Inbound(Flow{LB: l.lbID, Listener: l.id, Protocol: l.proto, Client: client, VIP: l.addr})
	if err != nil {
		l.noteDenied(nil, err)
	}
	return err
}

// admitForward asks about the load balancer's flow to the chosen target.
func (l *listener) admitForward(client netip.AddrPort, t *target) error {
	fw := l.fw.get()
	if fw == nil {
		return nil
	}
	err := fw.Forward(Flow{LB: l.lbID, Listener: l.id, Protocol: l.proto, Client: client, VIP: l.addr, Target: t.Addr, TargetID: t.ID})
	if err != nil {
		l.noteDenied(t, err)
	}
	return err
}

// admitProbe asks about a health check probe of t at addr.
func (l *listener) admitProbe(hc *HealthCheck, proto string, t *target, addr netip.AddrPort) error {
	fw := l.fw.get()
	if fw == nil {
		return nil
	}
	p := proto
	switch hc.Type {
	case CheckPing:
		p = ICMP
	case CheckHTTP, CheckTCP, "":
		p = TCP
	}
	return fw.Probe(Flow{LB: l.lbID, Listener: l.id, Protocol: p, VIP: l.addr, Target: addr, TargetID: t.ID})
}

func (l *listener) noteDenied(t *target, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.denied++
	l.lastDeny = err.Error()
	if t != nil {
		t.lastErr = "firewall: " + err.Error()
	}
}
