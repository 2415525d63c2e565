package inventory

import "github.com/ccmkit/ccm/internal/ccmmetrics"

// Metrics of the inventory, on the CCM's /metrics.
var (
	inventoryMetrics = ccmmetrics.NewSet("instance_inventory")

	lookups = inventoryMetrics.CounterVec("lookups_total",
		"Instance lookups by kind (id, fresh, match) and result: hit (answered from the inventory) or miss (needed a cloud call, or a listing it joined).",
		"provider", "kind", "result")
	calls = inventoryMetrics.CounterVec("refreshes_total",
		"Refreshes of the inventory by kind (batch: a by-id call; keys: a batch of index keys, e.g. private IPs; list: a full listing, all pages; delta: the instances created since the last listing or delta; direct: a caller's own filtered call) and result (ok, error).",
		"provider", "kind", "result")
	batchSize = inventoryMetrics.HistogramVec("batch_size",
		"Instance ids per batched by-id call, or index keys per key batch.",
		[]float64{1, 2, 5, 10, 20, 50, 100, 200, 500}, "provider")
	entries = inventoryMetrics.GaugeVec("entries", "Instances held by the inventory.", "provider")
)

func registerMetrics() { inventoryMetrics.Register() }
