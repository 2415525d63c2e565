// Package oci is cloudsim's Oracle Cloud Infrastructure dialect: the signed
// REST protocol that oci-go-sdk speaks (draft-cavage HTTP signatures with
// RSA API keys), with OCI's error bodies, opc-request-id, opc-next-page
// pagination, opc-retry-token idempotency and asynchronous work requests.
//
// It serves, under their API version prefixes:
//
//	/20160918  Compute and VirtualNetwork (instances, VNIC attachments,
//	           VNICs, VCNs, subnets, security lists) and Identity
//	           (availability domains), which share the version
//	/20170115  Load Balancing (loadBalancers, backend sets, listeners,
//	           loadBalancerWorkRequests)
//	/20200501  Network Load Balancing (networkLoadBalancers, backend sets,
//	           listeners, workRequests)
//
// Instances come from the shared core fleet, so the admin API's instance
// operations work for both dialects. Load balancers get a VIP from the
// shared data plane and carry real traffic to their backends.
//
// Requests are decoded, and answers encoded, with the SDK's own model types
// (github.com/oracle/oci-go-sdk/v65), so field names match the real API.
package oci

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// API version prefixes, as the SDK clients' BasePath.
const (
	PrefixCore         = "/20160918" // Compute, VirtualNetwork, Identity
	PrefixLoadBalancer = "/20170115"
	PrefixNLB          = "/20200501"
)

// ActionPrefix starts every OCI action name (rate limits, faults, call
// counts), so that OCI's CreateLoadBalancer cannot collide with Tencent's.
// Network Load Balancing actions carry a second prefix, "nlb:", because
// their names (CreateBackendSet, GetWorkRequest, ...) repeat Load
// Balancing's: "oci:nlb:CreateBackendSet".
const ActionPrefix = "oci:"

// Defaults for Options.
const (
	DefaultRegion             = "us-ashburn-1"
	DefaultWorkRequestLatency = 300 * time.Millisecond
	DefaultDeletedRetention   = 5 * time.Second
)

// Limits. OCI documents the retry-token ones. The page sizes: the SDK's
// request models (core/list_instances_request_response.go and the other
// List*Request types: Limit) give only "Example: `50`"; Oracle's API
// reference of the same 20160918 Core API, as served by Compute Cloud@Customer
// and Private Cloud Appliance 3.0, documents the limit of every list
// operation the node lookups use as "Minimum Value: 1, Maximum Value: 1000
// ... 1 is the minimum, 1000 is the maximum. Default Value: 100"
// (https://docs.oracle.com/cd/F90410_01/3.0-latest/ceapi/op-20160918-instances-get.html,
// .../op-20160918-vnicattachments-get.html, .../op-20160918-publicips-get.html,
// https://docs.oracle.com/en/engineered-systems/private-cloud-appliance/3.0-latest/ceapi/op-20160918-privateips-get.html).
// A limit outside that range is a request the schema rejects: 400
// InvalidParameter (the error code is cloudsim's choice; the reference
// names no other), never a silent clamp.
const (
	maxBody             = 10 << 20
	MaxRetryTokenLen    = 64
	RetryTokenRetention = 24 * time.Hour
	DefaultPageSize     = 100
	MaxPageSize         = 1000
)

