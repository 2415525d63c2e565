package oci

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	"github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// The two kinds of load balancer. They share their lifecycle, work
// requests, VIP pool and data plane; only the API and the shape of the
// listeners and backend sets differ.
const (
	kindLB  = "lb"
	kindNLB = "nlb"
)

func kindName(kind string) string {
	if kind == kindNLB {
		return "networkloadbalancer"
	}
	return "loadbalancer"
}

// Lifecycle states (LB and NLB use the same words; UPDATING is NLB's only).
const (
	stateCreating = "CREATING"
	stateActive   = "ACTIVE"
	stateUpdating = "UPDATING"
	stateFailed   = "FAILED"
	stateDeleting = "DELETING"
	stateDeleted  = "DELETED"
)

// balancer is one load balancer or network load balancer. Its listener and
// backend-set values are the SDK's models; they are never modified in
// place, only replaced, so a copy of the maps is a snapshot.
type balancer struct {
	kind             string
	id               string
	compartmentID    string
	displayName      string
	lifecycle        string
	created, updated time.Time
	deleted          time.Time
	isPrivate        bool
	subnetIDs        []string
	nsgIDs           []string
	freeformTags     map[string]string
	definedTags      map[string]map[string]interface{}
	deleteProtection bool
	vip              netip.Addr
	reservedIPID     string     // the reserved public IP that vip is (publicip.go)
	privateIPv4      netip.Addr // NLB: assignedPrivateIpv4 (nlbprivateip.go)
	// NLB: nlbIpVersion ("" is IPV4) and assignedIpv6 (ipv6.go).
	nlbIPVersion networkloadbalancer.NlbIpVersionEnum
	ipv6         netip.Addr
	version      int // for the etag
	seq          int64

	// Load Balancing
	shapeName    string
	shapeDetails *loadbalancer.ShapeDetails
	listeners    map[string]loadbalancer.Listener
	backendSets  map[string]loadbalancer.BackendSet
	certificates map[string]lbCertificate        // certificates.go
	ruleSets     map[string]loadbalancer.RuleSet // rulesets.go

	// Network Load Balancing
	preserveSourceDest bool
	symmetricHash      bool
	nlbListeners       map[string]networkloadbalancer.Listener
	nlbBackendSets     map[string]networkloadbalancer.BackendSet
}

func (b *balancer) etag() string { return etag(b.id, b.version) }

// clone copies the maps and slices (their values are immutable).
func (b *balancer) clone() *balancer {
	c := *b
	c.subnetIDs = slices.Clone(b.subnetIDs)
	c.nsgIDs = slices.Clone(b.nsgIDs)
	c.freeformTags = maps.Clone(b.freeformTags)
	c.definedTags = maps.Clone(b.definedTags)
	c.listeners = maps.Clone(b.listeners)
	c.backendSets = maps.Clone(b.backendSets)
	c.certificates = maps.Clone(b.certificates)
	c.ruleSets = maps.Clone(b.ruleSets)
	c.nlbListeners = maps.Clone(b.nlbListeners)
	c.nlbBackendSets = maps.Clone(b.nlbBackendSets)
	return &c
}

// balancers is every load balancer of both kinds.
type balancers struct {
	mu   sync.Mutex
	byID map[string]*balancer
	seq  int64
}

func newBalancers() *balancers { return &balancers{byID: map[string]*balancer{}} }

// gcLocked forgets load balancers DELETED longer than the retention.
func (bs *balancers) gcLocked(now time.Time, retention time.Duration) {
	for id, b := range bs.byID {
		if b.lifecycle == stateDeleted && now.Sub(b.deleted) >= retention {
			delete(bs.byID, id)
		}
	}
}

// get returns a copy of a load balancer of the kind (DELETED ones while
// they are retained).
func (bs *balancers) get(id, kind string, now time.Time, retention time.Duration) (*balancer, error) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	bs.gcLocked(now, retention)
	b := bs.byID[id]
	if b == nil || b.kind != kind {
		return nil, notFound(kindName(kind), id)
	}
	return b.clone(), nil
}

