// Package cloudsim is a faithful local emulator of the slice of the Tencent
// Cloud and OCI APIs that the cloud-controller-manager uses, like
// LocalStack: it answers the real wire protocol, verifies signatures, enforces
// the documented limits, injects faults and counts calls.
//
// Package layout (no import cycles, nothing to blank-import):
//
//	pkg/cloudsim/core       dialect-neutral state: fleet, rate limits, faults,
//	                        call counts, admin HTTP API, seed files, and the
//	                        core.Dialect interface every dialect implements
//	pkg/cloudsim/dataplane  the load balancers' data plane, shared by dialects
//	pkg/cloudsim/tencent    the Tencent Cloud API 3.0 dialect at POST /
//	pkg/cloudsim/oci        the OCI dialect: signed REST under /20160918,
//	                        /20170115 and /20200501
//	pkg/cloudsim            this package: the registry of dialects
//	                        (dialects.go, zz_generated.dialects.go); Sim
//	                        builds core, data plane and every registered
//	                        dialect behind one http.Handler
//
// Each dialect owns its options (a field of Options of its package's type),
// the patterns of its API on the shared mux, its admin routes under
// /admin/<name>/ and its command-line flags. To add a third dialect, write
// its package (a core.Dialect from a constructor marked
// //cloudsim:dialect, admin routes added with core.HandleAdminFunc,
// (*Options).AddFlags) and run `make generate`, which writes its registry
// entry, its Options field and its Sim accessor; see docs/cloudsim.md,
// "Dialects: a registry", for the checklist.
//
// The Sim's own methods are only what every dialect shares: serving
// (Start, Handler, Suspend, ...), the fleet of instances, faults, rate
// limits, call counts, read lag, the console's state and the tunnels' CA.
// A dialect's resources and their out-of-band changes are reached through
// its accessor, in the dialect package's own types:
// sim.Tencent().CLB().LoadBalancers(), sim.Tencent().TKE().RouteTables(),
// sim.OCI().LoadBalancers(), sim.OCI().AddKey(...). AdminClient does the
// same over HTTP, for a cloudsim running in another process.
package cloudsim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/console"
	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
	"github.com/ccmkit/ccm/pkg/cloudsim/testca"
	"github.com/ccmkit/ccm/pkg/cloudsim/tunnel"
)

// Instance is one simulated VM (see core.Instance for the fields).
type Instance = core.Instance

// Fault is an injected failure or delay (see core.Fault).
type Fault = core.Fault

// Call describes one finished API call, for Options.OnCall.
type Call = core.CallInfo

// Latency is the answer time per kind of call; see Options.Latency.
type Latency = core.Latency

// ZeroLatency answers every call at once: unit tests ask for it explicitly.
var ZeroLatency = core.ZeroLatency

// ParseLatency reads a --latency flag value (see core.ParseLatency).
func ParseLatency(s string) (*Latency, error) { return core.ParseLatency(s) }

// DataPlaneStatus is what the data plane runs for one load balancer, of
// either dialect: VIP, listeners, target health (sim.Tencent().CLB().DataPlane,
// sim.OCI().DataPlane).
type DataPlaneStatus = dataplane.LoadBalancerStatus

// CheckVIPRange reports whether a VIP range ("A-B" or a CIDR prefix) is
// valid for Options.VIPRange.
func CheckVIPRange(r string) error {
	p, err := dataplane.New(dataplane.Config{VIPRange: r, Disabled: true})
	if err != nil {
		return err
	}
	p.Close()
	return nil
}

