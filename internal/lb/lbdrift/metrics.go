package lbdrift

import "github.com/ccmkit/ccm/internal/ccmmetrics"

// Metrics of the drift check, for the chart's dashboard and its
// LoadBalancerDriftRecurring alert: the Events say which Service drifted,
// these say how often.
var (
	driftMetrics = ccmmetrics.NewSet("lb_drift")

	checks = driftMetrics.CounterVec("checks_total",
		"Drift check rounds run, by result: ok (every candidate checked) or error (listing failed, or at least one Service could not be checked).",
		"result")
	detected = driftMetrics.Counter("detected_total",
		"Load balancers found drifted from their Service (each one is then re-ensured).")
)

func registerMetrics() { driftMetrics.Register() }
