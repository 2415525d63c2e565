// Package buildinfo says which build is running: our version and commit,
// the Go toolchain, and the cloud SDK modules compiled in. Support starts
// with "which version, which SDK": --version prints it and the
// ccmkit_build_info metric exposes it.
package buildinfo

import (
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Set by the Makefile: -ldflags "-X github.com/ccmkit/ccm/internal/buildinfo.version=..."
// Without them (go install, go run) the module version and the VCS stamp
// of the Go build info stand in.
var (
	version  string
	revision string
)

// sdkModules are the module path prefixes reported as SDKs: every
// tencentcloud-sdk-go product module, oci-go-sdk and upstream's
// cloud-provider library.
var sdkModules = []string{
	"github.com/tencentcloud/tencentcloud-sdk-go/",
	"github.com/oracle/oci-go-sdk/",
	"k8s.io/cloud-provider",
}

// Info describes this build.
type Info struct {
	Version   string   // git describe, e.g. v0.3.0-12-gabcdef0, or "devel"
	Revision  string   // full commit hash, "unknown" if not stamped
	GoVersion string   // e.g. go1.25.4
	SDKs      []Module // sorted by path
}

// Module is one dependency and its version.
type Module struct{ Path, Version string }

// Get reads this build's information.
func Get() Info { return fromBuildInfo(debug.ReadBuildInfo()) }

func fromBuildInfo(bi *debug.BuildInfo, ok bool) Info {
	info := Info{Version: version, Revision: revision, GoVersion: "unknown"}
	if ok {
		info.GoVersion = bi.GoVersion
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && info.Revision == "" {
				info.Revision = s.Value
			}
		}
		for _, d := range bi.Deps {
			if d.Replace != nil {
				d = d.Replace
			}
			if slices.ContainsFunc(sdkModules, func(p string) bool { return strings.HasPrefix(d.Path, p) }) {
				info.SDKs = append(info.SDKs, Module{Path: d.Path, Version: d.Version})
			}
		}
	}
	if info.Version == "" {
		info.Version = "devel"
	}
	if info.Revision == "" {
		info.Revision = "unknown"
	}
	slices.SortFunc(info.SDKs, func(a, b Module) int { return strings.Compare(a.Path, b.Path) })
	return info
}

// String is the --version text: one line for the build, one per SDK.
func (i Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "version %s, commit %s, %s\n", i.Version, i.Revision, i.GoVersion)
	for _, m := range i.SDKs {
		fmt.Fprintf(&b, "  %s %s\n", m.Path, m.Version)
	}
	return b.String()
}

// sdkVersion is the version of the first SDK module under prefix, or "".
func (i Info) sdkVersion(prefix string) string {
	for _, m := range i.SDKs {
		if strings.HasPrefix(m.Path, prefix) {
			return m.Version
		}
	}
	return ""
}

var buildInfo = metrics.NewGaugeVec(&metrics.GaugeOpts{
	Namespace:      "ccmkit",
	Name:           "build_info",
	Help:           "Always 1; the labels say which build runs: version, commit, Go version and the cloud SDK versions.",
	StabilityLevel: metrics.ALPHA,
}, []string{"version", "revision", "go_version", "tencentcloud_sdk", "oci_sdk"})

var registerOnce sync.Once

// RegisterMetric registers ccmkit_build_info on the legacy registry (the
// CCM's /metrics) and sets it from Get.
func RegisterMetric() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(buildInfo)
		i := Get()
		buildInfo.WithLabelValues(i.Version, i.Revision, i.GoVersion,
			i.sdkVersion("github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"),
			i.sdkVersion("github.com/oracle/oci-go-sdk/")).Set(1)
	})
}
