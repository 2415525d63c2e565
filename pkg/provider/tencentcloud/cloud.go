// Package tencentcloud is the Tencent Cloud provider of the
// cloud-controller-manager (--cloud-provider=tencentcloud). It implements
// cloudprovider.Interface; for now InstancesV2 only (nodes on CVM).
package tencentcloud

import (
	"io"
	"os"

	cloudprovider "k8s.io/cloud-provider"
)

// ProviderName is the --cloud-provider name and the providerID scheme.
const ProviderName = "tencentcloud"

func init() {
	cloudprovider.RegisterCloudProvider(ProviderName, func(r io.Reader) (cloudprovider.Interface, error) {
		cfg, err := LoadConfig(r, os.Getenv)
		if err != nil {
			return nil, err
		}
		return New(cfg)
	})
}

// Cloud is the Tencent Cloud provider.
type Cloud struct {
	cfg       *Config
	instances *instances
}

var _ cloudprovider.Interface = (*Cloud)(nil)

// New builds the provider from a loaded Config, with real SDK clients.
// It makes no API call.
func New(cfg *Config) (*Cloud, error) {
	clients, err := newSDK(cfg)
	if err != nil {
		return nil, err
	}
	cvmClient, err := clients.cvm()
	if err != nil {
		return nil, err
	}
	return newCloud(cfg, cvmClient), nil
}

// newCloud wires the provider around an instanceAPI (the SDK, or a fake).
func newCloud(cfg *Config, api instanceAPI) *Cloud {
	return &Cloud{
		cfg: cfg,
		instances: &instances{
			lookup: &instanceLookup{api: api, vpcID: cfg.VpcID},
			region: cfg.Region,
		},
	}
}

// Initialize does nothing: the provider needs no Kubernetes client yet.
func (c *Cloud) Initialize(cloudprovider.ControllerClientBuilder, <-chan struct{}) {}

// LoadBalancer is not implemented yet.
func (c *Cloud) LoadBalancer() (cloudprovider.LoadBalancer, bool) { return nil, false }

// Instances is not implemented: InstancesV2 replaces it.
func (c *Cloud) Instances() (cloudprovider.Instances, bool) { return nil, false }

// InstancesV2 returns the CVM-backed node implementation.
func (c *Cloud) InstancesV2() (cloudprovider.InstancesV2, bool) { return c.instances, true }

// Zones is not implemented: InstancesV2 reports zones, and upstream does
// not call Zones when InstancesV2 is available.
func (c *Cloud) Zones() (cloudprovider.Zones, bool) { return nil, false }

// Clusters is not implemented.
func (c *Cloud) Clusters() (cloudprovider.Clusters, bool) { return nil, false }

// Routes is not implemented yet.
func (c *Cloud) Routes() (cloudprovider.Routes, bool) { return nil, false }

// ProviderName returns "tencentcloud".
func (c *Cloud) ProviderName() string { return ProviderName }

// HasClusterID returns true: the provider does not require a cluster ID.
func (c *Cloud) HasClusterID() bool { return true }
