package lbops

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
)

// The per-Service options of issue 14 item 6 that lbops applies: tags at
// creation and the status' ipMode. The backend set policy needs nothing
// here: Settings.Policy is compared and updated like the rest of a backend
// set (plan).

// createFreeformTags are a new load balancer's freeform tags: the
// Service's initial ones with ours over them, since ours find it again.
func createFreeformTags(d *Desired) map[string]string {
	tags := maps.Clone(d.InitialFreeformTags)
	if tags == nil {
		tags = map[string]string{}
	}
	maps.Copy(tags, freeformTags(d))
	return tags
}

// withIPMode sets every ingress' ipMode (oci.oraclecloud.com/ingress-ip-mode);
// "" leaves the status as it is (Kubernetes reads no ipMode as VIP).
func withIPMode(st *corev1.LoadBalancerStatus, mode corev1.LoadBalancerIPMode) *corev1.LoadBalancerStatus {
	if st == nil || mode == "" {
		return st
	}
	for i := range st.Ingress {
		st.Ingress[i].IPMode = &mode
	}
	return st
}
