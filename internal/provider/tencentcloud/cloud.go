// Package tencentcloud is the Tencent Cloud provider of the
// cloud-controller-manager (--cloud-provider=tencentcloud). It implements
// cloudprovider.Interface: InstancesV2 (nodes on CVM), Routes and
// LoadBalancer (CLB).
package tencentcloud

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"

	"k8s.io/client-go/informers"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccm/internal/cloudbase"
	"github.com/ccmkit/ccm/internal/tencent/config"
	"github.com/ccmkit/ccm/internal/tencent/credentials"
	"github.com/ccmkit/ccm/internal/tencent/cvmlookup"
	"github.com/ccmkit/ccm/internal/tencent/tcapi"
)

// ProviderName is the --cloud-provider name and the providerID scheme.
const ProviderName = "tencentcloud"

// ConfigFile is the cloud config's file name where one is chosen for it,
// as the chart's default Secret key (and deploy/'s example Secret's).
const ConfigFile = "cloud.yaml"

// EarlyStart: the provider may be built and primed as soon as the flags
// are parsed (provider.Provider.EarlyStart): its construction makes no
// call, and its first listing of the VPC's instances then runs while
// upstream's command generates its certificates (measured with it).
const EarlyStart = true

// ConfigType is the cloud config's type: docs/configuration.md's key
// table is rendered from its field comments (hack/configdoc).
var ConfigType = reflect.TypeFor[config.Config]()

func init() {
	cloudprovider.RegisterCloudProvider(ProviderName, func(r io.Reader) (cloudprovider.Interface, error) {
		cfg, err := config.Load(r, os.Getenv)
		if err != nil {
			return nil, err
		}
		return New(cfg)
	})
}

// Cloud is the Tencent Cloud provider.
type Cloud struct {
	cloudbase.V2Only // Instances, Zones, Clusters: not implemented

	cfg       *config.Config
	instances *instances
	routes    *routes        // nil unless a route table is configured (routes.go)
	lb        *loadBalancers // CLB load balancers (loadbalancer.go, run by internal/lb/lbkit)
}

var (
	_ cloudprovider.Interface    = (*Cloud)(nil)
	_ cloudprovider.InformerUser = (*Cloud)(nil)
)

// New builds the provider from a loaded Config, with real SDK clients.
// It makes no API call, except fetching the first temporary credentials
// of a role (credential sources cvm-role and web-identity), which are then
// kept fresh in the background for the life of the process.
func New(cfg *config.Config) (*Cloud, error) {
	opts, err := clientOptions(cfg)
	if err != nil {
		return nil, err
	}
	if opts.Credential, err = startCredentials(context.Background(), cfg, opts.Transport, false); err != nil {
		return nil, err
	}
	clients := tcapi.NewClients(opts)
	cvmClient, err := clients.CVM()
	if err != nil {
		return nil, err
	}
	c := newCloud(cfg, cvmClient)
	if c.routes, err = newRoutes(cfg, clients); err != nil {
		return nil, err
	}
	clbClient, err := clients.CLB()
	if err != nil {
		return nil, err
	}
	vpcClient, err := clients.VPC()
	if err != nil {
		return nil, err
	}
	tagClient, err := clients.Tag()
	if err != nil {
		return nil, err
	}
	c.lb = newLoadBalancers(cfg, clbClient, clbClient, vpcClient, tagClient)
	return c, nil
}

// newCloud wires the provider around the CVM API (the SDK client, or a test wrapper of it).
// One Cloud holds one instance inventory, shared by every controller.
func newCloud(cfg *config.Config, api cvmlookup.API) *Cloud {
	lookup := cvmlookup.New(api, cfg.VpcID)
	inst := newInstances(lookup, cfg.Region, cfg.InstanceCacheTTL, inventoryOn())
	inst.readLagWindow = cfg.ReadLagWindow
	return &Cloud{cfg: cfg, instances: inst}
}

// Initialize hands the load balancers (drift check, subset Events and
// EndpointSlice watch) their Kubernetes client, and starts listing the
// VPC's instances: upstream calls it on the leader just before the
// controllers start, whose first lookups then find the listing under way.
func (c *Cloud) Initialize(b cloudprovider.ControllerClientBuilder, stop <-chan struct{}) {
	c.Prime()
	if c.lb != nil {
		c.lb.Initialize(b, stop)
	}
}

// Prime starts the first listing of the VPC's instances unless one is
// under way or fresh. The binary calls it as soon as its flags are parsed
// when it leads at once (cmd/cloud-controller-manager/earlystart.go), so
// that the listing runs while upstream's command starts.
func (c *Cloud) Prime() { c.instances.prime() }

// LoadBalancer returns the CLB-backed load balancers.
func (c *Cloud) LoadBalancer() (cloudprovider.LoadBalancer, bool) {
	if c.lb == nil {
		return nil, false
	}
	return c.lb, true
}

// InstancesV2 returns the CVM-backed node implementation.
func (c *Cloud) InstancesV2() (cloudprovider.InstancesV2, bool) { return c.instances, true }

// Routes returns the pod routes in the configured route table. Without one
// (no cluster_route_table, route_backend tke) it reports false, and the
// upstream route controller does not start, whatever --configure-cloud-routes
// says.
func (c *Cloud) Routes() (cloudprovider.Routes, bool) {
	if c.routes == nil {
		return nil, false
	}
	return c.routes, true
}

// SetInformers implements cloudprovider.InformerUser. The routes map route
// gateways to nodes through the shared node informer; the CCM calls this
// before it starts the informers.
func (c *Cloud) SetInformers(f informers.SharedInformerFactory) {
	if c.routes != nil {
		c.routes.nodes.set(f.Core().V1().Nodes())
	}
	if c.lb != nil {
		c.lb.SetInformers(f) // Events, the subsets' EndpointSlice watch, the drift check
	}
}

// ProviderName returns "tencentcloud".
func (c *Cloud) ProviderName() string { return ProviderName }

// clientOptions are the SDK clients' options for cfg, with the transport
// that paces every call at the documented (or configured) limits.
func clientOptions(cfg *config.Config) (tcapi.ClientOptions, error) {
	host, scheme, err := cfg.Endpoint()
	if err != nil {
		return tcapi.ClientOptions{}, fmt.Errorf("api_endpoint %q: %w", cfg.APIEndpoint, err)
	}
	return tcapi.ClientOptions{
		Region:   cfg.Region,
		Endpoint: host, Scheme: scheme,
		// One transport for every client: pacing and cool-downs must see
		// every call the process makes with this account.
		Transport: tcapi.NewTransport(transportOptions(cfg.APIRateLimits)),
	}, nil
}

// startCredentials starts the credential source cfg names: one
// credential for every client, refreshed until ctx ends. transport also
// carries STS calls (web-identity), so that they are paced and counted.
func startCredentials(ctx context.Context, cfg *config.Config, transport http.RoundTripper, quiet bool) (*credentials.Credential, error) {
	src, err := credentials.FromConfig(cfg, transport)
	if err != nil {
		return nil, err
	}
	p := credentialPolicy
	p.Quiet = quiet
	return credentials.Start(ctx, ProviderName, src, p)
}

// credentialPolicy is when credentials are refreshed: zero values take the
// credentials package's defaults. Tests shorten it.
var credentialPolicy credentials.Policy

// retryPolicy is the transport's retry policy: zero values take tcapi's
// defaults (4 attempts within 5 s). Tests shorten it.
var retryPolicy tcapi.Options

func transportOptions(limits tcapi.Limits) tcapi.Options {
	o := retryPolicy
	o.Provider, o.Limits = ProviderName, limits
	return o
}
