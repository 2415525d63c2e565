// Package cloudsim is a faithful local emulator of the slice of the Tencent
// Cloud and OCI APIs that the cloud-controller-manager uses, like
// LocalStack: it answers the real wire protocol, verifies signatures, enforces
// the documented limits, injects faults and counts calls.
//
// Package layout (no import cycles, nothing to blank-import):
//
//	pkg/cloudsim/core     dialect-neutral state: fleet, rate limits, faults,
//	                      call counts, admin HTTP API, seed files
//	pkg/cloudsim/tencent  the Tencent Cloud API 3.0 dialect (imports core)
//	pkg/cloudsim/oci      the OCI dialect: signed REST under /20160918,
//	                      /20170115 and /20200501 (imports core)
//	pkg/cloudsim          this package: Sim wires core + every dialect
//	                      behind one http.Handler (imports both)
//
// A new dialect lives in its own package that imports core, and is mounted
// by New in this package.
package cloudsim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
	"github.com/ccmkit/ccm/pkg/cloudsim/oci"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
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

// RouteTable is a TKE cluster route table (see tencent.RouteTable).
type RouteTable = tencent.RouteTable

// ClusterRoute is one route of a TKE cluster route table.
type ClusterRoute = tencent.ClusterRoute

// Options configures a Sim.
type Options struct {
	Region           string             // default "ap-guangzhou"
	Credentials      map[string]string  // Tencent SecretId -> SecretKey accepted by signature verification
	RateLimits       map[string]float64 // per-action requests/second override; defaults: DescribeInstances 40; <= 0 disables
	TerminatedLinger time.Duration      // how long TERMINATING instances stay visible (0: 2s; negative: forever)
	Clock            func() time.Time   // optional, default time.Now
	OnCall           func(Call)         // optional hook called after every API call (logging)
	RouteTables      []RouteTable       // TKE cluster route tables (with routes) to start with
	VPCRouteTables   []VPCRouteTable    // VPC route tables (with routes) to start with (see routes.go)
	VPCs             []VPC              // Tencent VPCs with their CIDRs (others have 10.0.0.0/16; see routes.go)
	SecurityGroups   []SecurityGroup    // Tencent security groups (with policies) to start with (see securitygroups.go)

	// Latency is how long every call takes to answer (core/latency.go).
	// nil: each dialect's realistic default (tencent.DefaultLatency,
	// oci.DefaultLatency); ZeroLatency: at once, for unit tests only.
	Latency *Latency

	// CLB and its data plane (see clb.go).
	TaskLatency         time.Duration                 // how long each async CLB task runs (0: 200ms; negative: done before the call returns)
	CLBQuotaOpen        int                           // OPEN load balancers per region (0: 100)
	CLBQuotaInternal    int                           // INTERNAL load balancers per region (0: 100)
	CLBTargetQuota      int                           // targets per listener, TOTAL_TARGET_BIND_QUOTA (0: 100)
	VIPRange            string                        // VIP pool, "A-B" or CIDR (default 127.240.0.1-127.240.255.254)
	HealthCheckInterval time.Duration                 // > 0: replaces every listener's health check interval (tests)
	DisableDataPlane    bool                          // allocate VIPs but open no sockets
	DataPlaneLog        func(format string, a ...any) // optional: bind failures, target health changes
	// DeleteLoadBalancer's frequency check: deleting CLBDeleteFrequencyLimit
	// (0: 30) or more load balancers in a region within
	// CLBDeleteFrequencyWindow (0: 5m) is refused with
	// FailedOperation.FrequencyCheckRisk, as documented. Tests shorten the
	// window.
	CLBDeleteFrequencyLimit  int
	CLBDeleteFrequencyWindow time.Duration
	// CLBNullHealthCheckFields: DescribeListeners answers null for every
	// health check field the SDK says may be null, whatever the check type.
	CLBNullHealthCheckFields bool

	// OCI (see oci.go). The OCI API is served under /20160918/,
	// /20170115/ and /20200501/ on the same address.
	OCIRegion             string            // OCI region played (default "us-ashburn-1")
	OCIKeys               map[string]string // API keys: keyId "<tenancy>/<user>/<fingerprint>" -> RSA public key PEM
	OCINetwork            OCINetworkSeed    // compartments, availability domains, VCNs, subnets, security lists to add
	OCIWorkRequestLatency time.Duration     // how long each LB/NLB work request runs (0: 300ms; negative: done before the call returns)
	OCILBLimits           OCIBalancerLimits // per load balancer: listeners, backend sets, backends per set and in all (zero fields: oci.DefaultLBLimits)
	OCINLBLimits          OCIBalancerLimits // the same for network load balancers (zero fields: oci.DefaultNLBLimits)
	// OCIFixedShapes plays a tenancy created before May 2023, which may
	// still create the fixed LB shapes (10Mbps, 100Mbps, 400Mbps,
	// 8000Mbps); by default only "flexible" is accepted, as since then.
	OCIFixedShapes bool
	// OCITerminatedRetention is how long a terminated instance stays
	// visible as TERMINATED in the OCI API (0: 12h, OCI's documented
	// minimum; negative: it disappears with TerminatedLinger).
	OCITerminatedRetention time.Duration
}

