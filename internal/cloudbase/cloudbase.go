// Package cloudbase is what every provider of this CCM answers the same way:
// in cloudprovider.Interface, the interfaces that InstancesV2 replaced are
// not implemented and no cluster ID is required (a provider embeds V2Only
// and implements the rest); and the rules every cloud's lookups follow
// where a cloud's reads lag its writes (readlag.go: absence is not proof
// of deletion for a young Node; initage.go; reconciled.go: the end of a
// Service's last reconcile, which a shared listing must postdate).
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
