// Package core is the dialect-neutral heart of cloudsim: the simulated fleet
// of instances, per-action rate limits, fault injection, per-action call
// counters, and the admin HTTP API that drives them.
//
// A dialect (for example package tencent) speaks one cloud's wire protocol.
// It authenticates a request, then asks the Core, in this order:
//
//	if ok, limit := c.Allow(action); !ok { ...answer the cloud's throttling error... }
//	if f, err := c.Fault(ctx, action); f != nil { ...answer the injected error... }
//	...run the action against c.Snapshot() / the fleet...
//	c.Record(CallInfo{Action: action, Code: code, ...})
//
// Actions are plain strings chosen by the dialect. The Tencent dialect uses
// the bare X-TC-Action name ("DescribeInstances"), so rate limits, faults and
// call counts are keyed by it. Dialects whose action names could collide with
// Tencent's (OCI has a CreateLoadBalancer too) should prefix theirs, e.g.
// "oci:CreateLoadBalancer".
//
// Package cloudsim (the parent directory) ties a Core and the dialects
// together behind one http.Handler; most users want that package instead.
package core
