package inventory

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Metrics of the inventory, on the legacy registry (the CCM's /metrics).
var (
	lookups = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      "ccmkit",
		Subsystem:      "instance_inventory",
		Name:           "lookups_total",
		Help:           "Instance lookups by kind (id, fresh, match) and result: hit (answered from the inventory) or miss (needed a cloud call, or a listing it joined).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"provider", "kind", "result"})

	calls = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      "ccmkit",
		Subsystem:      "instance_inventory",
		Name:           "refreshes_total",
		Help:           "Refreshes of the inventory by kind (batch: a by-id call; keys: a batch of index keys, e.g. private IPs; list: a full listing, all pages; direct: a caller's own filtered call) and result (ok, error).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"provider", "kind", "result"})

	batchSize = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace:      "ccmkit",
		Subsystem:      "instance_inventory",
		Name:           "batch_size",
		Help:           "Instance ids per batched by-id call, or index keys per key batch.",
		Buckets:        []float64{1, 2, 5, 10, 20, 50, 100, 200, 500},
		StabilityLevel: metrics.ALPHA,
	}, []string{"provider"})

	entries = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace:      "ccmkit",
		Subsystem:      "instance_inventory",
		Name:           "entries",
		Help:           "Instances held by the inventory.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"provider"})
)

var registerOnce sync.Once

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(lookups, calls, batchSize, entries)
	})
}
