package core

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Defaults for Config.
const (
	DefaultRegion           = "ap-guangzhou"
	DefaultTerminatedLinger = 2 * time.Second
)

// Config configures a Core.
type Config struct {
	// Region is the default region: instances whose zone has no "-<n>"
	// suffix live here, and empty zones default to "<Region>-1".
	Region string
	// RateLimits overrides per-action limits in requests per second;
	// 0 or negative disables the limit for that action.
	RateLimits map[string]float64
	// TerminatedLinger is how long a TERMINATING instance stays visible.
	// 0 means DefaultTerminatedLinger; negative means forever.
	TerminatedLinger time.Duration
	// Clock returns the current time; default time.Now.
	Clock func() time.Time
	// OnCall, if set, is called after every API call (for logging).
	OnCall func(CallInfo)
	// Latency overrides every dialect's default answer time (latency.go);
	// nil keeps the defaults, ZeroLatency answers at once.
	Latency *Latency
	// ReadLag delays the visibility of new and changed resources in
	// List/Describe answers by up to this long (lag.go); 0: off.
	ReadLag time.Duration
}

// CallInfo describes one finished API call.
type CallInfo struct {
	Time          time.Time
	Dialect       string // "tencent"
	Service       string // "cvm"
	Action        string // "DescribeInstances"
	Region        string
	Principal     string // the caller's key id (never a secret)
	RequestClient string
	RequestID     string
	Code          string // "OK", an error code, or "HTTP<status>"
	Message       string // error message, if any
	Duration      time.Duration
	RemoteAddr    string
}

// CodeOK is the result code of a successful call.
const CodeOK = "OK"

// Core holds the simulated cloud's state. It is safe for concurrent use.
type Core struct {
	region string
	linger time.Duration
	clock  func() time.Time
	onCall func(CallInfo)

	mu     sync.Mutex // guards fleet and checks
	fleet  fleet
	checks []func(Instance) error // the dialects' checks of new instances (firewall.go)

	limMu     sync.Mutex
	overrides map[string]float64 // from Config or SetRateLimit
	defaults  map[string]float64 // registered by dialects
	limiters  map[string]*rate.Limiter

	faultMu sync.Mutex
	faults  map[string]Fault

	callMu sync.Mutex
	calls  map[string]map[string]int
	recent recentCalls // the last calls, for the console (recent.go)

	latMu       sync.Mutex // guards latDefaults and latRand
	latency     *Latency   // from Config; nil: latDefaults
	latDefaults map[string]Latency
	latRand     *rand.Rand

	lag *Lag // lagging reads (lag.go)

	adminMux *http.ServeMux
}

// New returns a Core.
func New(cfg Config) *Core {
	c := &Core{
		region:    cfg.Region,
		linger:    cfg.TerminatedLinger,
		clock:     cfg.Clock,
		onCall:    cfg.OnCall,
		fleet:     fleet{byID: map[string]*Record{}, byOCID: map[string]*Record{}},
		overrides: map[string]float64{},
		defaults:  map[string]float64{},
		limiters:  map[string]*rate.Limiter{},
		faults:    map[string]Fault{},
		calls:     map[string]map[string]int{},

		latency:     cfg.Latency,
		latDefaults: map[string]Latency{},
		latRand:     rand.New(rand.NewPCG(1, 2)), // fixed seed: runs see the same sequence of answer times
	}
	if c.region == "" {
		c.region = DefaultRegion
	}
	if c.linger == 0 {
		c.linger = DefaultTerminatedLinger
	}
	if c.clock == nil {
		c.clock = time.Now
	}
	maps.Copy(c.overrides, cfg.RateLimits)
	c.lag = newLag(c.clock)
	_ = c.lag.Set(min(max(cfg.ReadLag, 0), MaxReadLag))
	c.adminMux = c.newAdminMux()
	return c
}

// Region is the default region.
func (c *Core) Region() string { return c.region }

// Now is the simulator's clock.
func (c *Core) Now() time.Time { return c.clock() }

// ---- fleet ----

// AddInstances validates the instances (unique ids, unique private IP within
// a VPC, unique public IP, valid ids/IPs/states), fills defaults and adds
// them all, or none if any is invalid. It returns the stored instances.
func (c *Core) AddInstances(in ...Instance) ([]Instance, error) {
	if err := c.runChecks(in); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock()
	c.fleet.gc(now, c.linger)
	added, err := c.fleet.add(now, c.region, in)
	for _, a := range added {
		if r := c.fleet.lookup(a.ID); r != nil {
			c.lag.Wrote(instanceKey(r), nil, copyRecord(r))
		}
	}
	return added, err
}