// list returns copies of the load balancers of a kind in a compartment, in
// creation order.
func (bs *balancers) list(kind, compartment string, now time.Time, retention time.Duration) []*balancer {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	bs.gcLocked(now, retention)
	var out []*balancer
	for _, b := range bs.byID {
		if b.kind == kind && (compartment == "" || b.compartmentID == compartment) {
			out = append(out, b.clone())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// exists reports whether a resource a retry token created still exists.
func (d *Dialect) exists(id string) bool {
	d.lbs.mu.Lock()
	defer d.lbs.mu.Unlock()
	b := d.lbs.byID[id]
	return b != nil && b.lifecycle != stateDeleted
}

func busyKey(id string) string { return "oci/" + id }

// busyError is the 409 for a change while a work request is in flight.
// Network Load Balancing answers Conflict, naming the lifecycle states:
// "Invalid State Transition of NLB lifeCycle state from Updating to
// Updating" is what a change of an NLB that is updating gets (issue 11 item
// 11, ../shared/reference/oci-api.md "NLB busy"). The wording for other
// states (Creating, Deleting) follows it: cloudsim's choice. Load
// Balancing queues instead (queue.go) and never gets here busy.
func busyError(kind, lifecycle, id string, err error) error {
	var be *core.BusyError
	if !errors.As(err, &be) {
		return err
	}
	if kind == kindNLB {
		return Errorf(http.StatusConflict, CodeConflict, "Invalid State Transition of NLB lifeCycle state from %s to Updating",
			titleCase(lifecycle))
	}
	return incorrectState("The %s %s has a work request in progress (%s); retry when it has finished.",
		kindName(kind), id, strings.TrimPrefix(be.Holder, ActionPrefix))
}

// titleCase turns UPDATING into Updating.
func titleCase(s string) string {
	if s == "" {
		return s
	}
	return s[:1] + strings.ToLower(s[1:])
}

// listBalancers filters and sorts for ListLoadBalancers and
// ListNetworkLoadBalancers: displayName (exact), lifecycleState, sortBy
// TIMECREATED (default, newest first) or DISPLAYNAME.
func (d *Dialect) listBalancers(c *call, kind string) ([]*balancer, error) {
	comp, err := d.compartmentParam(c)
	if err != nil {
		return nil, err
	}
	state := strings.ToUpper(c.query("lifecycleState"))
	sortBy := strings.ToUpper(c.query("sortBy"))
	if sortBy == "" {
		sortBy = "TIMECREATED"
	}
	if sortBy != "TIMECREATED" && sortBy != "DISPLAYNAME" {
		return nil, badRequest("The sortBy %q must be TIMECREATED or DISPLAYNAME.", c.query("sortBy"))
	}
	def := "ASC"
	if sortBy == "TIMECREATED" {
		def = "DESC"
	}
	desc, err := sortOrder(c, def)
	if err != nil {
		return nil, err
	}
	var out []*balancer
	for _, b := range d.lbs.list(kind, comp, d.core.Now(), d.retention) {
		b, seen := d.visible(b)
		if !seen {
			continue // new, and not visible yet (lag.go)
		}
		if dn := c.query("displayName"); dn != "" && dn != b.displayName {
			continue
		}
		if state != "" && state != b.lifecycle {
			continue
		}
		out = append(out, b)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if sortBy == "DISPLAYNAME" && out[i].displayName != out[j].displayName {
			return (out[i].displayName < out[j].displayName) != desc
		}
		return (out[i].seq < out[j].seq) != desc
	})
	return out, nil
}

// create adds a new load balancer in CREATING, with a VIP, and starts the
// work request that makes it ACTIVE (or FAILED for an injected task
// fault). b holds the validated configuration.
func (d *Dialect) create(c *call, b *balancer, op, nlbOp string) (string, error) {
	prefix := "loadbalancer"
	if b.kind == kindNLB {
		prefix = "networkloadbalancer"
	}
	b.id = core.NewOCID(prefix)
	vip, err := d.takeVIP(b)
	if err != nil {
		return "", err
	}
	b.vip = vip
	res, err := d.tasks.Reserve(c.action, busyKey(b.id))
	if err != nil {
		d.releaseVIP(b)
		return "", err
	}
	now := d.core.Now()
	b.lifecycle, b.created, b.updated, b.version = stateCreating, now, now, 1
	d.lbs.mu.Lock()
	d.lbs.seq++
	b.seq = d.lbs.seq
	d.lbs.byID[b.id] = b
	d.lbs.mu.Unlock()
	d.lagWrote(b.id, nil)
	opName := op
	if b.kind == kindNLB {
		opName = nlbOp
	}
	id := b.id
	return d.startWorkRequest(b, c.action, opName, "CREATED", res,
		func() error {
			d.lbs.mu.Lock()
			defer d.lbs.mu.Unlock()
			cur := d.lbs.byID[id]
			if cur == nil || cur.lifecycle != stateCreating {
				return errors.New("the load balancer was deleted while it was being created")
			}
			cur.lifecycle, cur.updated = stateActive, d.core.Now()
			cur.version++
			d.syncPlaneLocked(cur)
			return nil
		},
		func(string) {
			d.lbs.mu.Lock()
			defer d.lbs.mu.Unlock()
			if cur := d.lbs.byID[id]; cur != nil {
				cur.lifecycle, cur.updated = stateFailed, d.core.Now()
				cur.version++
			}
		}), nil
}

// change is a validated change: it edits a copy of the load balancer when
// the work request ends. It returns an error if the change no longer
// applies (the state changed out of band meanwhile).
type change func(b *balancer) error

// prepareFunc validates a change against the current load balancer b
// (callers hold d.lbs.mu; it may set b's lifecycle) and returns what the
// work request runs when it succeeds (apply) or an injected fault fails it
// (abort).
type prepareFunc func(b *balancer) (apply func() error, abort func(string), err error)

// submit runs one change of an existing load balancer as a work request:
// 404 if it does not exist; then, for Network Load Balancing, 409 Conflict
// if a work request is in flight, where Load Balancing queues the change
// behind it (queue.go); 412 NoEtagMatch for a stale if-match; then prepare
// validates it against the current state.
func (d *Dialect) submit(c *call, kind, id, op, nlbOp, actionType string, prepare prepareFunc) (*reply, error) {
	cur, err := d.lbs.get(id, kind, d.core.Now(), d.retention)
	if err != nil {
		return nil, err
	}
	opName := op
	if kind == kindNLB {
		opName = nlbOp
	}
	ifMatch := c.r.Header.Get("if-match")
	wr := d.newWorkRequest(cur, opName, actionType)
	begin := func(res *core.Reservation, deferred bool) error {
		d.lbs.mu.Lock()
		b := d.lbs.byID[id]
		var apply func() error
		var abort func(string)
		var err error
		switch {
		case b == nil || b.kind != kind || b.lifecycle == stateDeleted:
			err = notFound(kindName(kind), id)
		case ifMatch != "" && ifMatch != b.etag():
			err = Errorf(http.StatusPreconditionFailed, CodeNoEtagMatch, "The if-match etag does not match the %s's current etag.", kindName(kind))
		default:
			apply, abort, err = prepare(b)
		}
		d.lbs.mu.Unlock()
		if err != nil && deferred {
			// Its turn came and it no longer applies: the work request
			// fails, with the error's code and message (wrErrorOf).
			d.runWorkRequest(wr, c.action, res, func() error { return err }, nil)
			return nil
		}
		if err != nil {
			res.Release()
			return err
		}
		d.runWorkRequest(wr, c.action, res, apply, abort)
		return nil
	}
	var res *core.Reservation
	if kind == kindLB {
		res, err = d.reserveOrQueue(c.action, id, &queued{wr: wr, action: c.action, start: func(res *core.Reservation) { _ = begin(res, true) }})
		if err == nil && res == nil {
			return (&reply{status: http.StatusNoContent}).with("opc-work-request-id", wr.id), nil
		}
	} else {
		res, err = d.tasks.Reserve(c.action, busyKey(id))
	}
	if err == nil {
		err = begin(res, false)
	}
	if err != nil {
		d.forgetWorkRequest(wr.id)
		return nil, busyError(kind, cur.lifecycle, id, err)
	}
	return (&reply{status: http.StatusNoContent}).with("opc-work-request-id", wr.id), nil
}

// mutate runs one change of an existing load balancer (see submit); it
// must be ACTIVE, and plan validates the request against its state and
// returns the change.
func (d *Dialect) mutate(c *call, kind, id, op, nlbOp, actionType string, plan func(b *balancer) (change, error)) (*reply, error) {
	return d.submit(c, kind, id, op, nlbOp, actionType, func(b *balancer) (func() error, func(string), error) {
		if b.lifecycle != stateActive {
			return nil, nil, incorrectState("The %s %s is %s; it must be ACTIVE to be changed.", kindName(kind), id, b.lifecycle)
		}
		ch, err := plan(b.clone())
		if err != nil {
			return nil, nil, err
		}
		if kind == kindNLB {
			// An NLB shows UPDATING while a change is in flight.
			b.lifecycle = stateUpdating
		}
		restore := func() {
			if cur := d.lbs.byID[id]; cur != nil && cur.lifecycle == stateUpdating {
				cur.lifecycle = stateActive
			}
		}
		apply := func() error {
			d.lbs.mu.Lock()
			defer d.lbs.mu.Unlock()
			defer restore()
			cur := d.lbs.byID[id]
			if cur == nil || cur.lifecycle == stateDeleted {
				return errors.New("the load balancer no longer exists")
			}
			next := cur.clone()
			if err := ch(next); err != nil {
				return err
			}
			next.lifecycle = stateActive
			next.updated = d.core.Now()
			next.version++
			d.lbs.byID[id] = next
			d.syncPlaneLocked(next)
			return nil
		}
		abort := func(string) {
			d.lbs.mu.Lock()
			defer d.lbs.mu.Unlock()
			restore()
		}
		return apply, abort, nil
	})
}

// remove deletes a load balancer through a work request: DELETING at
// once, DELETED (no traffic, VIP released) when it ends.
func (d *Dialect) remove(c *call, kind, id, op, nlbOp string) (*reply, error) {
	return d.submit(c, kind, id, op, nlbOp, "DELETED", func(b *balancer) (func() error, func(string), error) {
		switch {
		case b.lifecycle != stateActive && b.lifecycle != stateFailed:
			return nil, nil, incorrectState("The %s %s is %s and cannot be deleted now.", kindName(kind), id, b.lifecycle)
		case b.deleteProtection:
			return nil, nil, incorrectState("The %s %s has delete protection enabled.", kindName(kind), id)
		}
		before := b.lifecycle
		b.lifecycle = stateDeleting
		b.version++
		apply := func() error {
			d.lbs.mu.Lock()
			defer d.lbs.mu.Unlock()
			if cur := d.lbs.byID[id]; cur != nil {
				d.deleteLocked(cur)
			}
			return nil
		}
		abort := func(string) {
			d.lbs.mu.Lock()
			defer d.lbs.mu.Unlock()
			if cur := d.lbs.byID[id]; cur != nil && cur.lifecycle == stateDeleting {
				cur.lifecycle = before
				cur.version++
			}
		}
		return apply, abort, nil
	})
}

// deleteLocked makes a load balancer DELETED: it stops its traffic and
// returns its VIP. Callers hold d.lbs.mu.
func (d *Dialect) deleteLocked(b *balancer) {
	b.lifecycle, b.deleted, b.updated = stateDeleted, d.core.Now(), d.core.Now()
	b.version++
	d.plane.Remove(b.id)
	d.releaseVIP(b)
}

// takeVIP gives a new load balancer its address: its reserved public IP's
// (publicip.go), else a free one of the pool.
func (d *Dialect) takeVIP(b *balancer) (netip.Addr, error) {
	if b.reservedIPID != "" {
		return d.assignReservedIP(b.id, b.reservedIPID)
	}
	vip, err := d.plane.AllocVIP(b.id)
	if err != nil {
		return netip.Addr{}, Errorf(http.StatusBadRequest, CodeLimitExceeded, "cloudsim: no free address left for the %s: %v", kindName(b.kind), err)
	}
	return vip, nil
}

// releaseVIP returns a load balancer's address: a reserved public IP
// becomes AVAILABLE again and keeps its address.
func (d *Dialect) releaseVIP(b *balancer) {
	switch {
	case b.reservedIPID != "":
		d.unassignReservedIP(b.reservedIPID)
	case b.vip.IsValid():
		d.plane.ReleaseVIP(b.vip)
	}
	// A deleted load balancer is no longer in its NSGs, which can then be
	// deleted (deleteNSG refuses an NSG with members).
	d.nsgs.bindLB(b.id, netip.Addr{}, nil)
}

// subnetsOf validates the subnets of a new load balancer.
func (d *Dialect) checkSubnets(ids []string) error {
	for _, id := range ids {
		if !core.ValidOCID(id, "subnet") {
			return badRequest("The subnet id %q is not a subnet OCID.", id)
		}
		if _, ok := d.net.subnet(id); !ok {
			return relatedNotFound("subnet", id)
		}
	}
	return nil
}

// checkName validates a listener or backend set name.
func checkName(kind, name string) error {
	if name == "" {
		return missing(kind + " name")
	}
	if len(name) > 255 || strings.ContainsAny(name, " \t\r\n/\\?#%") {
		return badRequest("The %s name %q must be 1 to 255 characters without whitespace, slashes, ?, # or %%.", kind, name)
	}
	return nil
}

func checkPort(what string, p *int, allowZero bool) error {
	if p == nil {
		return missing(what)
	}
	lo := 1
	if allowZero {
		lo = 0
	}
	if *p < lo || *p > 65535 {
		return badRequest("The %s %d must be from %d to 65535.", what, *p, lo)
	}
	return nil
}

func checkIPv4(what, s string) (string, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return "", badRequest("The %s %q is not an IPv4 address.", what, s)
	}
	return a.String(), nil
}

// balancerAt reads the load balancer of kind that the request path names
// (loadBalancerId or nlbId), with the API's 404 for a malformed or unknown
// id: the first step of every read of a balancer or its sub-resources.
func (d *Dialect) balancerAt(c *call, kind string) (*balancer, error) {
	param, resourceType := "loadBalancerId", "loadbalancer"
	if kind == kindNLB {
		param, resourceType = "nlbId", "networkloadbalancer"
	}
	id, err := pathID(c, param, resourceType)
	if err != nil {
		return nil, err
	}
	b, err := d.lbs.get(id, kind, d.core.Now(), d.retention)
	if err != nil {
		return nil, err
	}
	if v, ok := d.visible(b); ok {
		return v, nil
	}
	return nil, notFound(kindName(kind), id) // new, and not visible yet (lag.go)
}

// childAt answers a GET of one sub-resource (a backend set or a listener)
// of the balancer the path names: the item of of(balancer) under the path
// parameter nameParam, with the balancer's etag, or 404 naming what.
func childAt[T any](d *Dialect, c *call, kind, nameParam, what string, of func(*balancer) map[string]T) (*reply, error) {
	b, err := d.balancerAt(c, kind)
	if err != nil {
		return nil, err
	}
	name := pathName(c, nameParam)
	v, found := of(b)[name]
	if !found {
		return nil, notFound(what, name)
	}
	return ok(v).with("etag", b.etag()), nil
}

// childPath reads, from the path, the id of the balancer (of kind) a
// sub-resource belongs to, and the sub-resource's name (path parameter
// nameParam).
func childPath(c *call, kind, nameParam string) (id, name string, err error) {
	if kind == kindNLB {
		id, err = nlbID(c)
	} else {
		id, err = pathID(c, "loadBalancerId", "loadbalancer")
	}
	return id, pathName(c, nameParam), err
}

// kindOps is mutate's op and nlbOp for a change of a balancer of kind: Load
// Balancing names its work request operations op, Network Load Balancing
// nlbOp.
func kindOps(kind, op, nlbOp string) (string, string) {
	if kind == kindNLB {
		return "", nlbOp
	}
	return op, ""
}

// checkedChange is the plan of a change that is its own check: it runs on
// mutate's copy now (an error refuses the call) and again on the balancer
// when the work request ends.
func checkedChange(build change) func(b *balancer) (change, error) {
	return func(b *balancer) (change, error) {
		if err := build(b); err != nil {
			return nil, err
		}
		return build, nil
	}
}

// deleteChild deletes the sub-resource (a backend set or a listener) the
// path names from of(balancer), as a work request (op or nlbOp, see
// kindOps): 404 naming what if it does not exist, or inUse's error (nil:
// none) if something still refers to it.
func deleteChild[T any](d *Dialect, c *call, kind, nameParam, what, op, nlbOp string, of func(*balancer) map[string]T, inUse func(b *balancer, name string) error) (*reply, error) {
	id, name, err := childPath(c, kind, nameParam)
	if err != nil {
		return nil, err
	}
	op, nlbOp = kindOps(kind, op, nlbOp)
	return d.mutate(c, kind, id, op, nlbOp, "UPDATED", func(b *balancer) (change, error) {
		if _, found := of(b)[name]; !found {
			return nil, notFound(what, name)
		}
		if inUse != nil {
			if err := inUse(b, name); err != nil {
				return nil, err
			}
		}
		return func(b *balancer) error {
			delete(of(b), name)
			return nil
		}, nil
	})
}

// defaultSetUser refuses to delete the backend set set while a listener
// (of listeners, whose default backend set defaultOf reads) uses it, as
// OCI does for LB and NLB alike.
func defaultSetUser[L any](listeners map[string]L, set string, defaultOf func(L) *string) error {
	for _, ln := range slices.Sorted(maps.Keys(listeners)) {
		if *defaultOf(listeners[ln]) == set {
			return badRequest("The backend set %s is the default backend set of listener %s; delete or change the listener first.", set, ln)
		}
	}
	return nil
}

// backendSetHealthAt is the health of the backend set the path names, of
// a balancer of kind whose backend names names reads (found false: no such
// set), and how many backends it has.
func (d *Dialect) backendSetHealthAt(c *call, kind string, names func(b *balancer, set string) ([]string, bool)) (setHealth, int, error) {
	b, err := d.balancerAt(c, kind)
	if err != nil {
		return setHealth{}, 0, err
	}
	set := pathName(c, "backendSetName")
	backends, found := names(b, set)
	if !found {
		return setHealth{}, 0, notFound("backend set", set)
	}
	return d.backendSetHealth(b, set, backends), len(backends), nil
}

// backendNames lists the names of a backend set's backends (LB or NLB
// backends, whose name nameOf reads), in order.
func backendNames[B any](backends []B, nameOf func(B) *string) []string {
	names := make([]string, len(backends))
	for i, be := range backends {
		names[i] = *nameOf(be)
	}
	return names
}

// createChild adds v as the backend set name of of(balancer) (the
// balancer of kind id) as a work request (op or nlbOp, see kindOps): 409
// if it exists; the balancer's limits are checked with it added.
func createChild[T any](d *Dialect, c *call, kind, id, name, op, nlbOp string, v T, of func(*balancer) map[string]T) (*reply, error) {
	in := "load balancer"
	if kind == kindNLB {
		in = "network load balancer"
	}
	op, nlbOp = kindOps(kind, op, nlbOp)
	return d.mutate(c, kind, id, op, nlbOp, "UPDATED", func(b *balancer) (change, error) {
		if _, dup := of(b)[name]; dup {
			return nil, Errorf(http.StatusConflict, CodeAlreadyExists, "The backend set %s already exists in %s %s.", name, in, id)
		}
		next := b.clone()
		of(next)[name] = v
		if err := d.checkLimits(next); err != nil {
			return nil, err
		}
		if err := checkPreserveSource(next); err != nil {
			return nil, err
		}
		return func(b *balancer) error {
			if _, dup := of(b)[name]; dup {
				return fmt.Errorf("the backend set %s already exists", name)
			}
			of(b)[name] = v
			return nil
		}, nil
	})
}
