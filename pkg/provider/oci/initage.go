package oci

import (
	"time"

	v1 "k8s.io/api/core/v1"
	cloudapi "k8s.io/cloud-provider/api"
)

// maxInitAge caps how old a read may be for initializing a node that has
// waited long for it (see metadataAge): the status sync corrects what is
// stale within its period (upstream's default: 5 minutes).
const maxInitAge = 5 * time.Minute

// metadataAge is how old the instance and address reads may be for the
// node's InstanceMetadata at now. It is the cache TTL, except for a node
// still waiting for initialization (the uninitialized taint): a read made
// after the Node registered describes the machine it registered from, so
// it serves, up to maxInitAge, however long the node waited in upstream's
// queue. Without this, initializing thousands of nodes that takes longer
// than the TTL (5,000 nodes on a loaded machine) lists the compartment a
// second time for the nodes processed last: about 100 more calls, and the
// wait for that listing.
func (i *instances) metadataAge(node *v1.Node, now time.Time) time.Duration {
	age := i.metadataMaxAge
	if age <= 0 || node.CreationTimestamp.IsZero() || !uninitialized(node) {
		return age
	}
	return max(age, min(now.Sub(node.CreationTimestamp.Time), maxInitAge))
}

// uninitialized: the node still has the cloud provider's uninitialized
// taint, which the node controller removes once InstanceMetadata answered.
func uninitialized(node *v1.Node) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == cloudapi.TaintExternalCloudProvider {
			return true
		}
	}
	return false
}
