//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The suite may run as several shards at once on one machine (hack/e2eshards,
// `make e2e`), each a process with its own control plane, cloudsim and
// CCMs, and a share of the tests. What they would share is the loopback
// addresses that fake instances, subnets and VIPs bind; so each shard moves
// them apart: the second octet of the suite's 127.A.x.y addresses is
// A + shardStride × shard, and the VIP pool is 127.(240+shard).0.0/16.
// Shard 0 (also the suite run whole) keeps today's addresses.
const (
	shardStride = 16 // octets 0 and 1 are used: shard 13 ends at 209
	maxShards   = 14 // the VIP pools 127.240/16 to 127.253/16
)

// shard is this process's shard: E2E_SHARD, default 0.
var shard = func() int {
	v := os.Getenv("E2E_SHARD")
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n >= maxShards {
		panic(fmt.Sprintf("E2E_SHARD=%q: want a shard number from 0 to %d", v, maxShards-1))
	}
	return n
}()

// shardAddr moves a 127.A.x.y address or prefix to this shard's range.
func shardAddr(addr string) string {
	parts := strings.SplitN(addr, ".", 3)
	a, err := strconv.Atoi(parts[1])
	if len(parts) != 3 || parts[0] != "127" || err != nil || a >= shardStride {
		panic(fmt.Sprintf("shardAddr(%q): want 127.A.x.y with A < %d", addr, shardStride))
	}
	return fmt.Sprintf("127.%d.%s", a+shardStride*shard, parts[2])
}

// publicIP is the public address of the nth instance.
func publicIP(n int32) string {
	return shardAddr(fmt.Sprintf("127.1.%d.%d", n/250, 1+n%250))
}

// shardVIPRange is the pool of this shard's cloudsim VIPs. (The
// preflight scenario's own cloudsims run without a data plane: they bind
// nothing.)
func shardVIPRange() string {
	b := 240 + shard
	return fmt.Sprintf("127.%d.0.1-127.%d.255.254", b, b)
}
