package lbops

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"

	"github.com/ccmkit/ccm/internal/oci/config/configtest"
	"github.com/ccmkit/ccm/internal/oci/ociapi"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// The network every test runs in: a VCN with two load balancer subnets and
// a node subnet, each with its own security list that starts with someone
// else's rule.
const (
	testCompartment = configtest.Compartment
	testVCN         = configtest.VCN
	subnetA         = "ocid1.subnet.oc1.iad.aaaalbsubneta"
	subnetB         = "ocid1.subnet.oc1.iad.aaaalbsubnetb"
	subnetNodes     = "ocid1.subnet.oc1.iad.aaaanodesubnet"
	slA             = "ocid1.securitylist.oc1.iad.aaaalista"
	slB             = "ocid1.securitylist.oc1.iad.aaaalistb"
	slNodes         = "ocid1.securitylist.oc1.iad.aaaalistnodes"
)

// lbEnv is the OCI API the operations are tested against: cloudsim
// in-process over the real SDK and real HTTP (signed requests, work
// requests, retry tokens, busy load balancers, etags, the documented
// limits and faults), with every call the operations make recorded.
type lbEnv struct {
	t   *testing.T
	sim *cloudsim.Sim
	api *ociapi.Clients // recorded: the operations' clients

	mu     sync.Mutex
	writes []string       // "CreateLoadBalancer", "UpdateBackendSet TCP-80", ...
	tokens []string       // the opc-retry-token of every create
	lists  map[string]int // reads counted by name: "ListLoadBalancers", "ListLoadBalancers displayName", "GetWorkRequest"
}

func newLBEnv(t *testing.T) *lbEnv { return newLBEnvWith(t, nil) }

// newLBEnvWith is newLBEnv with cloudsim's options changed by mod.
func newLBEnvWith(t *testing.T, mod func(*cloudsim.Options)) *lbEnv {
	t.Helper()
	pub, err := x509.MarshalPKIXPublicKey(&configtest.Key().PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	someoneElses := []core.IngressSecurityRule{{Source: common.String("10.0.0.0/16"), Protocol: common.String("all"),
		Description: common.String("someone else's")}}
	list := func(id string) simoci.SecurityList {
		return simoci.SecurityList{ID: id, VCNID: testVCN, CompartmentID: testCompartment, IngressSecurityRules: someoneElses}
	}
	subnet := func(id, cidr, list string) simoci.Subnet {
		return simoci.Subnet{ID: id, VCNID: testVCN, CompartmentID: testCompartment, CIDRBlock: cidr, SecurityListIDs: []string{list}}
	}
	opts := cloudsim.Options{
		Latency:          cloudsim.ZeroLatency,
		DisableDataPlane: true,
		OCI: cloudsim.OCIOptions{
			Keys: map[string]string{
				configtest.Tenancy + "/" + configtest.User + "/" + configtest.Fingerprint(): string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})),
			},
			Network: simoci.NetworkSeed{
				Compartments:  []string{testCompartment},
				VCNs:          []simoci.VCN{{ID: testVCN, CompartmentID: testCompartment, CIDRBlock: "10.0.0.0/16"}},
				SecurityLists: []simoci.SecurityList{list(slA), list(slB), list(slNodes)},
				Subnets: []simoci.Subnet{subnet(subnetA, "10.0.100.0/24", slA), subnet(subnetB, "10.0.101.0/24", slB),
					subnet(subnetNodes, "10.0.0.0/24", slNodes)},
			},
			WorkRequestLatency: 2 * time.Millisecond,
		},
	}
	if mod != nil {
		mod(&opts)
	}
	e := &lbEnv{t: t, sim: cloudsim.New(opts)}
	url, err := e.sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.sim.Close() })
	e.api, err = ociapi.New(ociapi.Options{Tenancy: configtest.Tenancy, User: configtest.User, Region: configtest.Region,
		Fingerprint: configtest.Fingerprint(), Key: configtest.PEM(), Endpoint: url, Limits: ociapi.Limits{Disabled: true},
		Wrap: func(next http.RoundTripper) http.RoundTripper { return &recorder{env: e, next: next} }})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// recorder names each call as the tests read them.
type recorder struct {
	env  *lbEnv
	next http.RoundTripper
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	e := r.env
	e.mu.Lock()
	if seg := strings.Split(strings.Trim(req.URL.Path, "/"), "/"); req.Method == http.MethodGet && len(seg) == 2 {
		if name := "List" + kindOf(seg[1]) + "s"; seg[1] == "loadBalancers" || seg[1] == "networkLoadBalancers" {
			if req.URL.Query().Has("displayName") {
				name += " displayName"
			}
			if e.lists == nil {
				e.lists = map[string]int{}
			}
			e.lists[name]++
		}
	}
	if req.Method == http.MethodGet && (strings.Contains(req.URL.Path, "/workRequests/") || strings.Contains(req.URL.Path, "/loadBalancerWorkRequests/")) {
		if e.lists == nil {
			e.lists = map[string]int{}
		}
		e.lists["GetWorkRequest"]++
	}
	if req.Method != http.MethodGet {
		e.writes = append(e.writes, writeName(req.Method, req.URL.Path, body))
		if tok := req.Header.Get("opc-retry-token"); tok != "" && req.Method == http.MethodPost {
			e.tokens = append(e.tokens, tok)
		}
	}
	e.mu.Unlock()
	return r.next.RoundTrip(req)
}