// Options configures the dialect; it is the OCI part of cloudsim.Options.
// The zero value means the documented defaults.
type Options struct {
	// Region is the OCI region the simulator plays (it appears in
	// instances and in the default availability domain names).
	Region string
	// Keys maps keyId "<tenancy OCID>/<user OCID>/<fingerprint>" to the
	// PEM RSA public key. The fingerprint must be the key's.
	Keys map[string]string
	// MaxClockSkew overrides DefaultMaxClockSkew.
	MaxClockSkew time.Duration
	// Network seeds compartments, availability domains, VCNs, subnets and
	// security lists, on top of the built-in defaults (see network.go).
	Network NetworkSeed
	// WorkRequestLatency is how long each work request runs: 0 means
	// DefaultWorkRequestLatency, a negative value ends it before the call
	// returns.
	WorkRequestLatency time.Duration
	// DeletedRetention is how long a DELETED load balancer stays visible
	// (0: DefaultDeletedRetention).
	DeletedRetention time.Duration
	// LBLimits and NLBLimits override the documented configuration limits
	// of one load balancer (listeners, backend sets, backends; see
	// limits.go); zero fields keep DefaultLBLimits / DefaultNLBLimits.
	LBLimits, NLBLimits BalancerLimits
	// FixedShapes plays a tenancy created before May 2023, which may
	// still create load balancers of the fixed shapes (10Mbps, 100Mbps,
	// 400Mbps, 8000Mbps); by default only "flexible" is accepted (see
	// loadbalancer.go for the source).
	FixedShapes bool
	// TerminatedRetention is how long a terminated instance stays visible
	// as TERMINATED (see compute.go for the source): 0 means
	// DefaultTerminatedRetention, negative means not past the fleet's own
	// linger, after which GetInstance answers 404.
	TerminatedRetention time.Duration
	// IAM sets up groups, dynamic groups, policies and compartment names
	// (iam.go); a principal in no group has full access.
	IAM IAMSeed
	// SecurityTokenLifetime is how long the security tokens of instance
	// principals are valid (federation.go): 0 means
	// DefaultSecurityTokenLifetime; tests use seconds.
	SecurityTokenLifetime time.Duration
}

// Dialect serves the OCI API. It is an http.Handler for the paths under
// PrefixCore, PrefixLoadBalancer and PrefixNLB.
type Dialect struct {
	core      *core.Core
	region    string
	keys      *keyring
	skew      time.Duration
	latency   time.Duration
	retention time.Duration
	plane     *dataplane.Plane
	ownPlane  bool
	tasks     *core.Tasks
	mux       *http.ServeMux

	net   *network
	nsgs  *nsgStore      // network security groups (nsg.go)
	pips  *publicIPStore // reserved public IPs (publicip.go)
	lbs   *balancers
	wrs   *workRequests
	queue lbQueues // Load Balancing's queued work requests (queue.go)

	iam    *iamStore // groups, dynamic groups, policies (iam.go)
	routed []string  // every operation routed (set up in New only)

	tokMu  sync.Mutex
	tokens map[string]*storedReply

	lbLimits, nlbLimits BalancerLimits
	fixedShapes         bool

	gone *terminated // terminated instances kept visible (terminated.go)
	ids  *identities // instance identities, metadata service, tokens (identity.go)
}

// CheckOptions reports whether the keys and network seed of opts are
// valid, so that a caller can report a bad configuration instead of New
// failing (cloudsim.New panicking): it builds a throwaway dialect on a core
// of its own.
func CheckOptions(opts Options) error {
	d, err := New(core.New(core.Config{}), nil, opts)
	if err != nil {
		return err
	}
	d.Close()
	return nil
}