// Lag is the core's lagging reads (lag.go), for the dialects' resources.
func (c *Core) Lag() *Lag { return c.lag }

// instanceKey is an instance's key in the Lag.
func instanceKey(r *Record) string { return "instance/" + r.ID }

func copyRecord(r *Record) Record {
	out := *r
	out.Instance = r.Instance.clone()
	return out
}

// ReadSnapshot is Snapshot as a List/Describe answer sees it: with the
// read lag, the version of each instance visible now, and no new instance
// before it is visible (lag.go).
func (c *Core) ReadSnapshot() []Record {
	recs := c.Snapshot()
	out := recs[:0]
	for _, r := range recs {
		if v, ok := Viewed(c.lag, "instance/"+r.ID, r); ok {
			out = append(out, v)
		}
	}
	return out
}

// ReadInstanceRecord is InstanceRecord as a read by id sees it: with the
// read lag, a new instance not visible yet is not found.
func (c *Core) ReadInstanceRecord(id string) (Record, error) {
	r, err := c.InstanceRecord(id)
	if err != nil {
		return r, err
	}
	v, ok := Viewed(c.lag, "instance/"+r.ID, r)
	if !ok {
		return Record{}, fmt.Errorf("instance %q: %w", id, ErrNotFound)
	}
	return v, nil
}

// Instances returns the visible instances in creation order.
func (c *Core) Instances() []Instance {
	recs := c.Snapshot()
	out := make([]Instance, len(recs))
	for i, r := range recs {
		out[i] = r.Instance
	}
	return out
}

// Snapshot returns copies of the visible instance records in creation order.
func (c *Core) Snapshot() []Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fleet.gc(c.clock(), c.linger)
	recs := c.fleet.sorted()
	out := make([]Record, len(recs))
	for i, r := range recs {
		out[i] = *r
		out[i].Instance = r.Instance.clone()
	}
	return out
}

// Instance returns one visible instance, found by its id or its OCID.
func (c *Core) Instance(id string) (Instance, error) {
	r, err := c.InstanceRecord(id)
	if err != nil {
		return Instance{}, err
	}
	return r.Instance, nil
}

// InstanceRecord returns a copy of one visible instance's record, found by
// its id or its OCID.
func (c *Core) InstanceRecord(id string) (Record, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fleet.gc(c.clock(), c.linger)
	r := c.fleet.lookup(id)
	if r == nil {
		return Record{}, fmt.Errorf("instance %q: %w", id, ErrNotFound)
	}
	out := *r
	out.Instance = r.Instance.clone()
	return out, nil
}

// TerminatedLinger is how long a TERMINATING instance stays visible
// (negative: forever).
func (c *Core) TerminatedLinger() time.Duration { return c.linger }

