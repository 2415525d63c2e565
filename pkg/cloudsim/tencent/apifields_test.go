package tencent

import (
	"encoding/json"
	"maps"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// apiFields is testdata/apifields.json: every request field the current
// API documents for each emulated action (hack/apifields writes it from the
// official Node.js SDK's models, tencentcloud-sdk-nodejs 4.1.313).
type apiFields struct {
	Source  string                       `json:"source"`
	Actions map[string]map[string]string `json:"actions"`
}

// TestDocumentedFieldsAccepted sends, raw and signed, each field the current
// API documents for each action cloudsim emulates, with a value of its
// documented type, and fails when cloudsim refuses it by name
// (UnknownParameter) or by type: a refusal the real API would not give
// (issue 32 item 6: CreateLoadBalancer's AvailableZoneAffinityInfo,
// "Used by actions: CreateLoadBalancer", https://www.tencentcloud.com/document/api/214/80872,
// was refused while clb v1.3.105's model lacked it). The action may still
// refuse the value (a missing required parameter, an empty id): that is not
// a refusal of the field.
func TestDocumentedFieldsAccepted(t *testing.T) {
	var table apiFields
	b, err := os.ReadFile("testdata/apifields.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &table); err != nil {
		t.Fatal(err)
	}
	c := core.New(core.Config{Latency: core.ZeroLatency})
	cl, err := NewCloud(c, nil, CloudOptions{Credentials: map[string]string{testID: testKey}, TaskLatency: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	srv := httptest.NewServer(cl)
	t.Cleanup(srv.Close)
	e := &env{core: c, d: cl.Dialect, url: srv.URL, host: strings.TrimPrefix(srv.URL, "http://")}

	versions := map[string]string{"clb": CLBVersion, "cvm": CVMVersion, "tke": TKEVersion, "vpc": VPCVersion, "tag": TagVersion, "sts": STSVersion}
	for svc, actions := range cl.Actions() {
		for _, action := range actions {
			fields, ok := table.Actions[svc+"."+action]
			if !ok {
				t.Errorf("%s.%s is emulated but not in testdata/apifields.json: rerun hack/apifields", svc, action)
				continue
			}
			c.SetRateLimit(action, 0) // hundreds of calls, not a rate limit test
			for _, path := range slices.Sorted(maps.Keys(fields)) {
				body, err := json.Marshal(bodyWith(path, fields[path]))
				if err != nil {
					t.Fatal(err)
				}
				_, resp := e.do(t, rawReq{action: action, version: versions[svc], service: svc, body: string(body)})
				var r struct {
					Response struct {
						Error struct{ Code, Message string }
					}
				}
				if err := json.Unmarshal([]byte(resp), &r); err != nil {
					t.Fatalf("%s.%s %s: answer %q: %v", svc, action, body, resp, err)
				}
				code, msg := r.Response.Error.Code, r.Response.Error.Message
				if code == "UnknownParameter" || strings.Contains(msg, "The type of parameter") {
					t.Errorf("%s.%s refuses the documented field %s (%s): %s %s", svc, action, path, fields[path], code, msg)
				}
			}
		}
	}
}

// bodyWith is a request body that sets the field at path ("A[].B.C") to a
// value of kind ("string", "number", "boolean", "object", "array:<kind>").
func bodyWith(path, kind string) map[string]any {
	root := map[string]any{}
	cur := root
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next := map[string]any{}
		if name, ok := strings.CutSuffix(p, "[]"); ok {
			cur[name] = []any{next}
		} else {
			cur[p] = next
		}
		cur = next
	}
	cur[parts[len(parts)-1]] = valueOf(kind)
	return root
}

func valueOf(kind string) any {
	if elem, ok := strings.CutPrefix(kind, "array:"); ok {
		if elem == "object" {
			return []any{}
		}
		return []any{valueOf(elem)}
	}
	switch kind {
	case "string":
		return ""
	case "number":
		return 0
	case "boolean":
		return false
	}
	return map[string]any{}
}