// New returns the dialect over c, with plane carrying the load balancers'
// traffic (shared with other dialects so that VIPs come from one pool; nil:
// a disabled plane of its own), and adds its admin endpoints to c's admin
// API, so make one per Core. Invalid keys or network seeds are errors.
//
//cloudsim:dialect OCI
func New(c *core.Core, plane *dataplane.Plane, opts Options) (*Dialect, error) {
	d := &Dialect{
		core:      c,
		region:    opts.Region,
		keys:      newKeyring(),
		skew:      opts.MaxClockSkew,
		latency:   opts.WorkRequestLatency,
		retention: opts.DeletedRetention,
		plane:     plane,
		tasks:     core.NewTasks(c, 0),
		tokens:    map[string]*storedReply{},
		iam:       newIAMStore(),

		fixedShapes: opts.FixedShapes,
	}
	if d.region == "" {
		d.region = DefaultRegion
	}
	if d.skew <= 0 {
		d.skew = DefaultMaxClockSkew
	}
	if d.latency == 0 {
		d.latency = DefaultWorkRequestLatency
	}
	c.SetDefaultLatency(DialectName, DefaultLatency)
	registerRateLimits(c)
	if d.retention <= 0 {
		d.retention = DefaultDeletedRetention
	}
	if d.plane == nil {
		p, err := dataplane.New(dataplane.Config{Disabled: true})
		if err != nil {
			return nil, fmt.Errorf("oci: %w", err)
		}
		d.plane, d.ownPlane = p, true
	}
	for id, pemText := range opts.Keys {
		if _, err := d.keys.add(id, pemText); err != nil {
			return nil, fmt.Errorf("oci: Options.Keys: %w", err)
		}
	}
	if err := d.iam.apply(opts.IAM); err != nil {
		return nil, fmt.Errorf("oci: Options.IAM: %w", err)
	}
	d.net = newNetwork(d.region)
	d.nsgs = newNSGStore()
	d.pips = newPublicIPStore()
	if err := d.seedNetwork(opts.Network); err != nil {
		return nil, fmt.Errorf("oci: Options.Network: %w", err)
	}
	c.AddInstanceCheck(d.checkInstanceNSGs)
	d.gone = newTerminated(opts.TerminatedRetention)
	c.OnInstanceGone(d.gone.keep)
	if opts.SecurityTokenLifetime <= 0 {
		opts.SecurityTokenLifetime = DefaultSecurityTokenLifetime
	}
	d.ids = newIdentities(opts.SecurityTokenLifetime)
	d.lbs = newBalancers()
	d.lbLimits, d.nlbLimits = opts.LBLimits.or(DefaultLBLimits), opts.NLBLimits.or(DefaultNLBLimits)
	d.wrs = newWorkRequests()
	d.queue.byLB = map[string][]*queued{}
	d.mux = http.NewServeMux()
	d.routeCompute()
	d.routeNetwork()
	d.routeAddresses()
	d.routeIPv6()
	d.routeNSG()
	d.routePublicIPs()
	d.routeLoadBalancer()
	d.routeNLB()
	d.routeBalancerNSGs()
	for _, p := range d.apiPatterns() {
		d.mux.Handle(p, d.route("", "(unknown)", false, d.unknownOperation))
	}
	d.mux.HandleFunc(PrefixMetadata+"/", d.serveMetadata)
	d.mux.HandleFunc(PathFederation, d.serveFederation)
	d.registerAdmin(c)
	d.registerFaultAdmin(c)
	d.registerIAMAdmin(c)
	return d, nil
}

// Name is DialectName.
func (d *Dialect) Name() string { return DialectName }

// Patterns are the API version prefixes, each a subtree, the instance
// metadata service (metadata.go) and the federation endpoint
// (federation.go).
func (d *Dialect) Patterns() []string {
	return append(d.apiPatterns(), PrefixMetadata+"/", PathFederation)
}

// apiPatterns are the signed API's version prefixes.
func (d *Dialect) apiPatterns() []string {
	return []string{PrefixCore + "/", PrefixLoadBalancer + "/", PrefixNLB + "/"}
}

// Close stops the running work requests (they stay in flight forever) and,
// if the dialect made its own, the data plane.
func (d *Dialect) Close() {
	d.tasks.Close()
	if d.ownPlane {
		d.plane.Close()
	}
}

// Region is the OCI region the dialect plays.
func (d *Dialect) Region() string { return d.region }

// ServeHTTP serves the OCI API.
func (d *Dialect) ServeHTTP(w http.ResponseWriter, r *http.Request) { d.mux.ServeHTTP(w, r) }

// ---- one call ----

// call is one API call being served.
type call struct {
	ctx       context.Context
	r         *http.Request
	body      []byte
	action    string
	keyID     string // the API key's keyId ("" for an instance principal)
	who       caller // the authenticated caller (principal.go)
	tenancy   string // the caller's tenancy: its root compartment
	requestID string
	created   string // set from the reply, for opc-retry-token
}

func (c *call) query(name string) string { return c.r.URL.Query().Get(name) }

// reply is what an operation answers.
type reply struct {
	status int
	header http.Header
	body   any // encoded as JSON unless nil
	// created is the id of the resource a create call made; a retry with
	// the same opc-retry-token after it was deleted is rejected.
	created string
}

