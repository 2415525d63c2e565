// Package tencent is cloudsim's Tencent Cloud API 3.0 dialect: the
// TC3-HMAC-SHA256 signed JSON-POST protocol that tencentcloud-sdk-go speaks,
// with the error envelope, dispatch by service (from the credential scope)
// and X-TC-Action, and the emulated services: cvm, clb, vpc (route tables,
// security groups), tke (cluster routes), cam (roles, policies), sts and
// tag, each registered with Dialect.Register from its own files.
//
// Requests are decoded, and answers encoded, with the SDK's own model types
// and its JSON package, so field names and omission rules match the SDK.
package tencent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	tcjson "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/json"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// DefaultMaxClockSkew is how far X-TC-Timestamp may be from the server's
// clock before AuthFailure.SignatureExpire (the real API allows 5 minutes).
const DefaultMaxClockSkew = 5 * time.Minute

// maxBody is the real API's limit for a TC3-HMAC-SHA256 POST body.
const maxBody = 10 << 20

// Options configures the dialect.
type Options struct {
	// Credentials maps SecretId -> SecretKey.
	Credentials map[string]string
	// MaxClockSkew overrides DefaultMaxClockSkew.
	MaxClockSkew time.Duration
}

// Dialect serves the Tencent Cloud API. It is an http.Handler for POST /.
type Dialect struct {
	core *core.Core
	ids  *CAM // keys, roles, temporary credentials (cam_roles.go)
	skew time.Duration

	mu       sync.RWMutex
	services map[string]*Service

	cam  *camStore       // CAM policies by subject (cam.go)
	tke  *TKE            // cluster route tables (tke.go)
	vpc  *VPC            // VPC route tables (vpc.go)
	nets *Networks       // VPCs and their CIDRs (vpc_networks.go)
	sgs  *SecurityGroups // security groups (vpc_securitygroup.go)
}

// Service is one Tencent product as cloudsim emulates it.
type Service struct {
	Name    string // "cvm": the service of the credential scope and of <name>.tencentcloudapi.com
	Version string // "2017-03-12": the only X-TC-Version accepted
	Actions map[string]Action
}

// Action is one emulated API action.
type Action struct {
	Handler        ActionFunc
	RateLimit      float64 // documented requests/second; 0 = none
	RegionRequired bool    // X-TC-Region must be present
}

// ActionFunc runs an authenticated, admitted call. body is the raw JSON
// parameters. It returns the response parameters (a pointer to the SDK's
// XxxResponseParams; RequestId is filled in by the dialect), or an error; an
// *Error becomes an error answer with its code, anything else InternalError.
type ActionFunc func(call *Call, body []byte) (any, error)

// Call is the context of one API call.
type Call struct {
	Ctx       context.Context
	Core      *core.Core
	Service   string
	Action    string
	Region    string // X-TC-Region
	SecretID  string
	RequestID string
}

// Error is an API error answer.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf returns an *Error.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// New returns the dialect with its built-in services (cvm) registered, and
// adds its admin endpoints (CAM policies, cam.go) to c's admin API, so make
// one per Core.
func New(c *core.Core, opts Options) *Dialect {
	d := &Dialect{
		core:     c,
		ids:      NewCAM(c, opts.Credentials),
		skew:     opts.MaxClockSkew,
		services: map[string]*Service{},
		cam:      newCAMStore(),
	}
	d.registerCAMAdmin(c)
	if d.skew <= 0 {
		d.skew = DefaultMaxClockSkew
	}
	c.SetDefaultLatency(DialectName, DefaultLatency)
	d.Register(cvmService())
	d.Register(d.ids.stsService())
	d.nets = NewNetworks(c)
	d.tke = NewTKE(c)
	d.tke.nets = d.nets
	d.Register(d.tke.Service())
	d.vpc = NewVPC(c, d.tke)
	d.vpc.nets = d.nets
	d.sgs = NewSecurityGroups(c)
	vpcService := d.vpc.Service()
	for name, a := range d.sgs.Actions() {
		vpcService.Actions[name] = a
	}
	d.Register(vpcService)
	d.nets.refs = func() map[string]string {
		refs := map[string]string{}
		for _, t := range d.tke.RouteTables() {
			refs[t.VpcID] = t.Region
		}
		for _, t := range d.vpc.VPCRouteTables() {
			refs[t.VpcID] = t.Region
		}
		return refs
	}
	return d
}