// Options configures a Sim. The zero value means defaults throughout.
// Options shared by every dialect are fields here; each dialect's own are
// in its field (Tencent, OCI), of a type its package owns.
type Options struct {
	Region           string             // default "ap-guangzhou"
	RateLimits       map[string]float64 // per-action requests/second override; defaults: DescribeInstances 40; <= 0 disables
	TerminatedLinger time.Duration      // how long TERMINATING instances stay visible (0: 2s; negative: forever)
	Clock            func() time.Time   // optional, default time.Now
	OnCall           func(Call)         // optional hook called after every API call (logging)

	// Latency is how long every call takes to answer (core/latency.go).
	// nil: each dialect's realistic default (tencent.DefaultLatency,
	// oci.DefaultLatency); ZeroLatency: at once, for unit tests only.
	Latency *Latency

	// ReadLag delays the visibility of new and changed resources in
	// List/Describe answers (instances, CLBs and listeners, OCI load
	// balancers and NLBs, routes) by up to this long, as an eventually
	// consistent API does (core/lag.go); 0, the default: reads see every
	// write at once. SetReadLag changes it at run time.
	ReadLag time.Duration

	// The data plane, shared by every dialect's load balancers (one VIP
	// pool).
	VIPRange            string                        // VIP pool, "A-B" or CIDR (default 127.240.0.1-127.240.255.254)
	HealthCheckInterval time.Duration                 // > 0: replaces every listener's health check interval (tests)
	DisableDataPlane    bool                          // allocate VIPs but open no sockets
	DataPlaneLog        func(format string, a ...any) // optional: bind failures, target health changes

	// Each dialect's own options, of a type its package owns: one field
	// per dialect package, written by `make generate` (hack/registrygen).
	// BEGIN GENERATED: dialect options (go run ./hack/registrygen)
	OCI     OCIOptions     // the oci dialect (pkg/cloudsim/oci)
	Tencent TencentOptions // the tencent dialect (pkg/cloudsim/tencent)
	// END GENERATED: dialect options
}

// Sim is a running emulator. It is safe for concurrent use.
type Sim struct {
	core     *core.Core
	plane    *dataplane.Plane
	dialects []core.Dialect // in registry order
	handler  http.Handler
	tunnels  *tunnel.Tunnels // CONNECT to the real API hostnames (handler)

	dialectHandles // each dialect's typed handle (zz_generated.dialects.go)

	mu        sync.Mutex
	server    *http.Server
	ln        net.Listener
	done      chan struct{}
	suspended net.Addr // set while Suspend has closed the port
}

// New returns a Sim serving each registered dialect's API (the Tencent API
// at POST /, the OCI API under its version prefixes) and the admin API
// under /admin/. It panics where Build returns an error.
func New(opts Options) *Sim {
	s, err := Build(opts)
	if err != nil {
		panic(err.Error())
	}
	return s
}

// Build is New, but a bad option is an error instead of a panic: a
// malformed Options.VIPRange (see CheckVIPRange), or a dialect's invalid
// seed or key (Tencent route tables, VPCs and security groups; OCI keys
// and network seed, see oci.CheckOptions).
func Build(opts Options) (*Sim, error) {
	c := core.New(core.Config{
		Region:           opts.Region,
		RateLimits:       opts.RateLimits,
		TerminatedLinger: opts.TerminatedLinger,
		Clock:            opts.Clock,
		OnCall:           opts.OnCall,
		Latency:          opts.Latency,
		ReadLag:          opts.ReadLag,
	})
	p, err := dataplane.New(dataplane.Config{
		VIPRange:            opts.VIPRange,
		HealthCheckInterval: opts.HealthCheckInterval,
		Disabled:            opts.DisableDataPlane,
		Logf:                opts.DataPlaneLog,
	})
	if err != nil {
		return nil, fmt.Errorf("cloudsim: Options.VIPRange: %w", err)
	}
	s := &Sim{core: c, plane: p}
	mux := http.NewServeMux()
	mux.Handle("/admin/", c.AdminHandler())
	for _, reg := range registry {
		d, err := reg.build(s, opts)
		if err != nil {
			s.closeDialects()
			return nil, fmt.Errorf("cloudsim: %w", err) // the dialect names itself
		}
		s.dialects = append(s.dialects, d)
		for _, pat := range d.Patterns() {
			mux.Handle(pat, d)
		}
	}
	console.Register(mux, func() any { return s.ConsoleState() }) // the admin listener only
	mux.HandleFunc("/", s.notFound)
	ca, err := testca.New("cloudsim API tunnels (throwaway CA)")
	if err != nil {
		s.closeDialects()
		return nil, fmt.Errorf("cloudsim: %w", err)
	}
	s.tunnels = tunnel.New(serverDate(c.Now, mux), ca, APIDomains...)
	mux.HandleFunc("GET /admin/tunnel-ca.pem", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-pem-file")
		_, _ = w.Write(ca.PEM)
	})
	s.handler = s.tunnels
	return s, nil
}

