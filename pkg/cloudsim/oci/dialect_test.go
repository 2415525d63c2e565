package oci

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

func TestRateLimit(t *testing.T) {
	e := newTestEnv(t, Options{}, core.Config{RateLimits: map[string]float64{"oci:ListInstances": 1}})
	cc := e.compute()
	throttled := 0
	for range 4 {
		_, err := cc.ListInstances(ctx(t), ocicore.ListInstancesRequest{CompartmentId: common.String(DefaultCompartmentID)})
		if err != nil {
			wantErr(t, err, http.StatusTooManyRequests, CodeTooManyRequests)
			throttled++
		}
	}
	if throttled == 0 {
		t.Fatal("4 calls at once under a 1/s limit: none throttled")
	}
	calls := e.core.Calls()["oci:ListInstances"]
	if calls[CodeTooManyRequests] != throttled || calls["OK"] != 4-throttled {
		t.Fatalf("calls %v, throttled %d", calls, throttled)
	}
	// Other operations have their own buckets.
	if _, err := cc.ListVnicAttachments(ctx(t), ocicore.ListVnicAttachmentsRequest{CompartmentId: common.String(DefaultCompartmentID)}); err != nil {
		t.Fatal(err)
	}
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name      string
		fault     core.Fault
		status    int
		code      string
		countedAs string
	}{
		{"status only", core.Fault{HTTPStatus: 503, ErrorRate: 1}, 503, CodeServiceUnavailable, "HTTP503"},
		{"default code", core.Fault{ErrorRate: 1}, 500, CodeInternalServerError, CodeInternalServerError},
		{"known code", core.Fault{ErrorCode: CodeTooManyRequests, ErrorRate: 1}, 429, CodeTooManyRequests, CodeTooManyRequests},
		{"code and status", core.Fault{ErrorCode: "NotAuthorizedOrNotFound", HTTPStatus: 404, ErrorRate: 1}, 404, CodeNotAuthorizedOrNotFound, "HTTP404"},
		{"unknown code", core.Fault{ErrorCode: "Weird", ErrorRate: 1}, 500, "Weird", "Weird"},
		{"latency only", core.Fault{Latency: 50 * time.Millisecond}, 0, "", "OK"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, Options{}, core.Config{})
			in := e.addInstances(core.Instance{})[0]
			f := tt.fault
			f.Action = "oci:GetInstance"
			e.core.SetFault(f)
			start := time.Now()
			_, err := e.compute().GetInstance(ctx(t), ocicore.GetInstanceRequest{InstanceId: common.String(in.OCID)})
			if tt.status == 0 {
				if err != nil || time.Since(start) < 50*time.Millisecond {
					t.Fatalf("err %v after %s", err, time.Since(start))
				}
			} else {
				wantErr(t, err, tt.status, tt.code)
			}
			if n := e.core.Calls()["oci:GetInstance"][tt.countedAs]; n != 1 {
				t.Fatalf("calls %v", e.core.Calls())
			}
		})
	}
}

func TestUnknownOperation(t *testing.T) {
	e := newTestEnv(t, Options{}, core.Config{})
	for _, path := range []string{PrefixCore + "/nothing", PrefixLoadBalancer + "/loadBalancerPolicies", PrefixNLB + "/networkLoadBalancersPolicies"} {
		resp, err := http.DefaultClient.Do(signed(t, http.MethodGet, e.url+path, nil))
		if err != nil {
			t.Fatal(err)
		}
		var eb struct{ Code string }
		_ = json.NewDecoder(resp.Body).Decode(&eb)
		resp.Body.Close()
		if resp.StatusCode != 404 || eb.Code != CodeNotFound || resp.Header.Get("opc-request-id") == "" {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, eb.Code)
		}
	}
}

func TestMethodNotAllowed(t *testing.T) {
	e := newTestEnv(t, Options{}, core.Config{})
	resp, err := http.DefaultClient.Do(signed(t, http.MethodDelete, e.url+PrefixCore+"/instances", nil))
	if err != nil {
		t.Fatal(err)
	}
	var eb struct{ Code, Message string }
	_ = json.NewDecoder(resp.Body).Decode(&eb)
	resp.Body.Close()
	if resp.StatusCode != 405 || eb.Code != CodeMethodNotAllowed || !strings.Contains(eb.Message, "GET") {
		t.Fatalf("%d %+v", resp.StatusCode, eb)
	}
}

