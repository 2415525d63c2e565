package tencent

import (
	"cmp"
	"crypto/rand"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// CLB (clb 2018-03-17) limits and defaults. Those marked "cloudsim's choice"
// are not documented by Tencent.
const (
	CLBVersion = "2018-03-17"
	// CLBActionQPS is the documented rate limit of every CLB action.
	CLBActionQPS = 20
	// DefaultTaskLatency is how long an asynchronous CLB task runs.
	DefaultTaskLatency = 200 * time.Millisecond
	// DefaultCLBQuota is the documented default quota of load balancers per
	// region and network type (OPEN and INTERNAL each).
	DefaultCLBQuota = 100

	MaxLoadBalancerIDs        = 20  // DescribeLoadBalancers, DeleteLoadBalancer
	MaxCLBDescribeLimit       = 100 // DescribeLoadBalancers Limit
	MaxCLBFilters             = 10  // DescribeLoadBalancers Filters
	MaxCLBFilterValues        = 100 // values per filter
	MaxLBTags                 = 20  // CreateLoadBalancer Tags
	MaxCLBNameLen             = 80  // LoadBalancerName, ListenerName (characters)
	MaxClientTokenLen         = 64
	MaxListenerIDs            = 100 // DescribeListeners
	MaxTargetsListenerIDs     = 20  // DescribeTargets
	MaxDeleteListenerIDs      = 20  // DeleteLoadBalancerListeners
	MaxTargetsPerCall         = 20  // RegisterTargets, DeregisterTargets
	MaxBatchTargets           = 500 // BatchRegisterTargets, BatchDeregisterTargets
	MaxTargetHealthLBs        = 30  // DescribeTargetHealth
	TargetNumCheckRiskTargets = 20  // DeleteLoadBalancer refuses an LB with this many backends unless ForceDelete
	DefaultTargetWeight       = 10

	// ListenerQuota is TOTAL_LISTENER_QUOTA, the listeners of one load
	// balancer. Quota model comment (clb@v1.3.105 models.go, type Quota):
	// "TOTAL_LISTENER_QUOTA：一个CLB下的监听器配额"; the CLB "Use Limits" page
	// (https://www.tencentcloud.com/document/product/214/6187): "Number of
	// listeners that can be added to an instance: 50".
	ListenerQuota = 50
	// DefaultTargetQuota is TOTAL_TARGET_BIND_QUOTA, the targets one layer-4
	// listener (one forwarding rule) can bind. Quota model comment:
	// "TOTAL_TARGET_BIND_QUOTA：一条转发规则下可绑定设备的配额"; the Use Limits
	// page: "Number of servers that can be bound to a forwarding rule in a
	// CLB instance: 100". A ticket can raise it: CLBOptions.TargetQuota.
	DefaultTargetQuota = 100
	// DefaultDeleteFrequencyLimit and DefaultDeleteFrequencyWindow are
	// DeleteLoadBalancer's frequency check: deleting 30 or more load
	// balancers in one region within 5 minutes is refused with
	// FailedOperation.FrequencyCheckRisk, and ForceDelete does not override
	// it (clb@v1.3.105 models.go, DeleteLoadBalancerRequestParams.ForceDelete:
	// "3、单地域内 5 分钟 内删除大于等于 30 个实例时", and only cases 1 and 2 may be
	// forced: "如果触发情况1、2但确认强制删除则需要传强制校验参数ForceDelete为true").
	DefaultDeleteFrequencyLimit  = 30
	DefaultDeleteFrequencyWindow = 5 * time.Minute
)

// CLBOptions configures the CLB service.
type CLBOptions struct {
	// Plane carries the load balancers' traffic. Nil: a disabled plane (VIPs
	// are allocated, nothing listens).
	Plane *dataplane.Plane
	// TaskLatency is how long each asynchronous task runs: 0 means
	// DefaultTaskLatency, a negative value makes tasks end before the call
	// returns.
	TaskLatency time.Duration
	// QuotaOpen and QuotaInternal are the load balancers allowed per region
	// (0: DefaultCLBQuota).
	QuotaOpen, QuotaInternal int
	// TargetQuota is the targets allowed per listener (0:
	// DefaultTargetQuota), as a ticket to Tencent Cloud can raise it.
	TargetQuota int
	// DeleteFrequencyLimit and DeleteFrequencyWindow shape DeleteLoadBalancer's
	// frequency check (0: the documented 30 per 5 minutes). Tests shorten
	// the window, as they shorten TaskLatency.
	DeleteFrequencyLimit  int
	DeleteFrequencyWindow time.Duration
	// NullHealthCheckFields makes DescribeListeners answer null for every
	// health check field the SDK says "may be returned as null" (HttpCode,
	// HttpCheckPath, HttpCheckDomain, HttpCheckMethod, HttpVersion,
	// CheckPort, ContextType, SendContext, RecvContext), whatever the check
	// type, so that clients prove they cope. Off: only the fields that do
	// not apply to the check type are null.
	NullHealthCheckFields bool
	// SecurityGroups are the groups CLBs can be bound to (the dialect's,
	// Dialect.SecurityGroups); nil: a private set without admin endpoints.
	SecurityGroups *SecurityGroups
}

// CLB is the emulated Cloud Load Balancer service: its API state, the
// asynchronous tasks that change it, and the data plane that carries its
// traffic. Register its Service with the dialect.
type CLB struct {
	core     *core.Core
	plane    *dataplane.Plane
	ownPlane bool
	tasks    *core.Tasks
	latency  time.Duration
	quota    map[string]int // OPEN / INTERNAL -> load balancers per region
	// targetQuota is TOTAL_TARGET_BIND_QUOTA: targets per listener.
	targetQuota int
	sgs         *SecurityGroups

	deleteLimit  int
	deleteWindow time.Duration
	nullHC       bool

	mu        sync.Mutex
	lbs       map[string]*clbLB
	seq       int64
	tokens    map[string]*clbToken // region + "/" + ClientToken
	dealSeq   int64
	deletions map[string][]time.Time  // region -> when each accepted deletion was asked for (frequency check)
	bindFails map[string]*BindFailure // listener id -> injected BatchRegisterTargets failure
	certs     map[string]*sslCert     // the certificate store, by id (clb_certificate.go)
}

// clbLB is one load balancer.
type clbLB struct {
	id, name, typ, region string
	vpcID, subnetID       string
	vip                   netip.Addr
	status                uint64 // 0 creating, 1 normal
	tags                  []clbTag
	passToTarget          bool
	internet              clbInternet // creation-time network settings (clb_internet.go)
	securityGroups        []string    // bound security groups, in priority order
	created, statusTime   time.Time
	seq                   int64
	listeners             []*clbListener // in creation order
}

type clbTag struct{ key, value string }

// clbListener is one layer-4 listener.
type clbListener struct {
	id, name, protocol string
	port               int64
	hc                 lbHealthCheck
	scheduler          string
	sessionExpire      int64
	idleTimeout        int64
	created            time.Time
	targets            []*clbTarget  // in registration order
	cert               *listenerCert // TCP_SSL: the certificate TLS ends with (clb_certificate.go)
	rules              []*clbRule    // HTTP, HTTPS: forwarding rules, which hold the targets (clb_rules.go)
}

// clbTarget is one backend bound to a listener: an instance's primary
// private IP, or an IP (EniIp), with a port.
type clbTarget struct {
	instanceID, eniIP string
	port, weight      int64
	tag               string
	ip                string // the address traffic goes to
	registered        time.Time
}

// key identifies a binding within a listener.
func (t *clbTarget) key() string {
	if t.instanceID != "" {
		return fmt.Sprintf("ins %s:%d", t.instanceID, t.port)
	}
	return fmt.Sprintf("ip %s:%d", t.eniIP, t.port)
}

// backend identifies the real server behind a binding (for counting RS).
func (t *clbTarget) backend() string {
	if t.instanceID != "" {
		return t.instanceID
	}
	return t.eniIP
}

// clbToken remembers what a CreateLoadBalancer ClientToken produced.
type clbToken struct {
	ids      []string
	dealName string
	failed   bool
}

// NewCLB returns the CLB service over c and adds its admin endpoints to
// c's admin API, so make one per Core. Register its Service with the
// dialect, and Close it when done.
func NewCLB(c *core.Core, opts CLBOptions) *CLB {
	l := &CLB{
		core:    c,
		plane:   opts.Plane,
		tasks:   core.NewTasks(c, 0),
		latency: opts.TaskLatency,
		quota:   map[string]int{lbTypeOpen: opts.QuotaOpen, lbTypeInternal: opts.QuotaInternal},
		sgs:     opts.SecurityGroups,
		lbs:     map[string]*clbLB{},
		tokens:  map[string]*clbToken{},

		deleteLimit:  opts.DeleteFrequencyLimit,
		deleteWindow: opts.DeleteFrequencyWindow,
		nullHC:       opts.NullHealthCheckFields,
		deletions:    map[string][]time.Time{},
		bindFails:    map[string]*BindFailure{},
		certs:        map[string]*sslCert{},
	}
	if l.deleteLimit <= 0 {
		l.deleteLimit = DefaultDeleteFrequencyLimit
	}
	if l.deleteWindow <= 0 {
		l.deleteWindow = DefaultDeleteFrequencyWindow
	}
	// TOTAL_TARGET_BIND_QUOTA; 0 (or less) means the documented default.
	l.targetQuota = cmp.Or(max(opts.TargetQuota, 0), DefaultTargetQuota)
	if l.plane == nil {
		p, err := dataplane.New(dataplane.Config{Disabled: true})
		if err != nil {
			panic(err) // the default VIP range always parses
		}
		l.plane, l.ownPlane = p, true
	}
	if l.latency == 0 {
		l.latency = DefaultTaskLatency
	}
	if l.sgs == nil {
		l.sgs = newSecurityGroups(c)
	}
	for k, v := range l.quota {
		if v <= 0 {
			l.quota[k] = DefaultCLBQuota
		}
	}
	l.registerAdmin()
	return l
}

// Service is the clb service for Dialect.Register.
func (l *CLB) Service() *Service {
	acts := map[string]ActionFunc{
		"CreateLoadBalancer":               l.createLoadBalancer,
		"DescribeLoadBalancers":            l.describeLoadBalancers,
		"DeleteLoadBalancer":               l.deleteLoadBalancer,
		"ModifyLoadBalancerAttributes":     l.modifyLoadBalancerAttributes,
		"DescribeQuota":                    l.describeQuota,
		"CreateListener":                   l.createListener,
		"DescribeListeners":                l.describeListeners,
		"ModifyListener":                   l.modifyListener,
		"DeleteListener":                   l.deleteListener,
		"DeleteLoadBalancerListeners":      l.deleteLoadBalancerListeners,
		"RegisterTargets":                  l.registerTargets,
		"DeregisterTargets":                l.deregisterTargets,
		"BatchRegisterTargets":             l.batchRegisterTargets,
		"BatchDeregisterTargets":           l.batchDeregisterTargets,
		"ModifyTargetWeight":               l.modifyTargetWeight,
		"BatchModifyTargetWeight":          l.batchModifyTargetWeight,
		"DescribeTargets":                  l.describeTargets,
		"DescribeTargetHealth":             l.describeTargetHealth,
		"CreateRule":                       l.createRule,
		"ModifyRule":                       l.modifyRule,
		"DeleteRule":                       l.deleteRule,
		"DescribeTaskStatus":               l.describeTaskStatus,
		"SetLoadBalancerSecurityGroups":    l.setLoadBalancerSecurityGroups,
		"SetSecurityGroupForLoadbalancers": l.setSecurityGroupForLoadbalancers,
	}
	s := &Service{Name: "clb", Version: CLBVersion, Actions: map[string]Action{}}
	for name, h := range acts {
		s.Actions[name] = Action{Handler: documented(name, h), RateLimit: CLBActionQPS, RegionRequired: true}
	}
	return s
}

// Close stops running tasks (they never finish) and, if the CLB made its
// own data plane, that plane.
func (l *CLB) Close() {
	l.tasks.Close()
	if l.ownPlane {
		l.plane.Close()
	}
}

// Plane is the data plane the CLB drives.
func (l *CLB) Plane() *dataplane.Plane { return l.plane }

// ---- errors ----

func errLBNotFound(id string) *Error {
	return Errorf("InvalidParameter.LBIdNotFound", "The LoadBalancer `%s` does not exist.", id)
}

func errListenerNotFound(lbID, id string) *Error {
	return Errorf("InvalidParameter.ListenerIdNotFound", "The listener `%s` does not exist in LoadBalancer `%s`.", id, lbID)
}

func errMissing(param string) *Error {
	return Errorf("MissingParameter", "The request is missing a required parameter `%s`.", param)
}

// ---- asynchronous tasks ----

// startTask runs the common shape of every asynchronous CLB call. Under the
// store lock, prepare validates the call and returns apply, which makes the
// change; then the load balancers are reserved (one task at a time per
// load balancer: FailedOperation.ResourceInOperating) and the task starts.
// apply runs under the store lock when the task ends, and the data plane of
// every load balancer in lbIDs is synced after it. It returns the task.
func (l *CLB) startTask(call *Call, lbIDs []string, prepare func() (apply func() error, err *Error)) (core.Task, error) {
	l.mu.Lock()
	apply, perr := prepare()
	if perr != nil {
		l.mu.Unlock()
		return core.Task{}, perr
	}
	res, err := l.tasks.Reserve(call.Action, lbIDs...)
	l.mu.Unlock()
	if err != nil {
		return core.Task{}, errInOperating(err)
	}
	return l.tasks.Start(res, core.TaskSpec{
		ID:      call.RequestID,
		Action:  call.Action,
		Result:  lbIDs,
		Latency: l.latency,
		Apply: func() error {
			l.mu.Lock()
			defer l.mu.Unlock()
			before := make([]*clbLB, len(lbIDs))
			for i, id := range lbIDs {
				before[i] = l.lagSnapshotLocked(id)
			}
			err := apply()
			for i, id := range lbIDs {
				l.syncPlaneLocked(id)
				l.lagWroteLocked(id, before[i]) // reads see it within the read lag (clb_lag.go)
			}
			return err
		},
	}), nil
}

// errInOperating is the answer to a write on a load balancer that has a
// task running. Actions that do not document
// FailedOperation.ResourceInOperating answer plain FailedOperation with the
// same message (see documented in clb_codes.go).
func errInOperating(err error) *Error {
	var be *core.BusyError
	if errors.As(err, &be) {
		return Errorf(codeResourceInOperating,
			"Your task is working (%s) on LoadBalancer `%s`. Please wait for the task to complete and try again.", be.Holder, be.Resource)
	}
	return Errorf(codeResourceInOperating, "%v", err)
}

// lbLocked finds a load balancer of the call's region. Callers hold l.mu.
func (l *CLB) lbLocked(region, id string) (*clbLB, *Error) {
	if id == "" {
		return nil, errMissing("LoadBalancerId")
	}
	lb := l.lbs[id]
	if lb == nil || lb.region != region {
		return nil, errLBNotFound(id)
	}
	return lb, nil
}

func (lb *clbLB) listener(id string) *clbListener {
	for _, li := range lb.listeners {
		if li.id == id {
			return li
		}
	}
	return nil
}

// ---- ids ----

// randomID returns prefix + 8 lowercase letters or digits, the format of
// Tencent's lb-/lbl- ids.
func randomID(prefix string) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return prefix + string(b)
}

// newLBIDLocked returns an unused load balancer id.
func (l *CLB) newLBIDLocked() string {
	for {
		id := randomID("lb-")
		if l.lbs[id] == nil {
			return id
		}
	}
}

// newListenerIDLocked returns a listener id unused in every load balancer.
func (l *CLB) newListenerIDLocked() string {
	for {
		id := randomID("lbl-")
		used := false
		for _, lb := range l.lbs {
			if lb.listener(id) != nil {
				used = true
				break
			}
		}
		if !used {
			return id
		}
	}
}

// clbTime formats a time as the CLB API does ("YYYY-MM-DD hh:mm:ss", Beijing
// time).
func clbTime(t time.Time) string { return t.In(beijing).Format("2006-01-02 15:04:05") }