// Sim is a running emulator. It is safe for concurrent use.
type Sim struct {
	core    *core.Core
	tencent *tencent.Dialect
	clb     *tencent.CLB
	oci     *oci.Dialect
	plane   *dataplane.Plane
	handler http.Handler

	mu        sync.Mutex
	server    *http.Server
	ln        net.Listener
	done      chan struct{}
	suspended net.Addr // set while Suspend has closed the port
}

// New returns a Sim serving the Tencent API at POST /, the OCI API under
// its version prefixes and the admin API under /admin/. It panics if
// Options.RouteTables, Options.VPCs or Options.SecurityGroups is invalid (use
// CreateRouteTable, AddVPC or CreateSecurityGroup to handle the error),
// Options.VIPRange is malformed (check it with CheckVIPRange), or an OCI
// key or network seed is invalid (check them with CheckOCIOptions).
func New(opts Options) *Sim {
	c := core.New(core.Config{
		Region:           opts.Region,
		RateLimits:       opts.RateLimits,
		TerminatedLinger: opts.TerminatedLinger,
		Clock:            opts.Clock,
		OnCall:           opts.OnCall,
		Latency:          opts.Latency,
	})
	s := &Sim{
		core:    c,
		tencent: tencent.New(c, tencent.Options{Credentials: opts.Credentials}),
	}
	s.startCLB(opts)
	s.startOCI(opts)
	for _, v := range opts.VPCs {
		if _, err := s.AddVPC(v); err != nil {
			panic(fmt.Sprintf("cloudsim: Options.VPCs: %v", err))
		}
	}
	for _, sg := range opts.SecurityGroups {
		if _, err := s.CreateSecurityGroup(sg); err != nil {
			panic(fmt.Sprintf("cloudsim: Options.SecurityGroups: %v", err))
		}
	}
	for _, rt := range opts.RouteTables {
		if _, err := s.CreateRouteTable(rt); err != nil {
			panic(fmt.Sprintf("cloudsim: Options.RouteTables: %v", err))
		}
	}
	for _, rt := range opts.VPCRouteTables {
		if _, err := s.CreateVPCRouteTable(rt); err != nil {
			panic(fmt.Sprintf("cloudsim: Options.VPCRouteTables: %v", err))
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/admin/", c.AdminHandler())
	mux.Handle("/", s.tencent)
	for _, p := range []string{oci.PrefixCore, oci.PrefixLoadBalancer, oci.PrefixNLB} {
		mux.Handle(p+"/", s.oci) // the OCI dialect: REST paths under its API versions
	}
	s.handler = serverDate(c.Now, mux)
	return s
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

// Tencent exposes the Tencent dialect, e.g. to register more services.
func (s *Sim) Tencent() *tencent.Dialect { return s.tencent }

// Handler serves the Tencent API at POST /, the OCI API under its version
// prefixes and the admin API under /admin/.
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
// until ctx ends; then it stops the data plane and pending CLB tasks.
func (s *Sim) Shutdown(ctx context.Context) error {
	defer s.stopCLB()
	defer s.stopOCI() // runs first: its work requests end before the data plane stops
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

// Close stops a started Sim immediately. It also stops the load balancers'
// data plane and pending CLB tasks, even if the Sim was never started.
func (s *Sim) Close() error {
	defer s.stopCLB()
	defer s.stopOCI() // runs first: its work requests end before the data plane stops
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

// CreateRouteTable adds a TKE cluster route table with its routes, all or
// nothing, validated as CreateClusterRoute would (CIDR inside the table, one
// CIDR per gateway, no overlap).
func (s *Sim) CreateRouteTable(rt RouteTable) (RouteTable, error) {
	return s.tencent.TKE().CreateRouteTable(rt)
}

// RouteTables returns every TKE cluster route table with its routes.
func (s *Sim) RouteTables() []RouteTable { return s.tencent.TKE().RouteTables() }

// RouteTable returns one TKE cluster route table with its routes.
func (s *Sim) RouteTable(name string) (RouteTable, error) { return s.tencent.TKE().RouteTable(name) }

// AddClusterRoute adds a route out of band, as another tool would (the
// gateway need not be an instance).
func (s *Sim) AddClusterRoute(table string, r ClusterRoute) error {
	return s.tencent.TKE().AddRoute(table, r)
}

// DeleteClusterRoute removes a route out of band; a missing route is fine.
func (s *Sim) DeleteClusterRoute(table string, r ClusterRoute) error {
	return s.tencent.TKE().DeleteRoute(table, r)
}

// LoadSeed reads a YAML or JSON seed file holding {"instances": [...]}.
func LoadSeed(path string) ([]Instance, error) { return core.LoadSeed(path) }