func ok(body any) *reply { return &reply{status: http.StatusOK, body: body} }

func (rp *reply) with(name, value string) *reply {
	if rp.header == nil {
		rp.header = http.Header{}
	}
	rp.header.Set(name, value)
	return rp
}

type opFunc func(c *call) (*reply, error)

type storedReply struct {
	rp      *reply
	encoded []byte
	at      time.Time
}

// route wraps an operation: authentication, then the rate limit, then the
// answer time (latency.go), then injected faults, then opc-retry-token replay, then the operation; the
// call is counted under its action either way.
func (d *Dialect) route(service, op string, mutation bool, fn opFunc) http.Handler {
	action := ActionPrefix + op
	d.routed = append(d.routed, op)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started := time.Now()
		ci := core.CallInfo{
			Time:       d.core.Now(),
			Dialect:    DialectName,
			Service:    service,
			Action:     action,
			Region:     d.region,
			RequestID:  newRequestID(r.Header.Get("opc-request-id")),
			RemoteAddr: r.RemoteAddr,
		}
		status, header, body := d.serve(r, &ci, mutation, fn)
		ci.Duration = time.Since(started)
		// Count the call before answering, so that a client holding its
		// answer also sees it in the call counts.
		d.core.Record(ci)
		for k, v := range header {
			w.Header()[k] = v
		}
		w.Header().Set("opc-request-id", ci.RequestID)
		if body != nil {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	})
}

func (d *Dialect) serve(r *http.Request, ci *core.CallInfo, mutation bool, fn opFunc) (int, http.Header, []byte) {
	fail := func(e *Error) (int, http.Header, []byte) {
		ci.Code, ci.Message = e.Code, e.Message
		return e.Status, nil, encodeError(e)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return fail(Errorf(http.StatusBadRequest, CodeCannotParseRequest, "Reading the request body: %v.", err))
	}
	if len(body) > maxBody {
		return fail(Errorf(http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "The request body exceeds %d bytes.", maxBody))
	}
	who, aerr := d.authenticate(r, body)
	ci.Principal = who.String()
	if aerr != nil {
		return fail(aerr)
	}
	// IAM authorizes the authenticated caller before the call is admitted
	// (cloudsim's choice of order: the rate limit then counts only calls
	// the caller may make). The answer is OCI's; the call log also names
	// what was missing.
	op := strings.TrimPrefix(ci.Action, ActionPrefix)
	if missing, e := d.authorize(r, body, op, who.Principal); e != nil {
		st, h, b := fail(e)
		ci.Message += " (cloudsim: " + op + " needs " + strings.Join(missing, ", ") + ")"
		return st, h, b
	}
	if ok, limit := d.core.Allow(ci.Action); !ok {
		return fail(Errorf(http.StatusTooManyRequests, CodeTooManyRequests,
			"Too many requests for the operation %s (cloudsim limit: %g per second).", strings.TrimPrefix(ci.Action, ActionPrefix), limit))
	}
	kind := core.Read
	if mutation {
		kind = core.Write
	}
	d.core.Delay(r.Context(), DialectName, kind)
	if f := d.core.Fault(r.Context(), ci.Action); f != nil {
		e := faultError(f, ci.Action)
		st, h, b := fail(e)
		if f.HTTPStatus != 0 {
			ci.Code = f.Code() // "HTTP<status>", as for every dialect
		}
		return st, h, b
	}
	tenancy := who.Tenancy
	c := &call{ctx: r.Context(), r: r, body: body, action: ci.Action, keyID: who.KeyID, who: who, tenancy: tenancy, requestID: ci.RequestID}

	var token string
	if mutation {
		token = r.Header.Get("opc-retry-token")
	}
	if token == "" {
		return d.runOp(c, ci, fn, fail)
	}
	if len(token) > MaxRetryTokenLen {
		return fail(badRequest("The opc-retry-token is longer than %d characters.", MaxRetryTokenLen))
	}
	// One retry token at a time, so that two concurrent retries of one
	// create cannot both create.
	key := tenancy + "\x00" + ci.Action + "\x00" + r.URL.Path + "\x00" + token
	d.tokMu.Lock()
	defer d.tokMu.Unlock()
	now := time.Now()
	if s := d.tokens[key]; s != nil && now.Sub(s.at) < RetryTokenRetention {
		if s.rp.created != "" && !d.exists(s.rp.created) {
			return fail(Errorf(http.StatusConflict, CodeInvalidatedRetryToken,
				"The retry token was used by an earlier request whose resource %s has since been deleted; retry with a new token.", s.rp.created))
		}
		ci.Code = core.CodeOK
		return s.rp.status, s.rp.header.Clone(), s.encoded
	}
	st, h, b := d.runOp(c, ci, fn, fail)
	if st/100 == 2 {
		for k, s := range d.tokens {
			if now.Sub(s.at) >= RetryTokenRetention {
				delete(d.tokens, k)
			}
		}
		d.tokens[key] = &storedReply{rp: &reply{status: st, header: h.Clone(), created: c.created}, encoded: b, at: now}
	}
	return st, h, b
}

