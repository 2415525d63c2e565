package routeops

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Metrics of the route operations, served on the CCM's /metrics next to
// the per-call ones of internal/tcapi: these say what the calls were for.
var (
	cacheReads = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      "ccmkit",
		Subsystem:      "routes",
		Name:           "table_reads_total",
		Help:           "Route list requests, by source: cache (served without a call) or cloud (the table was read).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"source"})

	operations = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      "ccmkit",
		Subsystem:      "routes",
		Name:           "operations_total",
		Help:           "Route operations asked by the route controller, by operation (list, create, delete) and result (ok, skipped: already there, error).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"operation", "result"})

	managedRoutes = metrics.NewGauge(&metrics.GaugeOpts{
		Namespace:      "ccmkit",
		Subsystem:      "routes",
		Name:           "managed",
		Help:           "Routes of this cluster in the route table at the last list, including those of deleted nodes.",
		StabilityLevel: metrics.ALPHA,
	})

	orphansReclaimed = metrics.NewCounter(&metrics.CounterOpts{
		Namespace:      "ccmkit",
		Subsystem:      "routes",
		Name:           "orphans_reclaimed_total",
		Help:           "Routes found orphaned (inside the cluster CIDR, no node and no live instance with the gateway) and made the CCM's to delete.",
		StabilityLevel: metrics.ALPHA,
	})

	vpcConflicts = metrics.NewGauge(&metrics.GaugeOpts{
		Namespace:      "ccmkit",
		Subsystem:      "routes",
		Name:           "cluster_cidr_overlaps_vpc",
		Help:           "1 if the cluster CIDR overlaps the VPC's CIDRs (checked at start-up), so that routes inside the VPC's range are refused; 0 if not.",
		StabilityLevel: metrics.ALPHA,
	})
)

var registerOnce sync.Once

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(cacheReads, operations, managedRoutes, orphansReclaimed, vpcConflicts)
	})
}

// observe counts one operation's outcome.
func observe(operation string, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	operations.WithLabelValues(operation, result).Inc()
}