// writeName names a write: the operation, and the backend set, listener or
// security list it changes.
func writeName(method, path string, body []byte) string {
	seg := strings.Split(strings.Trim(path, "/"), "/")[1:] // without the API version
	last := seg[len(seg)-1]
	switch {
	case seg[0] == "networkSecurityGroups":
		return nsgWriteName(method, seg)
	case last == "networkSecurityGroups":
		return "UpdateNetworkSecurityGroups"
	case len(seg) == 1 && method == http.MethodPost: // POST /loadBalancers
		return "Create" + kindOf(seg[0])
	case len(seg) == 2 && method == http.MethodDelete:
		return "Delete" + kindOf(seg[0])
	case len(seg) == 2 && method == http.MethodPut && seg[0] != "securityLists":
		return "Update" + kindOf(seg[0])
	case seg[0] == "securityLists":
		return "UpdateSecurityList " + last
	case len(seg) == 3: // POST .../backendSets with the name in the body
		var named struct{ Name string }
		_ = json.Unmarshal(body, &named)
		return "Create" + singular(last) + " " + named.Name
	case len(seg) == 4:
		op := map[string]string{http.MethodPut: "Update", http.MethodDelete: "Delete"}[method]
		return op + singular(seg[2]) + " " + last
	}
	return method + " " + path
}

func kindOf(collection string) string {
	if collection == "networkLoadBalancers" {
		return "NetworkLoadBalancer"
	}
	return "LoadBalancer"
}

func singular(collection string) string {
	return map[string]string{"backendSets": "BackendSet", "listeners": "Listener", "certificates": "Certificate", "ruleSets": "RuleSet"}[collection]
}

// listsOf is how many reads of a name (lbEnv.lists) were made.
func (e *lbEnv) listsOf(name string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lists[name]
}

func (e *lbEnv) writesOf() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.writes)
}

func (e *lbEnv) resetWrites() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.writes = nil
}

func (e *lbEnv) usedTokens() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.tokens)
}

// fail makes the next times calls of the operation (a cloudsim action
// such as "UpdateBackendSet" or "nlb:UpdateBackendSet") answer status and
// code; times 0: until cleared.
func (e *lbEnv) fail(op string, status int, code string, times int) {
	e.sim.SetFault(cloudsim.Fault{Action: simoci.ActionPrefix + op, ErrorRate: 1, HTTPStatus: status, ErrorCode: code, Times: times})
}

// failCreations makes the work requests of the next times creations of
// the kind fail (the load balancer ends FAILED).
func (e *lbEnv) failCreations(kind Kind, times int) {
	op := "CreateLoadBalancer"
	if kind == KindNLB {
		op = "nlb:CreateNetworkLoadBalancer"
	}
	e.sim.SetFault(cloudsim.Fault{Action: simoci.ActionPrefix + op, ErrorRate: 1, FailTask: true, Times: times})
}

// balancers lists the live load balancers of a kind.
func (e *lbEnv) balancers(kind Kind) []simoci.LoadBalancer {
	want := "loadbalancer"
	if kind == KindNLB {
		want = "networkloadbalancer"
	}
	var out []simoci.LoadBalancer
	for _, lb := range e.sim.OCI().LoadBalancers() {
		if lb.Kind == want && lb.LifecycleState != "DELETED" {
			out = append(out, lb)
		}
	}
	return out
}

// only returns the one live load balancer of the kind.
func (e *lbEnv) only(kind Kind) simoci.LoadBalancer {
	e.t.Helper()
	lbs := e.balancers(kind)
	if len(lbs) != 1 {
		e.t.Fatalf("%d %s load balancers, want 1", len(lbs), kind)
	}
	return lbs[0]
}

// securityList reads a security list as the API answers it.
func (e *lbEnv) securityList(id string) core.SecurityList {
	e.t.Helper()
	for _, sl := range e.sim.OCI().Network().SecurityLists {
		if sl.ID == id {
			return core.SecurityList{Id: &sl.ID, IngressSecurityRules: sl.IngressSecurityRules, EgressSecurityRules: sl.EgressSecurityRules}
		}
	}
	e.t.Fatalf("no security list %s", id)
	return core.SecurityList{}
}
