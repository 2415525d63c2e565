package lbdrift

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Metrics of the drift check, for the chart's dashboard and its
// LoadBalancerDriftRecurring alert: the Events say which Service drifted,
// these say how often.
var (
	checks = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      "ccmkit",
		Subsystem:      "lb_drift",
		Name:           "checks_total",
		Help:           "Drift check rounds run, by result: ok (every candidate checked) or error (listing failed, or at least one Service could not be checked).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})

	detected = metrics.NewCounter(&metrics.CounterOpts{
		Namespace:      "ccmkit",
		Subsystem:      "lb_drift",
		Name:           "detected_total",
		Help:           "Load balancers found drifted from their Service (each one is then re-ensured).",
		StabilityLevel: metrics.ALPHA,
	})
)

var registerOnce sync.Once

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(checks, detected)
	})
}
