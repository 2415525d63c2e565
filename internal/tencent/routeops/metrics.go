package routeops

import "github.com/ccmkit/ccm/internal/ccmmetrics"

// Metrics of the route operations, served on the CCM's /metrics next to
// the per-call cloud API metrics: these say what the calls were for.
var (
	routeMetrics = ccmmetrics.NewSet("routes")

	cacheReads = routeMetrics.CounterVec("table_reads_total",
		"Route list requests, by source: cache (served without a call) or cloud (the table was read).",
		"source")
	operations = routeMetrics.CounterVec("operations_total",
		"Route operations asked by the route controller, by operation (list, create, delete) and result (ok, skipped: already there, error).",
		"operation", "result")
	managedRoutes = routeMetrics.Gauge("managed",
		"Routes of this cluster in the route table at the last list, including those of deleted nodes.")
	orphansReclaimed = routeMetrics.Counter("orphans_reclaimed_total",
		"Routes found orphaned (inside the cluster CIDR, no node and no live instance with the gateway) and made the CCM's to delete.")
	vpcConflicts = routeMetrics.Gauge("cluster_cidr_overlaps_vpc",
		"1 if the cluster CIDR overlaps the VPC's CIDRs (checked at start-up), so that routes inside the VPC's range are refused; 0 if not.")
)

func registerMetrics() { routeMetrics.Register() }

// tag prefixes a method's error with its op, as the operations metrics
// and log lines name it (ccmmetrics.Op).
func tag(op ccmmetrics.Op, errp *error) {
	if *errp != nil {
		*errp = op.Errorf("%w", *errp)
	}
}

// observe counts one operation's outcome.
func observe(operation string, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	operations.WithLabelValues(operation, result).Inc()
}
