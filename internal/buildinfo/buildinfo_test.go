package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.99.1",
		Main:      debug.Module{Path: "github.com/ccmkit/ccm", Version: "(devel)"},
		Deps: []*debug.Module{
			{Path: "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb", Version: "v1.3.105"},
			{Path: "github.com/oracle/oci-go-sdk/v65", Version: "v65.129.0"},
			{Path: "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common", Version: "v1.0.0",
				Replace: &debug.Module{Path: "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common", Version: "v1.3.209"}},
			{Path: "golang.org/x/time", Version: "v0.9.0"},
		},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}},
	}
	tests := []struct {
		name             string
		version, rev     string
		bi               *debug.BuildInfo
		ok               bool
		wantVer, wantRev string
		wantSDKs         int
	}{
		{"no ldflags: VCS stamp, devel", "", "", bi, true, "devel", "0123abcd", 3},
		{"ldflags win", "v1.2.0-3-gabc", "abc123", bi, true, "v1.2.0-3-gabc", "abc123", 3},
		{"no build info", "", "", nil, false, "devel", "unknown", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			version, revision = tt.version, tt.rev
			defer func() { version, revision = "", "" }()
			got := fromBuildInfo(tt.bi, tt.ok)
			if got.Version != tt.wantVer || got.Revision != tt.wantRev || len(got.SDKs) != tt.wantSDKs {
				t.Fatalf("got %+v, want version %q revision %q and %d SDKs", got, tt.wantVer, tt.wantRev, tt.wantSDKs)
			}
			if tt.ok {
				if v := got.sdkVersion("github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"); v != "v1.3.209" {
					t.Errorf("common SDK version %q, want the replacement's v1.3.209", v)
				}
				s := got.String()
				for _, want := range []string{"version " + tt.wantVer, "commit " + tt.wantRev, "go1.99.1", "oci-go-sdk/v65 v65.129.0", "tencentcloud/clb v1.3.105"} {
					if !strings.Contains(s, want) {
						t.Errorf("String() = %q, want it to contain %q", s, want)
					}
				}
				if strings.Contains(s, "golang.org/x/time") {
					t.Errorf("String() lists a non-SDK module: %q", s)
				}
			}
		})
	}
}