// CAM returns the dialect's keys, roles and temporary credentials.
func (d *Dialect) CAM() *CAM { return d.ids }

// SecurityGroups returns the dialect's security groups (vpc), which the
// CLB service binds to and its data plane judges traffic with.
func (d *Dialect) SecurityGroups() *SecurityGroups { return d.sgs }

// Register adds (or replaces) a service and registers the documented rate
// limit of each of its actions with the core.
func (d *Dialect) Register(s *Service) {
	d.mu.Lock()
	d.services[s.Name] = s
	d.mu.Unlock()
	for name, a := range s.Actions {
		if a.RateLimit > 0 {
			d.core.SetDefaultRateLimit(name, a.RateLimit)
		}
	}
}

func (d *Dialect) service(name string) *Service {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.services[name]
}

// Actions lists the emulated actions by service ("clb": ["CreateListener",
// ...]), each list sorted.
func (d *Dialect) Actions() map[string][]string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make(map[string][]string, len(d.services))
	for name, s := range d.services {
		as := make([]string, 0, len(s.Actions))
		for a := range s.Actions {
			as = append(as, a)
		}
		sort.Strings(as)
		out[name] = as
	}
	return out
}

func (d *Dialect) serviceNames() []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	names := make([]string, 0, len(d.services))
	for n := range d.services {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// answer is what one call produces.
type answer struct {
	status  int    // HTTP status; 200 unless a status fault
	resp    any    // success parameters
	err     *Error // error answer
	rawBody string // body of a status fault
}

// MissingAction is the call-count key of a request without X-TC-Action.
const MissingAction = "(missing)"

// ServeHTTP implements the Tencent Cloud API endpoint, and the instance
// metadata service under MetadataPrefix.
func (d *Dialect) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, MetadataPrefix) {
		d.ids.serveMetadata(w, r)
		return
	}
	if r.URL.Path != "/" {
		http.Error(w, fmt.Sprintf("cloudsim: no Tencent Cloud API at %s (it is served at POST /)", r.URL.Path), http.StatusNotFound)
		return
	}
	started := time.Now()
	ci := core.CallInfo{
		Time:          d.core.Now(),
		Dialect:       DialectName,
		Action:        r.Header.Get("X-TC-Action"),
		Region:        r.Header.Get("X-TC-Region"),
		RequestClient: r.Header.Get("X-TC-RequestClient"),
		RequestID:     core.NewUUID(),
		RemoteAddr:    r.RemoteAddr,
	}
	if ci.Action == "" {
		ci.Action = MissingAction
	}
	a := d.serve(r, &ci)

	status := http.StatusOK
	var body []byte
	switch {
	case a.status != 0 && a.status != http.StatusOK:
		// A JSON body without an Error object: the SDK then reports
		// ClientError.HttpStatusCodeError (a non-JSON body would make it
		// ClientError.ParseJsonError).
		status = a.status
		ci.Code = fmt.Sprintf("HTTP%d", a.status)
		ci.Message = a.rawBody
		body, _ = tcjson.Marshal(map[string]string{"message": a.rawBody})
	case a.err != nil:
		ci.Code, ci.Message = a.err.Code, a.err.Message
		body = encodeError(a.err, ci.RequestID)
	default:
		ci.Code = core.CodeOK
		var err error
		body, err = encodeSuccess(a.resp, ci.RequestID)
		if err != nil {
			e := Errorf("InternalError", "cloudsim: encoding the response: %v", err)
			ci.Code, ci.Message = e.Code, e.Message
			body = encodeError(e, ci.RequestID)
		}
	}
	// Count the call before answering, so that a client that has its answer
	// also sees it in the call counts.
	ci.Duration = time.Since(started)
	d.core.Record(ci)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// serve runs the checks in this order: authentication, then content type and
