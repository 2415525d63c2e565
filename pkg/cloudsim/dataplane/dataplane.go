// Package dataplane makes cloudsim's load balancers carry real traffic. It
// is dialect-neutral: a dialect (Tencent CLB, OCI LB and NLB) keeps its own
// API state and, whenever a load balancer changes, hands the Plane the
// desired state of that load balancer with Sync. The Plane then
//
//   - gives each load balancer a VIP from a pool of loopback addresses;
//   - listens on VIP:port for each listener (TCP or UDP);
//   - forwards each TCP connection, and each UDP client's datagrams, to one
//     of the listener's targets (weighted round-robin, least connections or
//     client-IP hash, with optional client-IP stickiness), splicing both
//     directions;
//   - runs the listener's health check (TCP connect, HTTP, custom
//     send/expect) against every target and sends traffic only to healthy
//     targets; with no healthy target it refuses the connection.
//
// Everything stops on Close. Every network operation is bounded by a
// timeout, so nothing leaks.
package dataplane

import (
	"crypto/tls"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"sync"
	"time"
)

// Protocols a listener can forward.
const (
	TCP = "TCP"
	UDP = "UDP"
)

// Schedulers: how a listener picks a target for a new connection.
const (
	WRR       = "WRR"        // smooth weighted round-robin (equal weights: plain round-robin)
	LeastConn = "LEAST_CONN" // fewest active connections per unit of weight
	IPHash    = "IP_HASH"    // hash of the client IP
)

// Health check types.
const (
	CheckTCP    = "TCP"    // connect to the target
	CheckHTTP   = "HTTP"   // HTTP request; the status class must be in HTTPCodes
	CheckCustom = "CUSTOM" // send Send, expect Expect in the answer (TCP or UDP, by listener protocol)
	CheckPing   = "PING"   // ICMP: needs privileges, so every target counts as reachable
)

// Defaults.
const (
	DefaultDialTimeout    = 2 * time.Second
	DefaultTCPIdleTimeout = 900 * time.Second // Tencent's default for TCP listeners
	DefaultUDPIdleTimeout = 300 * time.Second // Tencent's default for UDP listeners
)

// LoadBalancer is the desired state of one load balancer.
type LoadBalancer struct {
	ID        string
	VIP       netip.Addr // from Plane.AllocVIP
	Listeners []Listener
	// Firewall filters the load balancer's flows; nil carries everything.
	Firewall Firewall
}

// Listener is the desired state of one listener.
type Listener struct {
	ID       string
	Protocol string // TCP or UDP
	Port     int
	Targets  []Target
	// HealthCheck nil means no health check: every target with a weight
	// above 0 takes traffic.
	HealthCheck *HealthCheck
	Scheduler   string        // WRR (default), LeastConn or IPHash
	Stickiness  time.Duration // > 0: a client IP keeps its target while it keeps coming back within this time
	IdleTimeout time.Duration // 0: DefaultTCPIdleTimeout / DefaultUDPIdleTimeout
	// TLS, on a TCP listener, terminates TLS at the listener (tls.go); nil
	// forwards the client's bytes as they come.
	TLS *TLS
	// ProxyProtocol, on a TCP listener, is the PROXY protocol version
	// (ProxyV1, ProxyV2) whose header each target connection starts with
	// (proxyproto.go); ProxyOff sends none.
	ProxyProtocol int
	// HTTP, on a TCP listener, makes it a layer-7 proxy that routes each
	// request by its rules (http.go); nil forwards connections.
	HTTP *HTTP
	// BackendTLS, if not nil, makes the listener speak TLS to its targets
	// with this client config (tls_backend.go).
	BackendTLS *tls.Config
	// Addr, if valid, is the address the listener listens on instead of
	// the load balancer's VIP: a dual-stack load balancer's IPv6 address.
	Addr netip.Addr
}

// listenAddr is where spec listens on a load balancer at vip.
func (spec Listener) listenAddr(vip netip.Addr) netip.Addr {
	if spec.Addr.IsValid() {
		return spec.Addr
	}
	return vip
}

// Target is one backend of a listener. A target with Weight 0 takes no new
// connections.
type Target struct {
	ID     string // e.g. the instance id; shown in Status
	Addr   netip.AddrPort
	Weight int
}

func (t Target) key() string { return t.ID + "|" + t.Addr.String() }

