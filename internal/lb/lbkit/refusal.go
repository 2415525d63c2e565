package lbkit

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
)

// RefusalError is an ops layer's answer when the Service's load balancer
// found in the cloud cannot be taken over (an incumbent CCM's, made where
// this CCM cannot manage it), or when one probably exists that the lookup
// cannot name: the sync fails with it and creates nothing, since a second,
// billed load balancer with a new address behind the user's back is the
// failure to avoid. lbkit records it as a Warning Event with Reason (the
// service controller's SyncLoadBalancerFailed Event carries the same
// message); Plan reports it as VerdictRefuse.
type RefusalError struct {
	// Reason is the Event's reason, e.g. "LoadBalancerNotTakenOver".
	Reason string
	// Message says why, and what the user does to go on.
	Message string
}

func (e *RefusalError) Error() string { return e.Message }

// refusal records err's Warning Event when it is (or wraps) a
// RefusalError, and returns err unchanged.
func (l *LoadBalancer[D]) refusal(svc *corev1.Service, err error) error {
	var r *RefusalError
	if errors.As(err, &r) {
		l.warn(svc, []Warning{{Reason: r.Reason, Message: r.Message}})
	}
	return err
}