// the action's existence, version and region, then the rate limit, then
// injected faults, then the action itself.
func (d *Dialect) serve(r *http.Request, ci *core.CallInfo) answer {
	fail := func(e *Error) answer { return answer{err: e} }
	if r.Method != http.MethodPost {
		return fail(Errorf("UnsupportedProtocol", "cloudsim implements the Tencent Cloud API with POST and TC3-HMAC-SHA256 only; got %s", r.Method))
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return fail(Errorf("InvalidRequest", "reading the request body: %v", err))
	}
	if len(body) > maxBody {
		return fail(Errorf("RequestSizeLimitExceeded", "The request body exceeds the limit of %d bytes.", maxBody))
	}

	// A few actions are called unsigned (sts.go); every other call is
	// authenticated first.
	secretID, svcName, unsigned := "", "", false
	if svcName, unsigned = unsignedService(r.Header, r.Host); !unsigned {
		var aerr *Error
		secretID, svcName, aerr = d.authenticate(r, body)
		ci.Principal, ci.Service = secretID, svcName
		if aerr != nil {
			return fail(aerr)
		}
	}
	ci.Service = svcName

	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return fail(Errorf("InvalidParameter", "Content-Type %q is not supported: cloudsim accepts only application/json (TC3-HMAC-SHA256).", r.Header.Get("Content-Type")))
	}
	action := r.Header.Get("X-TC-Action")
	if action == "" {
		return fail(Errorf("MissingParameter", "The request is missing a required parameter `Action`."))
	}
	svc := d.service(svcName)
	if svc == nil {
		return fail(Errorf("InvalidAction", "The service `%s` is not emulated by cloudsim (emulated services: %s).", svcName, strings.Join(d.serviceNames(), ", ")))
	}
	act, ok := svc.Actions[action]
	if !ok {
		return fail(Errorf("InvalidAction", "The requested action `%s` does not exist or is not emulated by cloudsim for service `%s`.", action, svcName))
	}
	version := r.Header.Get("X-TC-Version")
	if version == "" {
		return fail(Errorf("MissingParameter", "The request is missing a required parameter `Version`."))
	}
	if version != svc.Version {
		return fail(Errorf("NoSuchVersion", "The requested version `%s` of action `%s` does not exist (service `%s` uses version `%s`).", version, action, svcName, svc.Version))
	}
	region := r.Header.Get("X-TC-Region")
	if region == "" && act.RegionRequired {
		return fail(Errorf("MissingParameter", "The request is missing a required parameter `Region`."))
	}
	if region != "" && !d.knownRegion(region) {
		return fail(Errorf("UnsupportedRegion", "The region `%s` is not supported.", region))
	}

	// CAM authorizes after the request is known to be well-formed and
	// before it is admitted (cloudsim's choice of order: the rate limit
	// then counts only calls the caller may make).
	if e := d.cam.authorize(d.subjectOf(secretID), svcName, action); e != nil {
		return fail(e)
	}
	if ok, limit := d.core.Allow(action); !ok {
		return fail(Errorf("RequestLimitExceeded", "Your request rate for action `%s` exceeds the frequency limit of %g requests per second. Please reduce the frequency of calls.", action, limit))
	}
	d.core.Delay(r.Context(), DialectName, callKind(action))
	if f := d.core.Fault(r.Context(), action); f != nil {
		if f.HTTPStatus != 0 {
			return answer{status: f.HTTPStatus, rawBody: fmt.Sprintf("cloudsim: injected fault: HTTP %d %s", f.HTTPStatus, http.StatusText(f.HTTPStatus))}
		}
		return fail(Errorf(f.ErrorCode, "cloudsim: injected fault for action `%s`.", action))
	}

	body, err = acceptByName(svcName, action, body)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return fail(e)
		}
		return fail(Errorf("InternalError", "%v", err))
	}
	call := &Call{
		Ctx:       r.Context(),
		Core:      d.core,
		Service:   svcName,
		Action:    action,
		Region:    region,
		SecretID:  secretID,
		RequestID: ci.RequestID,
	}
	resp, err := act.Handler(call, body)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return fail(e)
		}
		return fail(Errorf("InternalError", "%v", err))
	}
	return answer{resp: resp}
}

