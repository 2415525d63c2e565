// Package oci is the Oracle Cloud Infrastructure provider of the
// cloud-controller-manager (--cloud-provider=oci): InstancesV2 on OCI
// Compute (instances and their VNICs) and LoadBalancer on the OCI Load
// Balancer (flexible shape) and Network Load Balancer services.
//
// It reads the public OCI cloud-controller-manager's cloud-provider.yaml
// (internal/oci/config), talks to OCI only through the official SDK
// (github.com/oracle/oci-go-sdk/v65, internal/oci/ociapi), and keeps the interface
// layer thin: instances.go maps nodes, loadbalancer.go translates a Service
// into the provider-neutral spec and hands it to internal/oci/lbops.
package oci

import (
	"io"
	"reflect"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccm/internal/cloudbase"
	"github.com/ccmkit/ccm/internal/lb/lbkit"
	"github.com/ccmkit/ccm/internal/oci/computelookup"
	"github.com/ccmkit/ccm/internal/oci/config"
	"github.com/ccmkit/ccm/internal/oci/ociapi"
	"github.com/ccmkit/ccm/internal/oci/ociauth"
)

// ProviderName is the --cloud-provider name and the providerID scheme.
const ProviderName = "oci"

// ConfigFile is the cloud config's file name where one is chosen for it,
// as the chart's default Secret key (the public OCI
// cloud-controller-manager's name for it).
const ConfigFile = "cloud-provider.yaml"

// ConfigType is the cloud config's type: docs/configuration.md's key
// table is rendered from its field comments (hack/configdoc).
var ConfigType = reflect.TypeFor[config.Config]()

func init() {
	cloudprovider.RegisterCloudProvider(ProviderName, func(r io.Reader) (cloudprovider.Interface, error) {
		cfg, err := config.Load(r)
		if err != nil {
			return nil, err
		}
		return New(cfg)
	})
}

// Cloud is the OCI provider.
type Cloud struct {
	cloudbase.V2Only // Instances, Zones, Clusters: not implemented

	cfg       *config.Config
	creds     ociauth.Source // what every request is signed with (credentials.go)
	instances *instances
	lb        *loadBalancers // nil when loadBalancer.disabled (loadbalancer.go, run by internal/lb/lbkit)
	secrets   *tlsSecrets    // the load balancers' TLS Secrets (tls.go)
}

var (
	_ cloudprovider.Interface    = (*Cloud)(nil)
	_ cloudprovider.InformerUser = (*Cloud)(nil)
)

// New builds the provider from a loaded Config, with real SDK clients. It
// makes no API call, except, with instance principals, those that get the
// first security token (and the region, unless configured).
func New(cfg *config.Config) (*Cloud, error) {
	creds, err := newCredentials(cfg, startupBudget, nil)
	if err != nil {
		return nil, err
	}
	c, err := ociapi.New(clientOptions(cfg, creds))
	if err != nil {
		return nil, err
	}
	reader := computelookup.New(c.Compute, c.Network, cfg.Compartment, cfg.VCN)
	cloud := &Cloud{cfg: cfg, creds: creds, instances: newInstances(reader, cfg.Auth.Region, cfg.InstanceCacheTTL), secrets: &tlsSecrets{}}
	cloud.instances.readLagWindow = cfg.ReadLagWindow
	if !cfg.LoadBalancer.Disabled {
		cloud.lb = newLoadBalancers(cfg, c, cloud.secrets)
	}
	return cloud, nil
}

// Initialize starts keeping the credentials fresh, starts listing the
// compartment's instances and their primary VNICs (upstream calls it on the
// leader just before the controllers start, whose first lookups then find
// the listings under way), and hands the load balancers (Events, subset
// EndpointSlice watch, drift check) their Kubernetes client.
func (c *Cloud) Initialize(b cloudprovider.ControllerClientBuilder, stop <-chan struct{}) {
	runCredentials(c.creds, stop)
	c.instances.prime()
	if c.lb != nil {
		c.lb.Initialize(b, stop) // with its client, the TLS Secrets are read
	}
}

// SetInformers implements cloudprovider.InformerUser: the load balancers
// watch EndpointSlices and check drift on the shared informers. The CCM
// calls it after Initialize and before it starts the informers.
func (c *Cloud) SetInformers(f informers.SharedInformerFactory) {
	if c.lb != nil {
		c.lb.SetInformers(f)
	}
}

// LoadBalancer returns the LB/NLB implementation unless
// loadBalancer.disabled is set.
func (c *Cloud) LoadBalancer() (cloudprovider.LoadBalancer, bool) {
	if c.lb == nil {
		return nil, false
	}
	return c.lb, true
}

// The load balancers plan (`cloud-controller-manager adopt`) and read the
// TLS Secrets with the client adopt gives them.
var (
	_ lbkit.PlanSource                                 = (*loadBalancers)(nil)
	_ interface{ UseKubeClient(kubernetes.Interface) } = (*loadBalancers)(nil)
)

// InstancesV2 returns the Compute-backed node implementation.
func (c *Cloud) InstancesV2() (cloudprovider.InstancesV2, bool) { return c.instances, true }

// Routes is not implemented: OCI clusters use VCN-native pod networking
// or an overlay, as with the public OCI CCM.
func (c *Cloud) Routes() (cloudprovider.Routes, bool) { return nil, false }

// ProviderName returns "oci".
func (c *Cloud) ProviderName() string { return ProviderName }

// clientOptions are the SDK clients' options for cfg, signing with creds.
func clientOptions(cfg *config.Config, creds ociauth.Source) ociapi.Options {
	o := ociapi.Options{
		Tenancy: cfg.Auth.Tenancy, Region: cfg.Auth.Region, Credentials: creds,
		Endpoint: cfg.Endpoint,
		Limits:   ociapi.Limits{Disabled: cfg.RateLimiter.DisableRateLimiter, ReadPerOperation: cfg.RateLimiter.ReadPerOperation()},
	}
	o.Limits.ReadQPS, o.Limits.ReadBurst = cfg.RateLimiter.ReadLimit()
	o.Limits.WriteQPS, o.Limits.WriteBurst = cfg.RateLimiter.WriteLimit()
	return o
}