// APIDomains are the domains of the real API hostnames cloudsim answers
// CONNECT tunnels for (see TunnelCA): Tencent Cloud's
// <service>.tencentcloudapi.com, and OCI's iaas.<region>.oraclecloud.com
// and <service>.<region>.oci.oraclecloud.com.
var APIDomains = []string{"tencentcloudapi.com", "oraclecloud.com"}

// TunnelCA is the certificate (PEM) of the throwaway CA that signs the
// certificates of cloudsim's TLS tunnels: a client that reaches cloudsim
// through its HTTP proxy setting, under the real API hostnames, must trust
// it (see package tunnel and docs/cloudsim.md, "Using cloudsim from other
// languages"). GET /admin/tunnel-ca.pem serves it too. A new one is made
// per Sim.
func (s *Sim) TunnelCA() []byte { return s.tunnels.CAPEM() }

// notFound answers a path no dialect claims.
func (s *Sim) notFound(w http.ResponseWriter, r *http.Request) {
	apis := make([]string, 0, len(s.dialects))
	for _, d := range s.dialects {
		at := make([]string, 0, len(d.Patterns()))
		for _, p := range d.Patterns() {
			at = append(at, strings.TrimSuffix(p, "{$}")) // "/{$}": the root only
		}
		apis = append(apis, d.Name()+" at "+strings.Join(at, ", "))
	}
	http.Error(w, fmt.Sprintf("cloudsim: no API at %s (%s; admin at /admin/)", r.URL.Path, strings.Join(apis, "; ")), http.StatusNotFound)
}

// closeDialects stops every dialect's background work (tasks, work
// requests), the last built first, then the data plane they share.
func (s *Sim) closeDialects() {
	if s.tunnels != nil {
		s.tunnels.Close()
	}
	for i := len(s.dialects) - 1; i >= 0; i-- {
		s.dialects[i].Close()
	}
	s.plane.Close()
}

// serverDate sets every answer's Date header from cloudsim's clock (which
// Options.Clock may skew), as the real APIs date their answers from theirs:
// clients such as the preflight check measure clock skew against it.
// net/http would otherwise stamp the host's time.
func serverDate(now func() time.Time, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", now().UTC().Format(http.TimeFormat))
		next.ServeHTTP(w, r)
	})
}

// Core exposes the dialect-neutral state, for dialect and data-plane code.
func (s *Sim) Core() *core.Core { return s.core }

// Handler serves each dialect's API (the Tencent API at POST /, the OCI
// API under its version prefixes) and the admin API under /admin/.
func (s *Sim) Handler() http.Handler { return s.handler }

// Start listens on addr (e.g. "127.0.0.1:0") and serves in the background.
// It returns the base URL, e.g. "http://127.0.0.1:41234". The admin API is
// unauthenticated: listen on loopback only.
func (s *Sim) Start(addr string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.server != nil {
		return "", errors.New("cloudsim: already started")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("cloudsim: listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	s.server, s.ln, s.done = srv, ln, make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		_ = srv.Serve(ln)
	}(s.done)
	return baseURL(ln.Addr()), nil
}

func baseURL(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return "http://" + a.String()
	}
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, fmt.Sprint(tcp.Port))
}

