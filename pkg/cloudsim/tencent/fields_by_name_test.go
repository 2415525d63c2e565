package tencent

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
)

// requestModels are the SDK request models of the actions in FieldsByName.
var requestModels = map[string]reflect.Type{
	"clb.CreateLoadBalancer": reflect.TypeFor[clb.CreateLoadBalancerRequestParams](),
}

// TestFieldsByNameNotInModel: a parameter is accepted by name only while
// the pinned model lacks it, and each names its API reference page. A newer
// SDK that has it makes the entry stale: drop it.
func TestFieldsByNameNotInModel(t *testing.T) {
	for key, fields := range FieldsByName {
		model, ok := requestModels[key]
		if !ok {
			t.Errorf("%s: add its request model to requestModels", key)
			continue
		}
		for _, f := range fields {
			if !strings.HasPrefix(f.Doc, "https://") || f.Shape == nil {
				t.Errorf("%s.%s: needs its API reference link and shape, got %q %v", key, f.Name, f.Doc, f.Shape)
			}
			for i := range model.NumField() {
				if name, _, _ := strings.Cut(model.Field(i).Tag.Get("json"), ","); name == f.Name {
					t.Errorf("%s.%s is in the SDK model %s now: decode it by model, drop it from FieldsByName", key, f.Name, model)
				}
			}
		}
	}
}

// TestAcceptByName: a parameter accepted by name is checked against its
// documented shape and then dropped; the rest of the body is decoded as
// before.
func TestAcceptByName(t *testing.T) {
	tests := []struct {
		name, body, code string
		want             string // the body the action sees
	}{
		{"absent", `{"LoadBalancerType":"OPEN"}`, "", `{"LoadBalancerType":"OPEN"}`},
		{"dropped", `{"LoadBalancerType":"OPEN","AvailableZoneAffinityInfo":{"Enable":true,"ExitRatio":50,"ReentryRatio":80}}`, "", `{"LoadBalancerType":"OPEN"}`},
		{"null", `{"AvailableZoneAffinityInfo":null}`, "", `{}`},
		{"mistyped", `{"AvailableZoneAffinityInfo":{"Enable":"yes"}}`, "InvalidParameter", ""},
		{"unknown inside", `{"AvailableZoneAffinityInfo":{"Enabled":true}}`, "UnknownParameter", ""},
		{"not an object: left to Decode", `[1]`, "", `[1]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := acceptByName("clb", "CreateLoadBalancer", []byte(tt.body))
			if tt.code != "" {
				var e *Error
				if !errors.As(err, &e) || e.Code != tt.code || !strings.Contains(e.Message, "AvailableZoneAffinityInfo") {
					t.Fatalf("err = %v, want %s naming the parameter", err, tt.code)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("body %s, %v; want %s", got, err, tt.want)
			}
		})
	}
	if got, _ := acceptByName("clb", "CreateListener", []byte(`{"AvailableZoneAffinityInfo":{}}`)); string(got) != `{"AvailableZoneAffinityInfo":{}}` {
		t.Errorf("another action's body was changed: %s", got)
	}
}