// SetInstanceState changes an instance's state; id may also be the
// instance's OCID. Entering TERMINATING starts the linger clock, after which
// the instance disappears; a TERMINATING instance cannot change state again.
func (c *Core) SetInstanceState(id, state string) (Instance, error) {
	st, ok := NormalizeState(state)
	if !ok {
		return Instance{}, fmt.Errorf("%w: unknown state %q (valid: %v)", ErrInvalid, state, States)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock()
	c.fleet.gc(now, c.linger)
	r := c.fleet.lookup(id)
	if r == nil {
		return Instance{}, fmt.Errorf("instance %q: %w", id, ErrNotFound)
	}
	if r.State == StateTerminating {
		if st == StateTerminating {
			return r.Instance.clone(), nil
		}
		return Instance{}, fmt.Errorf("%w: instance %q is TERMINATING and cannot become %s", ErrInvalid, id, st)
	}
	before := copyRecord(r)
	r.State = st
	if st == StateTerminating {
		r.Terminated = now
	}
	c.lag.Wrote(instanceKey(r), before, copyRecord(r))
	return r.Instance.clone(), nil
}

// ---- rate limits ----

// SetDefaultRateLimit registers an action's documented limit. It is used
// unless Config.RateLimits or SetRateLimit overrides it. Dialects call this.
func (c *Core) SetDefaultRateLimit(action string, qps float64) {
	c.limMu.Lock()
	defer c.limMu.Unlock()
	c.defaults[action] = qps
	delete(c.limiters, action)
}

// SetRateLimit overrides an action's limit; 0 or negative disables it.
func (c *Core) SetRateLimit(action string, qps float64) {
	c.limMu.Lock()
	defer c.limMu.Unlock()
	c.overrides[action] = qps
	delete(c.limiters, action)
}

// RateLimits returns the effective limits (actions without a limit are
// absent).
func (c *Core) RateLimits() map[string]float64 {
	c.limMu.Lock()
	defer c.limMu.Unlock()
	out := map[string]float64{}
	for a, q := range c.defaults {
		out[a] = q
	}
	for a, q := range c.overrides {
		out[a] = q
	}
	for a, q := range out {
		if q <= 0 {
			delete(out, a)
		}
	}
	return out
}

// Allow takes a token from the action's bucket (burst = the rate, at least
// 1). It reports false, with the limit, if the call must be throttled.
func (c *Core) Allow(action string) (ok bool, limit float64) {
	c.limMu.Lock()
	defer c.limMu.Unlock()
	qps, found := c.overrides[action]
	if !found {
		qps, found = c.defaults[action]
	}
	if !found || qps <= 0 {
		return true, 0
	}
	lim := c.limiters[action]
	if lim == nil {
		lim = rate.NewLimiter(rate.Limit(qps), max(1, int(math.Ceil(qps))))
		c.limiters[action] = lim
	}
	return lim.AllowN(c.clock(), 1), qps
}

// ---- faults ----

// SetFault replaces the fault of f.Action. Out-of-range values are clamped
// (use Fault.Validate to reject them instead); an empty Action means
// AllActions.
func (c *Core) SetFault(f Fault) {
	f = f.normalize()
	c.faultMu.Lock()
	defer c.faultMu.Unlock()
	c.faults[f.Action] = f
}

// ClearFault removes the fault of one action.
func (c *Core) ClearFault(action string) {
	c.faultMu.Lock()
	defer c.faultMu.Unlock()
	delete(c.faults, action)
}

// ClearFaults removes all faults.
func (c *Core) ClearFaults() {
	c.faultMu.Lock()
	defer c.faultMu.Unlock()
	clear(c.faults)
}

// Faults returns the configured faults.
func (c *Core) Faults() []Fault {
	c.faultMu.Lock()
	defer c.faultMu.Unlock()
	out := make([]Fault, 0, len(c.faults))
	for _, f := range c.faults {
		out = append(out, f)
	}
	return out
}

// Fault applies the fault configured for action (or else for AllActions):
// it waits the fault's latency (returning early if ctx ends) and then, with
// the fault's error rate, returns the fault the call must fail with. It
// returns nil if the call proceeds normally.
func (c *Core) Fault(ctx context.Context, action string) *Fault {
	c.faultMu.Lock()
	f, ok := c.lookupFaultLocked(action)
	c.faultMu.Unlock()
	if !ok {
		return nil
	}
	if f.Latency > 0 {
		t := time.NewTimer(f.Latency)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	// A FailTask fault fails the call's task (see TaskFault), not the call.
	if !f.FailTask && f.ErrorRate > 0 && rand.Float64() < f.ErrorRate && c.consumeFault(f) {
		return &f
	}
	return nil
}

// lookupFaultLocked returns the fault of action, else of AllActions.
func (c *Core) lookupFaultLocked(action string) (Fault, bool) {
	f, ok := c.faults[action]
	if !ok {
		f, ok = c.faults[AllActions]
	}
	return f, ok
}

// consumeFault counts one failure against a fault with Times, clearing it
// at zero. It reports false when the fault was used up (or replaced) by
// concurrent calls in the meantime, so a Times fault fails exactly Times
// calls.
func (c *Core) consumeFault(f Fault) bool {
	if f.Times == 0 {
		return true
	}
	c.faultMu.Lock()
	defer c.faultMu.Unlock()
	cur, ok := c.faults[f.Action]
	if !ok || cur.Times == 0 {
		return false
	}
	if cur.Times--; cur.Times == 0 {
		delete(c.faults, f.Action)
	} else {
		c.faults[f.Action] = cur
	}
	return true
}

// ---- call counts ----

// Record counts a finished call under (Action, Code) and passes it to the
// OnCall hook.
func (c *Core) Record(ci CallInfo) {
	if ci.Code == "" {
		ci.Code = CodeOK
	}
	c.callMu.Lock()
	m := c.calls[ci.Action]
	if m == nil {
		m = map[string]int{}
		c.calls[ci.Action] = m
	}
	m[ci.Code]++
	c.callMu.Unlock()
	c.recent.add(ci)
	if c.onCall != nil {
		c.onCall(ci)
	}
}

// Calls returns action -> result code -> count.
func (c *Core) Calls() map[string]map[string]int {
	c.callMu.Lock()
	defer c.callMu.Unlock()
	out := make(map[string]map[string]int, len(c.calls))
	for a, m := range c.calls {
		out[a] = maps.Clone(m)
	}
	return out
}

// ResetCalls zeroes the call counters and forgets the recent calls.
func (c *Core) ResetCalls() {
	c.recent.reset()
	c.callMu.Lock()
	defer c.callMu.Unlock()
	clear(c.calls)
}