// Shutdown stops a started Sim gracefully, waiting for in-flight calls
// until ctx ends; then it stops the dialects' pending tasks and the data
// plane.
func (s *Sim) Shutdown(ctx context.Context) error {
	defer s.closeDialects()
	s.mu.Lock()
	srv, done := s.server, s.done
	s.server = nil
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	err := srv.Shutdown(ctx)
	if err != nil {
		_ = srv.Close()
	}
	<-done
	return err
}

// Close stops a started Sim immediately. It also stops the dialects'
// pending tasks and the load balancers' data plane, even if the Sim was
// never started.
func (s *Sim) Close() error {
	defer s.closeDialects()
	s.mu.Lock()
	srv, done := s.server, s.done
	s.server = nil
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	err := srv.Close()
	<-done
	return err
}

// Suspend makes the API unreachable, as a network partition or an
// endpoint outage does: the port is closed, so new connections are
// refused, and open ones are cut. Everything cloudsim holds (instances,
// load balancers, tasks, the data plane) stays. Resume serves again on the
// same address.
func (s *Sim) Suspend() error {
	s.mu.Lock()
	srv, ln, done := s.server, s.ln, s.done
	if srv == nil {
		s.mu.Unlock()
		return errors.New("cloudsim: suspend: not started")
	}
	s.server, s.suspended = nil, ln.Addr()
	s.mu.Unlock()
	s.tunnels.Close() // open tunnels are cut too
	err := srv.Close()
	<-done
	return err
}

// Resume listens again on the address Suspend closed.
func (s *Sim) Resume() error {
	s.mu.Lock()
	addr := s.suspended
	s.mu.Unlock()
	if addr == nil {
		return errors.New("cloudsim: resume: not suspended")
	}
	s.tunnels.Reopen()
	if _, err := s.Start(addr.String()); err != nil {
		return fmt.Errorf("cloudsim: resume: %w", err)
	}
	s.mu.Lock()
	s.suspended = nil
	s.mu.Unlock()
	return nil
}

// AddInstances validates (unique id, unique private IP within a VPC, valid
// ids and IPs), fills defaults and adds the instances, all or none.
func (s *Sim) AddInstances(in ...Instance) ([]Instance, error) { return s.core.AddInstances(in...) }

// Instances returns the visible instances in creation order.
func (s *Sim) Instances() []Instance { return s.core.Instances() }

// SetInstanceState changes an instance's state. A TERMINATING instance
// disappears after TerminatedLinger and cannot change state again.
func (s *Sim) SetInstanceState(id, state string) error {
	_, err := s.core.SetInstanceState(id, state)
	return err
}

// SetReadLag sets the maximum lag of List/Describe answers behind writes
// (0: off; see Options.ReadLag); writes not yet visible become visible at
// once.
func (s *Sim) SetReadLag(max time.Duration) error { return s.core.Lag().Set(max) }

// SetFault replaces the fault for f.Action ("*" for all actions).
// Out-of-range values are clamped.
func (s *Sim) SetFault(f Fault) { s.core.SetFault(f) }

// ClearFaults removes every fault.
func (s *Sim) ClearFaults() { s.core.ClearFaults() }

// SetRateLimit overrides an action's rate limit; qps <= 0 disables it.
func (s *Sim) SetRateLimit(action string, qps float64) { s.core.SetRateLimit(action, qps) }

// Calls returns action -> result code ("OK", an error code, or
// "HTTP<status>") -> count. It includes auth failures and throttles.
func (s *Sim) Calls() map[string]map[string]int { return s.core.Calls() }

// ResetCalls zeroes the call counts.
func (s *Sim) ResetCalls() { s.core.ResetCalls() }

// LoadSeed reads a YAML or JSON seed file holding {"instances": [...]}.
func LoadSeed(path string) ([]Instance, error) { return core.LoadSeed(path) }
