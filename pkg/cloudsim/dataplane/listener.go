package dataplane

import (
	"context"
	"crypto/tls"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"
)

// listener is one running listener: a socket on VIP:port, its targets with
// their health, and the goroutines that serve it.
type listener struct {
	plane *Plane
	lbID  string
	id    string
	proto string
	port  int
	addr  netip.AddrPort

	mu       sync.Mutex
	spec     Listener
	targets  []*target
	sticky   map[netip.Addr]stickyEntry
	bindErr  error
	conns    map[io.Closer]struct{} // open TCP connections (both sides) and UDP upstream sockets
	sessions map[netip.AddrPort]*udpSession
	stopped  bool
	accepted uint64
	refused  uint64
	denied   uint64
	lastDeny string
	fw       *fwRef // the load balancer's firewall
	// tlsConf is the TLS server config of a listener that terminates TLS
	// (spec.TLS), nil otherwise; tlsFailed counts failed handshakes.
	tlsConf   *tls.Config
	tlsFailed uint64

	closer io.Closer          // the listening socket
	ctx    context.Context    // ends when the listener stops
	cancel context.CancelFunc // ends ctx
	kick   chan struct{}      // asks the health loop to probe new targets now
	wg     sync.WaitGroup
}

type target struct {
	Target
	health    string // HealthUnknown, HealthHealthy, HealthUnhealthy or HealthOff
	okRun     int    // consecutive successful probes
	failRun   int    // consecutive failed probes
	lastErr   string
	lastCheck time.Time
	active    int    // open connections / UDP sessions
	forwarded uint64 // connections, UDP sessions or HTTP requests given to it so far
	current   int    // smooth WRR state
	// flows are the target's open TCP connections (both sides) and UDP
	// upstream sockets, closed when the target is removed.
	flows map[io.Closer]struct{}
}

func (t *target) inService() bool {
	return t.Weight > 0 && (t.health == HealthHealthy || t.health == HealthOff)
}

type stickyEntry struct {
	t       *target
	expires time.Time
}

// startListener binds the socket and starts serving. Callers hold p.mu.
func (p *Plane) startListener(lbID string, vip netip.Addr, spec Listener, fw *fwRef) *listener {
	l := &listener{
		fw:       fw,
		plane:    p,
		lbID:     lbID,
		id:       spec.ID,
		proto:    spec.Protocol,
		port:     spec.Port,
		addr:     netip.AddrPortFrom(spec.listenAddr(vip), uint16(spec.Port)),
		sticky:   map[netip.Addr]stickyEntry{},
		conns:    map[io.Closer]struct{}{},
		sessions: map[netip.AddrPort]*udpSession{},
		kick:     make(chan struct{}, 1),
	}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	l.setSpecLocked(spec)
	if p.cfg.Disabled {
		l.bindErr = fmt.Errorf("the data plane is disabled")
		return l
	}
	switch spec.Protocol {
	case TCP:
		ln, err := net.Listen("tcp", l.addr.String())
		if err != nil {
			l.bindErr = err
			break
		}
		l.closer = ln
		l.wg.Add(1)
		go l.serveTCP(ln)
	case UDP:
		pc, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(l.addr))
		if err != nil {
			l.bindErr = err
			break
		}
		l.closer = pc
		l.wg.Add(1)
		go l.serveUDP(pc)
	default:
		l.bindErr = fmt.Errorf("protocol %q is not supported by the data plane (TCP or UDP)", spec.Protocol)
	}
	if l.bindErr != nil {
		p.logf("dataplane: %s listener %s: cannot listen on %s/%s: %v", lbID, spec.ID, l.addr, spec.Protocol, l.bindErr)
		return l
	}
	l.wg.Add(1)
	go l.healthLoop()
	l.requestProbe()
	return l
}

// update applies a new spec to a running listener.
func (l *listener) update(spec Listener) {
	l.mu.Lock()
	l.setSpecLocked(spec)
	l.mu.Unlock()
	l.requestProbe()
}

// setSpecLocked installs spec, keeping the health state and counters of
// targets that stay. Callers hold l.mu (or own l exclusively).
func (l *listener) setSpecLocked(spec Listener) {
	hadCheck := l.spec.HealthCheck != nil
	l.spec = spec
	l.tlsConf = nil
	if spec.TLS != nil {
		l.tlsConf = spec.TLS.config()
	}
	old := map[string]*target{}
	for _, t := range l.targets {
		old[t.key()] = t
	}
	l.targets = l.targets[:0:0]
	for _, want := range spec.Targets {
		t := old[want.key()]
		if t == nil {
			t = &target{Target: want}
			t.health = HealthUnknown
		}
		t.Weight = want.Weight
		switch {
		case spec.HealthCheck == nil:
			t.health, t.okRun, t.failRun, t.lastErr = HealthOff, 0, 0, ""
		case !hadCheck && t.health == HealthOff:
			t.health = HealthUnknown
		}
		l.targets = append(l.targets, t)
	}
	// Deregistration ends a target's open flows, while weight 0 (or
	// drain) only keeps new ones away: what Tencent CLB and OCI document
	// for draining (docs/cloudsim.md#draining).
	for _, t := range old {
		if l.hasTargetLocked(t) {
			continue
		}
		for c := range t.flows {
			closeFlow(c)
		}
		t.flows = nil
	}
	// Sticky entries of removed targets must not send traffic to them.
	for ip, e := range l.sticky {
		if !l.hasTargetLocked(e.t) {
			delete(l.sticky, ip)
		}
	}
}

func (l *listener) hasTargetLocked(t *target) bool {
	for _, x := range l.targets {
		if x == t {
			return true
		}
	}
	return false
}

