// Package lbsubset chooses which nodes back a Service's load balancer when
// the cloud limits the backends per listener (Tencent CLB's
// TOTAL_TARGET_BIND_QUOTA, 100 by default; OCI's backends per backend set
// and per load balancer) and the cluster has more eligible nodes.
//
// Select is the choice itself, a pure function: rendezvous
// (highest-random-weight) hashing of (Service UID, node name), balanced
// across zones. Each Service ranks the nodes in its own pseudo-random order,
// so different Services spread over different nodes, and a node joining or
// leaving moves at most one target. Subsetter applies it to a Service: it
// narrows externalTrafficPolicy Local Services to the nodes that run a ready
// endpoint (from EndpointSlices), records a Normal Event when subsetting
// starts, changes size or stops, and asks for a re-ensure when a Local
// Service's endpoint nodes change (watch.go).
package lbsubset

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"slices"
)

// Select returns at most limit of items, chosen deterministically for key
// (a Service UID) and in their input order. node gives an item's node name
// and zone. A limit of 0 or less, or one at least len(items), keeps every
// item.
//
// The choice: each zone gets a share of the limit as even as its size
// allows (a zone with fewer nodes than its share gives all of them, and the
// rest is shared among the others, so shares differ by at most one between
// zones that are not exhausted); the zones that get one more than the others
// are chosen by their own rendezvous score for key, so that Services spread
// their extra targets over different zones. Within a zone, the nodes with
// the highest rendezvous score for key win.
//
// Adding or removing one node changes at most one chosen node (plus the node
// itself when it is the one removed): zone shares depend only on zone
// sizes, which change by one, and a rendezvous ranking is unchanged by
// other nodes coming and going.
func Select[T any](items []T, key string, limit int, node func(T) (name, zone string)) []T {
	if limit <= 0 || len(items) <= limit {
		return items
	}
	type zoneGroup struct {
		zone    string
		members []int // indices into items, best score first
		quota   int
		rank    uint64
	}
	byZone := map[string]*zoneGroup{}
	scores := make([]uint64, len(items))
	names := make([]string, len(items))
	var groups []*zoneGroup
	for i, it := range items {
		name, zone := node(it)
		names[i], scores[i] = name, score(key, "node", name)
		g := byZone[zone]
		if g == nil {
			g = &zoneGroup{zone: zone, rank: score(key, "zone", zone)}
			byZone[zone] = g
			groups = append(groups, g)
		}
		g.members = append(g.members, i)
	}
	for _, g := range groups {
		slices.SortFunc(g.members, func(a, b int) int {
			if c := cmp.Compare(scores[b], scores[a]); c != 0 {
				return c
			}
			return cmp.Compare(names[a], names[b])
		})
	}

	// Water-filling: smallest zones first; a zone that fits in its share
	// gives all its nodes, and what it leaves is shared by the rest.
	slices.SortFunc(groups, func(a, b *zoneGroup) int {
		if c := cmp.Compare(len(a.members), len(b.members)); c != 0 {
			return c
		}
		return cmp.Compare(a.zone, b.zone)
	})
	remaining := limit
	for i, g := range groups {
		left := len(groups) - i
		share := remaining / left
		if len(g.members) <= share {
			g.quota = len(g.members)
			remaining -= g.quota
			continue
		}
		// Every zone from here on has more nodes than share.
		rest := groups[i:]
		for _, h := range rest {
			h.quota = share
		}
		extra := remaining - share*left
		slices.SortFunc(rest, func(a, b *zoneGroup) int {
			if c := cmp.Compare(b.rank, a.rank); c != 0 {
				return c
			}
			return cmp.Compare(a.zone, b.zone)
		})
		for _, h := range rest[:extra] {
			h.quota++
		}
		break
	}

	chosen := make([]bool, len(items))
	for _, g := range groups {
		for _, i := range g.members[:g.quota] {
			chosen[i] = true
		}
	}
	out := make([]T, 0, limit)
	for i, it := range items {
		if chosen[i] {
			out = append(out, it)
		}
	}
	return out
}

// score is the rendezvous weight of one node (or zone) for one key.
func score(key, kind, name string) uint64 {
	h := sha256.New()
	for _, s := range []string{key, kind, name} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return binary.BigEndian.Uint64(h.Sum(nil))
}