// runOp runs the operation and encodes its reply.
func (d *Dialect) runOp(c *call, ci *core.CallInfo, fn opFunc, fail func(*Error) (int, http.Header, []byte)) (int, http.Header, []byte) {
	rp, err := fn(c)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = Errorf(http.StatusInternalServerError, CodeInternalServerError, "cloudsim: %v", err)
		}
		return fail(e)
	}
	c.created = rp.created
	var body []byte
	if rp.body != nil {
		body, err = encodeJSON(rp.body)
		if err != nil {
			return fail(Errorf(http.StatusInternalServerError, CodeInternalServerError, "cloudsim: encoding the response: %v", err))
		}
	}
	ci.Code = core.CodeOK
	status := rp.status
	if status == 0 {
		status = http.StatusOK
	}
	return status, rp.header, body
}

// faultError is the answer to an injected fault: its status (or the
// status of its code), and its code (or the code of its status).
func faultError(f *core.Fault, action string) *Error {
	code := f.ErrorCode
	if code == core.DefaultFaultCode {
		code = CodeInternalServerError
	}
	status := f.HTTPStatus
	if status == 0 {
		status = statusOfCode[code]
		if status == 0 {
			status = http.StatusInternalServerError
		}
	} else if f.ErrorCode == core.DefaultFaultCode || f.ErrorCode == "" {
		if c, ok := codeOfStatus[status]; ok {
			code = c
		}
	}
	return Errorf(status, code, "cloudsim: injected fault for %s.", strings.TrimPrefix(action, ActionPrefix))
}

// unknownOperation answers a path or method the dialect does not serve:
// 405 if the path has operations with other methods, else 404.
func (d *Dialect) unknownOperation(c *call) (*reply, error) {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
		probe := c.r.Clone(c.ctx)
		probe.Method = m
		if _, pattern := d.mux.Handler(probe); pattern != "" && !strings.HasSuffix(pattern, "/") {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) > 0 {
		return nil, Errorf(http.StatusMethodNotAllowed, CodeMethodNotAllowed,
			"The method %s is not allowed on %s (allowed: %s).", c.r.Method, c.r.URL.Path, strings.Join(allowed, ", "))
	}
	return nil, Errorf(http.StatusNotFound, CodeNotFound,
		"cloudsim: there is no operation %s %s (it is not part of the OCI API, or not emulated).", c.r.Method, c.r.URL.Path)
}

// newRequestID returns a new opc-request-id; a client's own id is kept as
// the first part, as OCI does, so that the client can correlate.
func newRequestID(client string) string {
	id := strings.ToUpper(strings.ReplaceAll(core.NewUUID(), "-", ""))
	if client != "" && len(client) <= 98 {
		return client + "/" + id
	}
	return id
}

func encodeError(e *Error) []byte {
	b, _ := json.Marshal(struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{e.Code, e.Message})
	return b
}