// stop closes the socket, every connection and UDP session, ends the health
// loop and waits for all goroutines. Callers hold Plane.mu; nothing here
// takes it.
func (l *listener) stop() {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return
	}
	l.stopped = true
	l.cancel()
	if l.closer != nil {
		_ = l.closer.Close()
	}
	for c := range l.conns {
		_ = c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
}

// track registers a connection so that stop closes it. It reports false if
// the listener is stopping; the caller must then close it itself.
func (l *listener) track(c io.Closer) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return false
	}
	l.conns[c] = struct{}{}
	return true
}

// bind records open flows of target t, so that its removal closes them.
// It reports false if t is no longer a target: the caller closes them.
func (l *listener) bind(t *target, cs ...io.Closer) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.hasTargetLocked(t) {
		return false
	}
	if t.flows == nil {
		t.flows = map[io.Closer]struct{}{}
	}
	for _, c := range cs {
		t.flows[c] = struct{}{}
	}
	return true
}

func (l *listener) unbind(t *target, cs ...io.Closer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range cs {
		delete(t.flows, c)
	}
}

// closeFlow closes a flow of a removed target: TCP with a reset, as a
// load balancer that drops the connection's state does.
func closeFlow(c io.Closer) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

func (l *listener) untrack(c io.Closer) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// acquire picks a target for a new connection from client and counts the
// connection on it; nil means no target is in service.
func (l *listener) acquire(client netip.Addr) *target {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.pickLocked(client, time.Now())
	if t == nil {
		l.refused++
		return nil
	}
	l.accepted++
	t.active++
	t.forwarded++
	return t
}

func (l *listener) release(t *target) {
	l.mu.Lock()
	t.active--
	l.mu.Unlock()
}

// pickLocked chooses a target: the client's sticky target if it is still in
// service, else by the listener's scheduler.
func (l *listener) pickLocked(client netip.Addr, now time.Time) *target {
	return l.pickAmongLocked(client, now, nil)
}

// pickAmongLocked is pickLocked among the targets allow accepts (nil: all),
// e.g. those of one layer-7 rule (http.go).
func (l *listener) pickAmongLocked(client netip.Addr, now time.Time, allow func(*target) bool) *target {
	var in []*target
	for _, t := range l.targets {
		if t.inService() && (allow == nil || allow(t)) {
			in = append(in, t)
		}
	}
	if len(in) == 0 {
		return nil
	}
	stick := l.spec.Stickiness
	if stick > 0 {
		if e, ok := l.sticky[client]; ok && now.Before(e.expires) && e.t.inService() && l.hasTargetLocked(e.t) && (allow == nil || allow(e.t)) {
			l.sticky[client] = stickyEntry{e.t, now.Add(stick)}
			return e.t
		}
	}
	var chosen *target
	switch l.spec.Scheduler {
	case IPHash:
		h := fnv.New32a()
		b := client.As16()
		_, _ = h.Write(b[:])
		chosen = in[int(h.Sum32()%uint32(len(in)))]
	case LeastConn:
		// Fewest connections per unit of weight; ties go to smooth WRR so
		// that equal targets still alternate.
		best := -1.0
		var tied []*target
		for _, t := range in {
			load := float64(t.active) / float64(t.Weight)
			switch {
			case best < 0 || load < best:
				best, tied = load, []*target{t}
			case load == best:
				tied = append(tied, t)
			}
		}
		chosen = smoothWRR(tied)
	default:
		chosen = smoothWRR(in)
	}
	if stick > 0 {
		if len(l.sticky) > 4096 {
			for ip, e := range l.sticky {
				if !now.Before(e.expires) {
					delete(l.sticky, ip)
				}
			}
		}
		l.sticky[client] = stickyEntry{chosen, now.Add(stick)}
	}
	return chosen
}

// smoothWRR is nginx-style smooth weighted round-robin: it spreads picks in
// proportion to the weights without bursts, and is plain round-robin for
// equal weights.
func smoothWRR(ts []*target) *target {
	total := 0
	var best *target
	for _, t := range ts {
		t.current += t.Weight
		total += t.Weight
		if best == nil || t.current > best.current {
			best = t
		}
	}
	best.current -= total
	return best
}

func (l *listener) idleTimeout() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.spec.IdleTimeout > 0 {
		return l.spec.IdleTimeout
	}
	if l.proto == UDP {
		return DefaultUDPIdleTimeout
	}
	return DefaultTCPIdleTimeout
}

func (l *listener) status() ListenerStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := ListenerStatus{
		ID:          l.id,
		Protocol:    l.proto,
		Port:        l.port,
		Address:     l.addr.String(),
		Listening:   l.bindErr == nil && !l.stopped,
		HealthCheck: "off",
		Scheduler:   l.spec.Scheduler,
		Targets:     []TargetStatus{},
		Connections: l.accepted,
		Refused:     l.refused,
		Denied:      l.denied,
		LastDenied:  l.lastDeny,
		TLS:         l.tlsConf != nil,

		TLSHandshakeFailures: l.tlsFailed,
	}
	if st.Scheduler == "" {
		st.Scheduler = WRR
	}
	if l.bindErr != nil {
		st.Error = l.bindErr.Error()
	}
	if hc := l.spec.HealthCheck; hc != nil {
		st.HealthCheck = hc.Type
	}
	for _, t := range l.targets {
		ts := TargetStatus{
			ID:        t.ID,
			Address:   t.Addr.String(),
			Weight:    t.Weight,
			Health:    t.health,
			InService: t.inService(),
			Active:    t.active,
			Forwarded: t.forwarded,
			LastError: t.lastErr,
			LastCheck: t.lastCheck,
		}
		if ts.InService {
			st.HealthyTargets++
		}
		st.Targets = append(st.Targets, ts)
	}
	return st
}
