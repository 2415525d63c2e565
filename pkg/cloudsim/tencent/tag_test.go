package tencent

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

func TestAttachResourcesTag(t *testing.T) {
	c := core.New(core.Config{})
	l := NewCLB(c, CLBOptions{})
	defer l.Close()
	lb, err := l.CreateLoadBalancer(CLBSpec{Region: "ap-guangzhou", Tags: map[string]string{"team": "web"}})
	if err != nil {
		t.Fatal(err)
	}
	attach := func(body string) error {
		_, err := l.attachResourcesTag(&Call{Region: "ap-guangzhou"}, []byte(body))
		return err
	}
	req := func(ids, key string) string {
		return fmt.Sprintf(`{"ServiceType":"clb","ResourcePrefix":"clb","ResourceRegion":"ap-guangzhou","ResourceIds":[%s],"TagKey":%q,"TagValue":"v"}`, ids, key)
	}
	many := strings.TrimSuffix(strings.Repeat(`"lb-x",`, MaxTagResourceIDs+1), ",")
	tests := []struct {
		name, body, code string
	}{
		{"attached", req(`"`+lb.ID+`"`, "owner"), ""},
		{"the key again", req(`"`+lb.ID+`"`, "owner"), "ResourceInUse.TagKeyAttached"},
		{"a key it was created with", req(`"`+lb.ID+`"`, "team"), "ResourceInUse.TagKeyAttached"},
		{"no such CLB", req(`"lb-nothere"`, "k"), "InvalidParameterValue.ResourceIdInvalid"},
		{"another region", strings.Replace(req(`"`+lb.ID+`"`, "k"), `"ResourceRegion":"ap-guangzhou"`, `"ResourceRegion":"ap-beijing"`, 1), "InvalidParameterValue.ResourceIdInvalid"},
		{"more than 50", req(many, "k"), "LimitExceeded.ResourceNumPerRequest"},
		{"another product", strings.Replace(req(`"`+lb.ID+`"`, "k"), `"ServiceType":"clb"`, `"ServiceType":"cvm"`, 1), "InvalidParameterValue.ServiceTypeInvalid"},
		{"no key", req(`"`+lb.ID+`"`, ""), "InvalidParameterValue.TagKeyEmpty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := attach(tc.body)
			var e *Error
			switch {
			case tc.code == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tc.code != "" && (!errors.As(err, &e) || e.Code != tc.code):
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
		})
	}
	got, err := l.LoadBalancer(lb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Tags["owner"] != "v" || got.Tags["team"] != "web" || len(got.Tags) != 2 {
		t.Errorf("tags = %v, want team=web and owner=v", got.Tags)
	}
}
