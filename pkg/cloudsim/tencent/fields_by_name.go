package tencent

import (
	"bytes"
	"errors"
	"reflect"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	tcjson "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/json"
)

// Requests are decoded with the SDK's models (Decode), which refuse an
// unknown parameter with UnknownParameter. The models are the newest the
// Go module proxy serves (docs/cloudsim.md, "SDK model versions"), and the
// real API may already document parameters they lack: a client built on a
// newer SDK sends them, and the real cloud accepts them. Those parameters
// are accepted here by name, each with the API reference page that
// documents it: the value is checked against its documented shape and
// then dropped (cloudsim does not act on it) before the action decodes the
// rest. TestDocumentedFieldsAccepted finds the ones missing (it sends every
// field the current API documents), TestFieldsByNameNotInModel the ones a
// newer model makes unnecessary.

// FieldByName is a top-level request parameter accepted by name.
type FieldByName struct {
	Name string // the parameter, as the API names it
	Doc  string // the API reference that documents it for the action
	// Shape is the Go type its value must decode into, strictly (an SDK
	// model type where the SDK has one).
	Shape reflect.Type
}

// FieldsByName lists the parameters accepted by name, by "service.Action".
var FieldsByName = map[string][]FieldByName{
	"clb.CreateLoadBalancer": {{
		Name: "AvailableZoneAffinityInfo",
		// The data type's page: "Used by actions: CreateLoadBalancer,
		// DescribeLoadBalancerListByCertId, DescribeLoadBalancers,
		// DescribeLoadBalancersDetail"; clb@v1.3.105 has the type (for the
		// answers) but not the request parameter.
		Doc:   "https://www.tencentcloud.com/document/api/214/80872",
		Shape: reflect.TypeFor[clb.AvailableZoneAffinityInfo](),
	}},
}

// acceptByName checks and drops the parameters accepted by name from an
// action's body. A body that is not a JSON object is left to Decode,
// which answers it.
func acceptByName(service, action string, body []byte) ([]byte, error) {
	fields := FieldsByName[service+"."+action]
	if len(fields) == 0 || len(bytes.TrimSpace(body)) == 0 {
		return body, nil
	}
	var params map[string]tcjson.RawMessage
	if err := tcjson.Unmarshal(body, &params); err != nil {
		return body, nil
	}
	found := false
	for _, f := range fields {
		raw, ok := params[f.Name]
		if !ok {
			continue
		}
		found = true
		if err := Decode(raw, reflect.New(f.Shape).Interface()); err != nil {
			var e *Error
			if errors.As(err, &e) {
				return nil, Errorf(e.Code, "%s: %s", f.Name, e.Message)
			}
			return nil, err
		}
		delete(params, f.Name)
	}
	if !found {
		return body, nil
	}
	return tcjson.Marshal(params)
}
