package cloudbase

import (
	"time"

	v1 "k8s.io/api/core/v1"
	cloudapi "k8s.io/cloud-provider/api"
)

// MaxInitAge caps how old a read may be for initializing a node that has
// waited long for it (see MetadataAge): the status sync corrects what is
// stale within its period (upstream's default: 5 minutes).
const MaxInitAge = 5 * time.Minute

// MetadataAge is how old the instance and address reads may be for node's
// InstanceMetadata at now, given the cache TTL. It is the TTL, except for a
// node still waiting for initialization (the uninitialized taint): a read
// made after the Node registered describes the machine it registered from,
// so it serves, up to MaxInitAge, however long the node waited in
// upstream's queue. Without this, initializing thousands of nodes for
// longer than the TTL lists the cloud a second time for the nodes handled
// last (5,000 nodes: about 100 more calls, and the wait for that listing).
// A TTL of 0 (caching off) stays 0.
func MetadataAge(node *v1.Node, ttl time.Duration, now time.Time) time.Duration {
	if ttl <= 0 || node.CreationTimestamp.IsZero() || !Uninitialized(node) {
		return ttl
	}
	return max(ttl, min(now.Sub(node.CreationTimestamp.Time), MaxInitAge))
}

// Uninitialized: the node still has the cloud provider's uninitialized
// taint, which the node controller removes once InstanceMetadata answered.
func Uninitialized(node *v1.Node) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == cloudapi.TaintExternalCloudProvider {
			return true
		}
	}
	return false
}