func TestRequestIDEchoesTheClient(t *testing.T) {
	e := newTestEnv(t, Options{}, core.Config{})
	resp, err := e.compute().ListInstances(ctx(t), ocicore.ListInstancesRequest{CompartmentId: common.String(DefaultCompartmentID), OpcRequestId: common.String("MYID")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(*resp.OpcRequestId, "MYID/") {
		t.Fatalf("opc-request-id %s", *resp.OpcRequestId)
	}
}

func TestEncodeJSONDropsNulls(t *testing.T) {
	b, err := encodeJSON(ocicore.Vnic{Id: common.String("x"), NsgIds: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("null")) || !bytes.Contains(b, []byte(`"nsgIds":[]`)) {
		t.Fatalf("%s", b)
	}
}

func adminDo(t *testing.T, method, url string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, r)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

func TestAdminAPI(t *testing.T) {
	_, b := testKeys(t)
	e := newTestEnv(t, Options{}, core.Config{})
	admin := e.url + "/admin/oci"

	// Key B is unknown until registered through the admin API.
	cb := e.computeWith(providerFor(b))
	_, err := cb.ListInstances(ctx(t), ocicore.ListInstancesRequest{CompartmentId: common.String(DefaultCompartmentID)})
	wantErr(t, err, 401, CodeNotAuthenticated)
	if st, raw := adminDo(t, http.MethodPost, admin+"/keys", KeyBody{KeyID: keyIDOf(b), PublicKey: publicPEM(t, &b.PublicKey)}); st != 201 {
		t.Fatalf("add key: %d %s", st, raw)
	}
	if _, err := cb.ListInstances(ctx(t), ocicore.ListInstancesRequest{CompartmentId: common.String(DefaultCompartmentID)}); err != nil {
		t.Fatal(err)
	}
	if st, raw := adminDo(t, http.MethodPost, admin+"/keys", KeyBody{KeyID: keyIDOf(b), PublicKey: "junk"}); st != 400 {
		t.Fatalf("bad key: %d %s", st, raw)
	}
	if st, _ := adminDo(t, http.MethodDelete, admin+"/keys/"+keyIDOf(b), nil); st != 204 {
		t.Fatalf("remove key: %d", st)
	}

	// Seed a compartment and subnet, then an LB in them.
	comp := "ocid1.compartment.oc1..aaaaaaaateam"
	subnet := "ocid1.subnet.oc1..aaaaaaaalbsubnet"
	st, raw := adminDo(t, http.MethodPost, admin+"/network", NetworkSeed{Compartments: []string{comp}, Subnets: []Subnet{{ID: subnet, CompartmentID: comp, CIDRBlock: "10.0.200.0/24"}}})
	if st != 200 || !bytes.Contains(raw, []byte(subnet)) {
		t.Fatalf("seed: %d %s", st, raw)
	}
	d := lbDetails("admin-view", "10.0.0.5")
	d.CompartmentId, d.SubnetIds = common.String(comp), []string{subnet}
	created, err := e.lb().CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: d})
	if err != nil {
		t.Fatal(err)
	}
	wr := waitLBWorkRequest(t, e.lb(), *created.OpcWorkRequestId)
	st, raw = adminDo(t, http.MethodGet, admin+"/loadbalancers", nil)
	var lbs []LoadBalancer
	if err := json.Unmarshal(raw, &lbs); st != 200 || err != nil || len(lbs) != 1 {
		t.Fatalf("list: %d %s", st, raw)
	}
	v := lbs[0]
	if v.Kind != "loadbalancer" || v.LifecycleState != "ACTIVE" || v.IPAddress == "" || len(v.Listeners) != 1 ||
		v.BackendSets[0].Backends[0].Name != "10.0.0.5:30080" || v.BackendSets[0].HealthChecker.URLPath != "/healthz" || v.MaxMbps != 100 {
		t.Fatalf("view: %+v", v)
	}
	// Drift: a listener removed out of band, then the LB itself.
	if st, raw := adminDo(t, http.MethodDelete, admin+"/loadbalancers/"+*wr.LoadBalancerId+"/listeners/TCP-80", nil); st != 204 {
		t.Fatalf("delete listener: %d %s", st, raw)
	}
	if st, raw := adminDo(t, http.MethodDelete, admin+"/loadbalancers/"+*wr.LoadBalancerId, nil); st != 204 {
		t.Fatalf("delete LB: %d %s", st, raw)
	}
	got, err := e.lb().GetLoadBalancer(ctx(t), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: wr.LoadBalancerId})
	if err != nil || got.LifecycleState != loadbalancer.LoadBalancerLifecycleStateDeleted || len(got.Listeners) != 0 {
		t.Fatalf("after out-of-band deletes: %v %d %v", got.LifecycleState, len(got.Listeners), err)
	}
	if st, raw := adminDo(t, http.MethodGet, admin+"/workrequests", nil); st != 200 || !bytes.Contains(raw, []byte("CreateLoadBalancer")) {
		t.Fatalf("work requests: %d %s", st, raw)
	}
}

func TestCheckOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		ok   bool
	}{
		{"empty", Options{}, true},
		{"bad key", Options{Keys: map[string]string{"t/u/f": "junk"}}, false},
		{"bad seed", Options{Network: NetworkSeed{VCNs: []VCN{{ID: "x"}}}}, false},
	}
	for _, tt := range tests {
		if err := CheckOptions(tt.opts); (err == nil) != tt.ok {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}