// HealthCheck configures a listener's health check.
type HealthCheck struct {
	Type               string        // CheckTCP, CheckHTTP, CheckCustom or CheckPing
	Port               int           // 0: the target's port
	Interval           time.Duration // between probes of a target
	Timeout            time.Duration // of one probe
	HealthyThreshold   int           // consecutive successes that make an unhealthy target healthy
	UnhealthyThreshold int           // consecutive failures that make a healthy target unhealthy
	HTTPPath           string        // default "/"
	HTTPHost           string        // Host header; default the target address
	HTTPMethod         string        // default HEAD
	HTTPCodes          int           // bit mask: 1 = 1xx, 2 = 2xx, 4 = 3xx, 8 = 4xx, 16 = 5xx; 0 = 2xx
	Send               []byte        // CheckCustom: sent after connecting
	Expect             []byte        // CheckCustom: must appear in the answer
}

// Config configures a Plane.
type Config struct {
	// VIPRange is the pool VIPs come from: "A-B" (inclusive) or a CIDR
	// prefix. Default DefaultVIPRange.
	VIPRange string
	// HealthCheckInterval, if > 0, replaces every listener's probe interval
	// (and caps its probe timeout), so tests need not wait for real-world
	// intervals.
	HealthCheckInterval time.Duration
	// DialTimeout bounds each connection to a target. Default
	// DefaultDialTimeout.
	DialTimeout time.Duration
	// Disabled keeps VIP allocation and status but opens no sockets and runs
	// no health checks (for platforms where the VIPs cannot be bound).
	Disabled bool
	// Logf, if set, receives one line per notable event (bind failures,
	// health changes).
	Logf func(format string, args ...any)
}

// Plane runs the listeners of every load balancer. It is safe for
// concurrent use.
type Plane struct {
	cfg Config

	mu     sync.Mutex
	pool   *vipPool
	lbs    map[string]*lbRuntime
	closed bool
}

type lbRuntime struct {
	id        string
	vip       netip.Addr
	listeners map[string]*listener // by listener ID
	fw        *fwRef               // shared by the listeners
}

// New returns a Plane, or an error for a malformed VIP range.
func New(cfg Config) (*Plane, error) {
	pool, err := parseVIPRange(cfg.VIPRange)
	if err != nil {
		return nil, fmt.Errorf("dataplane: %w", err)
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	return &Plane{cfg: cfg, pool: pool, lbs: map[string]*lbRuntime{}}, nil
}

func (p *Plane) logf(format string, args ...any) {
	if p.cfg.Logf != nil {
		p.cfg.Logf(format, args...)
	}
}

// AllocVIP takes the next free VIP for a load balancer.
func (p *Plane) AllocVIP(owner string) (netip.Addr, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a, err := p.pool.alloc(owner)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("dataplane: %w", err)
	}
	return a, nil
}

// ReserveVIP takes a given VIP for a load balancer; it must be in the pool
// and free.
func (p *Plane) ReserveVIP(owner string, vip netip.Addr) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.pool.reserve(vip, owner); err != nil {
		return fmt.Errorf("dataplane: reserving a VIP for %s: %w", owner, err)
	}
	return nil
}

// ReleaseVIP returns a VIP to the pool.
func (p *Plane) ReleaseVIP(vip netip.Addr) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pool.release(vip)
}

// Sync makes the load balancer's running listeners match lb: listeners not
// in lb stop, new ones start, and changed ones are updated in place (a
// target that stays keeps its health state and connections). Listening
// errors do not fail Sync; they show in Status. After Close, Sync does
// nothing.
func (p *Plane) Sync(lb LoadBalancer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	rt := p.lbs[lb.ID]
	if rt == nil {
		rt = &lbRuntime{id: lb.ID, vip: lb.VIP, listeners: map[string]*listener{}, fw: &fwRef{}}
		p.lbs[lb.ID] = rt
	}
	rt.fw.set(lb.Firewall)
	if rt.vip != lb.VIP {
		for id, l := range rt.listeners {
			l.stop()
			delete(rt.listeners, id)
		}
		rt.vip = lb.VIP
	}
	want := map[string]bool{}
	for _, spec := range lb.Listeners {
		want[spec.ID] = true
		if l := rt.listeners[spec.ID]; l != nil {
			if l.proto == spec.Protocol && l.port == spec.Port && l.addr.Addr() == spec.listenAddr(lb.VIP) {
				l.update(spec)
				continue
			}
			l.stop()
		}
		rt.listeners[spec.ID] = p.startListener(lb.ID, lb.VIP, spec, rt.fw)
	}
	for id, l := range rt.listeners {
		if !want[id] {
			l.stop()
			delete(rt.listeners, id)
		}
	}
}

// Remove stops every listener of a load balancer. It does not release the
// VIP (see ReleaseVIP).
func (p *Plane) Remove(lbID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	rt := p.lbs[lbID]
	if rt == nil {
		return
	}
	for _, l := range rt.listeners {
		l.stop()
	}
	delete(p.lbs, lbID)
}