// encodeJSON encodes an answer and drops null object members: the SDK's
// model types encode unset optional fields as null, the real API omits them.
func encodeJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	return json.Marshal(dropNulls(tree))
}

func dropNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if x == nil {
				delete(t, k)
				continue
			}
			t[k] = dropNulls(x)
		}
	case []any:
		for i, x := range t {
			t[i] = dropNulls(x)
		}
	}
	return v
}

// decode strictly decodes the JSON body into v (an SDK XxxDetails type).
func (c *call) decode(v any) error {
	if len(bytes.TrimSpace(c.body)) == 0 {
		return Errorf(http.StatusBadRequest, CodeMissingParameter, "The request body is required.")
	}
	dec := json.NewDecoder(bytes.NewReader(c.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return badRequest("The request body has an unknown field %s.", strings.TrimPrefix(err.Error(), "json: unknown field "))
		case errors.As(err, &te):
			return badRequest("The field %s has the wrong type: got a JSON %s, want %s.", te.Field, te.Value, te.Type)
		}
		return Errorf(http.StatusBadRequest, CodeCannotParseRequest, "The request body is not valid JSON: %v.", err)
	}
	if dec.More() {
		return Errorf(http.StatusBadRequest, CodeCannotParseRequest, "The request body has data after the JSON value.")
	}
	return nil
}

// ---- pagination ----

// paginate answers one page of items per the limit and page query
// parameters, and the opc-next-page token for the rest ("" if none). Page
// tokens are opaque, as OCI's are.
func paginate[T any](c *call, items []T) ([]T, string, error) {
	limit := DefaultPageSize
	if s := c.query("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxPageSize {
			return nil, "", badRequest("The limit %q must be an integer from 1 to %d.", s, MaxPageSize)
		}
		limit = n
	}
	offset := 0
	if p := c.query("page"); p != "" {
		raw, err := base64.RawURLEncoding.DecodeString(p)
		n, perr := strconv.Atoi(strings.TrimPrefix(string(raw), "cloudsim-page:"))
		if err != nil || perr != nil || !strings.HasPrefix(string(raw), "cloudsim-page:") || n < 0 {
			return nil, "", badRequest("The page token %q is not valid (use the opc-next-page of the previous answer).", p)
		}
		offset = n
	}
	if offset >= len(items) {
		return []T{}, "", nil
	}
	end := min(offset+limit, len(items))
	next := ""
	if end < len(items) {
		next = base64.RawURLEncoding.EncodeToString([]byte("cloudsim-page:" + strconv.Itoa(end)))
	}
	return items[offset:end], next, nil
}

// page answers a list: a page of items, with opc-next-page when more
// follow.
func page[T any](c *call, items []T, wrap func([]T) any) (*reply, error) {
	pg, next, err := paginate(c, items)
	if err != nil {
		return nil, err
	}
	var body any = pg
	if wrap != nil {
		body = wrap(pg)
	}
	rp := ok(body)
	if next != "" {
		rp.with("opc-next-page", next)
	}
	return rp, nil
}

// sortOrder reads sortOrder (ASC or DESC) with a default.
func sortOrder(c *call, def string) (desc bool, err error) {
	switch s := strings.ToUpper(c.query("sortOrder")); s {
	case "":
		return def == "DESC", nil
	case "ASC", "DESC":
		return s == "DESC", nil
	default:
		return false, badRequest("The sortOrder %q must be ASC or DESC.", c.query("sortOrder"))
	}
}

// pathID reads a path parameter holding an OCID of a resource type. A
// malformed OCID is a 404 InvalidParameter, as OCI answers for a bad
// dynamic path component.
func pathID(c *call, name, resourceType string) (string, error) {
	id := c.r.PathValue(name) // already unescaped by the mux
	if !core.ValidOCID(id, resourceType) {
		return "", Errorf(http.StatusNotFound, CodeInvalidParameter, "The %s %q is not a valid %s OCID.", name, c.r.PathValue(name), resourceType)
	}
	return id, nil
}

// pathName reads a path parameter holding a name (backend set, listener).
func pathName(c *call, name string) string { return c.r.PathValue(name) }
