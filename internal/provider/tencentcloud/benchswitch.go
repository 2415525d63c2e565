package tencentcloud

import "os"

// EnvBenchInventoryOff, set to "1", turns every shared cloud listing off:
// one call per instance and CLB lookup, as upstream makes. It is the
// benchmark's baseline (bench/nodes: what the inventory saves), not a
// setting: no config key and no documented variable; nothing but the
// bench sets it.
const EnvBenchInventoryOff = "CCMKIT_BENCH_INVENTORY_OFF"

// inventoryOn reports whether the lookups share listings (always, but
// under the benchmark's baseline).
func inventoryOn() bool { return os.Getenv(EnvBenchInventoryOff) != "1" }