// Close stops every listener, health check and connection, and waits for
// their goroutines. The Plane cannot be used afterwards.
func (p *Plane) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	for id, rt := range p.lbs {
		for _, l := range rt.listeners {
			l.stop()
		}
		delete(p.lbs, id)
	}
}

// LoadBalancerStatus is the data-plane view of one load balancer.
type LoadBalancerStatus struct {
	ID        string           `json:"id"`
	VIP       string           `json:"vip"`
	Listeners []ListenerStatus `json:"listeners"`
}

// ListenerStatus is the data-plane view of one listener.
type ListenerStatus struct {
	ID             string         `json:"id"`
	Protocol       string         `json:"protocol"`
	Port           int            `json:"port"`
	Address        string         `json:"address"`         // VIP:port (or Listener.Addr:port)
	Listening      bool           `json:"listening"`       // the socket is bound
	Error          string         `json:"error,omitempty"` // why it is not listening
	HealthCheck    string         `json:"healthCheck"`     // the check type, or "off"
	Scheduler      string         `json:"scheduler"`
	HealthyTargets int            `json:"healthyTargets"` // targets that take new traffic
	Targets        []TargetStatus `json:"targets"`
	Connections    uint64         `json:"connections"` // accepted TCP connections / UDP sessions so far
	Refused        uint64         `json:"refused"`     // closed or dropped for want of a healthy target
	Denied         uint64         `json:"denied"`      // reset or dropped by the firewall
	// LastDenied is why the firewall last denied a client's flow. Unlike a
	// target's LastError, a later health check does not clear it.
	LastDenied string `json:"lastDenied,omitempty"`
	// TLS: the listener terminates TLS; TLSHandshakeFailures counts the
	// clients whose handshake failed (and so reached no target).
	TLS                  bool   `json:"tls,omitempty"`
	TLSHandshakeFailures uint64 `json:"tlsHandshakeFailures,omitempty"`
}

// Target health states in TargetStatus.Health.
const (
	HealthUnknown   = "unknown"   // not probed yet: no traffic
	HealthHealthy   = "healthy"   // passing its health check
	HealthUnhealthy = "unhealthy" // failing its health check: no traffic
	HealthOff       = "off"       // the listener has no health check: traffic
)

// TargetStatus is the data-plane view of one target.
type TargetStatus struct {
	ID        string `json:"id"`
	Address   string `json:"address"`
	Weight    int    `json:"weight"`
	Health    string `json:"health"`
	InService bool   `json:"inService"` // takes new traffic (healthy or unchecked, weight > 0)
	Active    int    `json:"active"`    // open connections / UDP sessions
	// Forwarded counts what the target was given so far: TCP connections
	// and UDP sessions, or, on a layer-7 listener, HTTP requests (one
	// upstream connection each).
	Forwarded uint64    `json:"forwarded"`
	LastError string    `json:"lastError,omitempty"`
	LastCheck time.Time `json:"lastCheck,omitzero"`
}

// Status reports a load balancer's listeners and targets. ok is false if the
// Plane has never seen the load balancer (or it was removed).
func (p *Plane) Status(lbID string) (st LoadBalancerStatus, ok bool) {
	p.mu.Lock()
	rt := p.lbs[lbID]
	var ls []*listener
	if rt != nil {
		st = LoadBalancerStatus{ID: rt.id, VIP: rt.vip.String()}
		for _, l := range rt.listeners {
			ls = append(ls, l)
		}
	}
	p.mu.Unlock()
	if rt == nil {
		return LoadBalancerStatus{}, false
	}
	st.Listeners = []ListenerStatus{}
	for _, l := range ls {
		st.Listeners = append(st.Listeners, l.status())
	}
	sort.Slice(st.Listeners, func(i, j int) bool {
		a, b := st.Listeners[i], st.Listeners[j]
		if a.Port != b.Port {
			return a.Port < b.Port
		}
		return a.Protocol < b.Protocol
	})
	return st, true
}

// TargetHealth reports, for one listener, each target's health keyed by
// Target.ID + "|" + address, for APIs that answer target health.
func (p *Plane) TargetHealth(lbID, listenerID string) map[string]TargetStatus {
	p.mu.Lock()
	var l *listener
	if rt := p.lbs[lbID]; rt != nil {
		l = rt.listeners[listenerID]
	}
	p.mu.Unlock()
	out := map[string]TargetStatus{}
	if l == nil {
		return out
	}
	for _, t := range l.status().Targets {
		out[t.ID+"|"+t.Address] = t
	}
	return out
}

// LoadBalancers lists the ids of the load balancers the Plane runs.
func (p *Plane) LoadBalancers() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.lbs))
	for id := range p.lbs {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}
