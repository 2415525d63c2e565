// Command cloud-controller-manager runs the cloud-specific control loops of a
// Kubernetes cluster whose kubelets use --cloud-provider=external.
//
// It is the upstream k8s.io/cloud-provider command with every upstream flag;
// this file only links our providers in (package provider lists them) and
// picks the one named by --cloud-provider, with measured defaults for the flags that bound node
// initialization (defaults.go). Three things run before upstream's command: --version,
// `cloud-controller-manager preflight`, which checks a setup before it is
// deployed (preflight.go, internal/preflight), and `cloud-controller-manager
// adopt --dry-run`, which prints what the first sync would do to each load
// balancer before a switch-over (adopt.go, internal/lb/lbkit's Plan).
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/wait"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/app"
	"k8s.io/cloud-provider/app/config"
	"k8s.io/cloud-provider/names"
	"k8s.io/cloud-provider/options"
	"k8s.io/component-base/cli"
	cliflag "k8s.io/component-base/cli/flag"
	_ "k8s.io/component-base/logs/json/register"          // --logging-format=json
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics on /metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // build info metric
	"k8s.io/klog/v2"

	// CA roots inside the binary: the image has no CA file, and a host's
	// system roots, where present, still take precedence.
	_ "golang.org/x/crypto/x509roots/fallback"

	"github.com/ccmkit/ccm/internal/buildinfo"
	// Every provider package, each registering itself by name (the list is
	// generated: make generate).
	"github.com/ccmkit/ccm/internal/provider"
)

func main() {
	if versionRequested(os.Args[1:]) {
		fmt.Print(buildinfo.Get())
		return
	}
	if preflightRequested(os.Args[1:]) {
		os.Exit(runPreflight(os.Args[2:], os.Stdout, os.Stderr))
	}
	if adoptRequested(os.Args[1:]) {
		os.Exit(runAdopt(os.Args[2:], os.Stdout, os.Stderr))
	}
	buildinfo.RegisterMetric()
	opts, err := options.NewCloudControllerManagerOptions()
	if err != nil {
		klog.Fatalf("unable to initialize command options: %v", err)
	}
	os.Exit(cli.Run(newCommand(opts)))
}

// newCommand is upstream's command with our defaults (defaults.go).
func newCommand(opts *options.CloudControllerManagerOptions) *cobra.Command {
	applyMeasuredDefaults(opts)
	early := &earlyCloud{}
	cmd := app.NewCloudControllerManagerCommand(opts, func(c *config.CompletedConfig) cloudprovider.Interface {
		// Called once, before any controller or informer starts.
		trimNodeCache(c.SharedInformers) // nodecache.go
		if cloud := early.take(); cloud != nil {
			warnIfWorldReadable(c.ComponentConfig.KubeCloudShared.CloudProvider.CloudConfigFile)
			return cloud
		}
		return initCloud(c)
	}, app.DefaultInitFuncConstructors, names.CCMControllerAliases(), cliflag.NamedFlagSets{}, wait.NeverStop)
	early.wrap(cmd, opts) // earlystart.go
	return cmd
}

// initCloud builds the provider named by --cloud-provider from --cloud-config.
// A provider that cannot start (bad config, unknown name) ends the process with
// the provider's own message, which names every bad field.
func initCloud(c *config.CompletedConfig) cloudprovider.Interface {
	shared := c.ComponentConfig.KubeCloudShared.CloudProvider
	warnIfWorldReadable(shared.CloudConfigFile)
	cloud, err := cloudprovider.InitCloudProvider(shared.Name, shared.CloudConfigFile)
	if err == nil && cloud == nil {
		err = fmt.Errorf("cloud provider %q is not registered in this binary (it has %s)", shared.Name, strings.Join(provider.Names(), ", "))
	}
	if err != nil {
		// A plain message and exit code 1, not klog.Fatal's goroutine dump:
		// this is the user's config error, and the message is all they need.
		klog.ErrorS(err, "Cannot start the cloud provider")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
	return cloud
}

// warnIfWorldReadable warns when the cloud config, which usually holds the
// cloud credentials, can be read by every user on the host.
func warnIfWorldReadable(path string) {
	if path == "" {
		return
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm()&0o004 == 0 {
		return
	}
	klog.Warningf("The cloud config %s is readable by every user (mode %04o) and may hold credentials: "+
		"chmod 600 it, or mount it from a Secret with defaultMode 0400", path, fi.Mode().Perm())
}
