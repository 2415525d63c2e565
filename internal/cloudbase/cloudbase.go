// Package cloudbase is what every provider of this CCM answers the same way
// in cloudprovider.Interface: the interfaces that InstancesV2 replaced are
// not implemented, and no cluster ID is required. A provider embeds V2Only
// and implements the rest.
package cloudbase

import cloudprovider "k8s.io/cloud-provider"

// V2Only answers the legacy parts of cloudprovider.Interface.
type V2Only struct{}

// Instances is not implemented: InstancesV2 replaces it.
func (V2Only) Instances() (cloudprovider.Instances, bool) { return nil, false }

// Zones is not implemented: InstancesV2 reports zones, and upstream does
// not call Zones when InstancesV2 is available.
func (V2Only) Zones() (cloudprovider.Zones, bool) { return nil, false }

// Clusters is not implemented.
func (V2Only) Clusters() (cloudprovider.Clusters, bool) { return nil, false }

// HasClusterID returns true: the providers do not require a cluster ID.
func (V2Only) HasClusterID() bool { return true }
