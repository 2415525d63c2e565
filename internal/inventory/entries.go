package inventory

import (
	"slices"
	"strings"
	"time"
)

// The entries and their indexes: what is held, how old it is, and
// finding it by id, key or predicate.

type entry[T any] struct {
	item    T
	fetched time.Time // when the call that read it started
}

// freshEntry returns the entry for id if it is at most maxAge old.
// Call with mu held.
func (inv *Inventory[T]) freshEntry(id string, maxAge time.Duration) (T, bool) {
	e, ok := inv.entries[id]
	if !ok || inv.opts.Now().Sub(e.fetched) > maxAge {
		var zero T
		return zero, false
	}
	return e.item, true
}

// store keeps item unless a newer answer is already held. Call with mu held.
func (inv *Inventory[T]) store(item T, fetched time.Time) {
	id := inv.src.ID(item)
	if e, ok := inv.entries[id]; ok {
		if e.fetched.After(fetched) {
			return
		}
		inv.remove(id)
	}
	inv.entries[id] = entry[T]{item: item, fetched: fetched}
	for name, keysOf := range inv.src.Indexes {
		for _, key := range keysOf(item) {
			ids := inv.index[name][key]
			if ids == nil {
				ids = map[string]bool{}
				inv.index[name][key] = ids
			}
			ids[id] = true
		}
	}
}

// remove drops an entry and its index keys. Call with mu held.
func (inv *Inventory[T]) remove(id string) {
	e, ok := inv.entries[id]
	if !ok {
		return
	}
	delete(inv.entries, id)
	for name, keysOf := range inv.src.Indexes {
		for _, key := range keysOf(e.item) {
			delete(inv.index[name][key], id)
			if len(inv.index[name][key]) == 0 {
				delete(inv.index[name], key)
			}
		}
	}
}

// scan returns, sorted by id, the entries of the current listing (read by
// it or since) that match. Call with mu held.
func (inv *Inventory[T]) scan(match func(T) bool) []T {
	var out []T
	for _, e := range inv.entries {
		if !e.fetched.Before(inv.listedAt) && match(e.item) {
			out = append(out, e.item)
		}
	}
	inv.sortByID(out)
	return out
}

// lookupKeys returns, sorted by id, the entries of the current listing
// (read by it or since) with any of keys in the index, if they are at most
// maxAge old. It returns nothing when an older entry has one of the keys
// too: that instance may be gone and its key (a private IP) reused, or
// both may hold it (a name), and only the cloud can tell which.
// Call with mu held.
func (inv *Inventory[T]) lookupKeys(index string, keys []string, maxAge time.Duration) []T {
	var out []T
	seen := map[string]bool{}
	now := inv.opts.Now()
	for _, key := range keys {
		for id := range inv.index[index][key] {
			e := inv.entries[id]
			if seen[id] || e.fetched.Before(inv.listedAt) {
				continue
			}
			if now.Sub(e.fetched) > maxAge {
				return nil
			}
			seen[id] = true
			out = append(out, e.item)
		}
	}
	inv.sortByID(out)
	return out
}

func (inv *Inventory[T]) sortByID(items []T) {
	slices.SortFunc(items, func(a, b T) int { return strings.Compare(inv.src.ID(a), inv.src.ID(b)) })
}