// realRegions are the Tencent Cloud regions (as listed by the SDK's regions
// package).
var realRegions = []string{
	"ap-bangkok", "ap-beijing", "ap-chengdu", "ap-chongqing", "ap-guangzhou",
	"ap-guangzhou-open", "ap-hongkong", "ap-jakarta", "ap-mumbai", "ap-nanjing",
	"ap-seoul", "ap-shanghai", "ap-shanghai-fsi", "ap-shenzhen-fsi", "ap-singapore",
	"ap-tokyo", "eu-frankfurt", "eu-moscow", "na-ashburn", "na-siliconvalley",
	"na-toronto", "sa-saopaulo",
}

// knownRegion accepts the real regions, the simulator's default region and
// any region an instance lives in.
func (d *Dialect) knownRegion(region string) bool {
	if region == d.core.Region() || slices.Contains(realRegions, region) {
		return true
	}
	for _, rec := range d.core.Snapshot() {
		if rec.Region(d.core.Region()) == region {
			return true
		}
	}
	return false
}

// Decode strictly decodes an action's JSON parameters into v (a pointer to
// the SDK's XxxRequestParams) with the SDK's JSON package. Unknown
// parameters answer UnknownParameter, mistyped ones InvalidParameter.
func Decode(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	dec := tcjson.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
			return Errorf("UnknownParameter", "The parameter `%s` is not recognized.", strings.Trim(name, `"`))
		}
		var te *tcjson.UnmarshalTypeError
		if errors.As(err, &te) {
			return Errorf("InvalidParameter", "The type of parameter `%s` is invalid: got a JSON %s, want %s.", te.Field, te.Value, te.Type)
		}
		return Errorf("InvalidParameter", "The request body is not valid JSON: %v.", err)
	}
	return nil
}

func encodeSuccess(resp any, requestID string) ([]byte, error) {
	if resp == nil {
		resp = map[string]any{}
	}
	rv := reflect.ValueOf(resp)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() && rv.Elem().Kind() == reflect.Struct {
		f := rv.Elem().FieldByName("RequestId")
		if f.IsValid() && f.CanSet() && f.Type() == reflect.TypeFor[*string]() {
			f.Set(reflect.ValueOf(&requestID))
			return tcjson.Marshal(struct {
				Response any `json:"Response"`
			}{resp})
		}
	}
	// Not an SDK response struct: splice RequestId into the object.
	b, err := tcjson.Marshal(resp)
	if err != nil {
		return nil, err
	}
	var m map[string]tcjson.RawMessage
	if err := tcjson.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("response is not a JSON object: %w", err)
	}
	if m == nil {
		m = map[string]tcjson.RawMessage{}
	}
	m["RequestId"], _ = tcjson.Marshal(requestID)
	return tcjson.Marshal(map[string]any{"Response": m})
}

func encodeError(e *Error, requestID string) []byte {
	type apiErr struct {
		Code    string `json:"Code"`
		Message string `json:"Message"`
	}
	b, _ := tcjson.Marshal(struct {
		Response struct {
			Error     apiErr `json:"Error"`
			RequestId string `json:"RequestId"`
		} `json:"Response"`
	}{Response: struct {
		Error     apiErr `json:"Error"`
		RequestId string `json:"RequestId"`
	}{apiErr{e.Code, e.Message}, requestID}})
	return b
}
