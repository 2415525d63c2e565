package tencent

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// TestCAMAuthorization: a subject with policies gets exactly what they
// allow, answered with AuthFailure.UnauthorizedOperation naming the
// action; one without keeps full access; detaching restores it.
func TestCAMAuthorization(t *testing.T) {
	const other = "AKIDcloudsimother"
	c := core.New(core.Config{Latency: core.ZeroLatency})
	d := New(c, Options{Credentials: map[string]string{testID: testKey, other: testKey}})
	e := newEnvFrom(t, c, d)
	describe := func(id string) error {
		_, err := e.client(t, id, testKey).DescribeInstances(cvm.NewDescribeInstancesRequest())
		return err
	}
	if err := describe(testID); err != nil {
		t.Fatalf("no policy attached: %v, want full access", err)
	}
	for _, tc := range []struct {
		name, policy string
		wantCode     string
	}{
		{"allowed by name", `{"version":"2.0","statement":[{"effect":"allow","action":["cvm:DescribeInstances"],"resource":["*"]}]}`, ""},
		{"allowed by wildcard", `{"version":"2.0","statement":[{"effect":"allow","action":"cvm:Describe*","resource":"*"}]}`, ""},
		{"another action only", `{"version":"2.0","statement":[{"effect":"allow","action":"clb:DescribeLoadBalancers","resource":"*"}]}`, codeUnauthorized},
		{"deny wins", `{"version":"2.0","statement":[{"effect":"allow","action":"*","resource":"*"},{"effect":"deny","action":"cvm:DescribeInstances","resource":"*"}]}`, codeUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := d.AttachPolicy(testID, []byte(tc.policy)); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.DetachPolicies(testID) })
			err := describe(testID)
			if got := sdkCode(err); got != tc.wantCode {
				t.Fatalf("DescribeInstances: code %q (%v), want %q", got, err, tc.wantCode)
			}
			if tc.wantCode != "" && !strings.Contains(err.Error(), "(cvm:DescribeInstances)") {
				t.Errorf("the refusal does not name the action: %v", err)
			}
			if err := describe(other); err != nil {
				t.Errorf("a subject without policies: %v, want full access", err)
			}
		})
	}
	if err := describe(testID); err != nil {
		t.Errorf("after detaching: %v, want full access", err)
	}
	counts := c.Calls()["DescribeInstances"]
	if counts[codeUnauthorized] != 2 {
		t.Errorf("call counts by code %v: want 2 refusals counted", counts)
	}
}

func TestCAMAdmin(t *testing.T) {
	c := core.New(core.Config{Latency: core.ZeroLatency})
	d := New(c, Options{})
	admin := func(method, path, body string) (int, string) {
		return adminCall(t, c, method, path, body)
	}
	if st, body := admin(http.MethodPost, "/admin/tencent/policies/role/ccm", `{"policy":{"version":"2.0","statement":[{"effect":"allow","action":"cvm:*","resource":"*"}]}}`); st != http.StatusCreated {
		t.Fatalf("attach: %d %s", st, body)
	}
	if st, body := admin(http.MethodPost, "/admin/tencent/policies/x", `{"policy":{"version":"3.0"}}`); st != http.StatusBadRequest || !strings.Contains(body, "version") {
		t.Errorf("bad policy: %d %s, want 400 naming version", st, body)
	}
	st, body := admin(http.MethodGet, "/admin/tencent/policies", "")
	var got map[string][]json.RawMessage
	if err := json.Unmarshal([]byte(body), &got); st != http.StatusOK || err != nil || len(got["role/ccm"]) != 1 {
		t.Errorf("list: %d %s", st, body)
	}
	if st, _ := admin(http.MethodDelete, "/admin/tencent/policies/role/ccm", ""); st != http.StatusNoContent {
		t.Errorf("detach: %d", st)
	}
	if st, _ := admin(http.MethodDelete, "/admin/tencent/policies/role/ccm", ""); st != http.StatusNotFound {
		t.Errorf("detach again: %d, want 404", st)
	}
	if len(d.Policies()) != 0 {
		t.Errorf("policies left: %v", d.Policies())
	}
}

// newEnvFrom serves an existing dialect.
func newEnvFrom(t *testing.T, c *core.Core, d *Dialect) *env {
	t.Helper()
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	return &env{core: c, d: d, url: srv.URL, host: strings.TrimPrefix(srv.URL, "http://")}
}

// adminCall serves one admin API request.
func adminCall(t *testing.T, c *core.Core, method, path, body string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	c.AdminHandler().ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
	return rec.Code, rec.Body.String()
}
