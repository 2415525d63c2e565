package oci

import (
	"encoding/json"
	"net/http"
)

// targetKeys are the path (or query) parameters naming the resource a
// request acts on, most specific first.
var targetKeys = []string{"instanceId", "vnicId", "nsgId", "securityListId", "subnetId", "vcnId",
	"loadBalancerId", "nlbId", "publicIpId", "workRequestId"}

// targetCompartment is the compartment a request acts in, which policy
// locations are evaluated against: the compartmentId it names (the query
// of a list, the body of a create), else the compartment of the resource
// it names. "" when unknown (say, GetPublicIpByIpAddress, or a resource
// that does not exist): locations are then not evaluated, cloudsim's
// choice (a missing resource answers 404 anyway).
func (d *Dialect) targetCompartment(r *http.Request, body []byte) string {
	if c := r.URL.Query().Get("compartmentId"); c != "" {
		return c
	}
	if len(body) > 0 {
		var b struct {
			CompartmentID string `json:"compartmentId"`
		}
		if json.Unmarshal(body, &b) == nil && b.CompartmentID != "" {
			return b.CompartmentID
		}
	}
	for _, key := range targetKeys {
		id := r.PathValue(key)
		if id == "" {
			id = r.URL.Query().Get(key)
		}
		if id != "" {
			return d.compartmentOf(key, id)
		}
	}
	return ""
}

// compartmentOf looks the resource named by key up ("" when unknown).
func (d *Dialect) compartmentOf(key, id string) string {
	switch key {
	case "instanceId", "vnicId":
		if key == "vnicId" {
			id = instanceOfVnic(id)
		}
		if rec, err := d.instanceRecord(id); err == nil {
			return d.placementOf(rec).compartment
		}
	case "subnetId":
		if s, ok := d.net.subnet(id); ok {
			return s.CompartmentID
		}
	case "vcnId", "securityListId":
		d.net.mu.Lock()
		defer d.net.mu.Unlock()
		if v := d.net.vcns[id]; v != nil {
			return v.CompartmentID
		}
		if s := d.net.secLists[id]; s != nil {
			return s.CompartmentID
		}
	case "nsgId":
		d.nsgs.mu.Lock()
		defer d.nsgs.mu.Unlock()
		if n := d.nsgs.byID[id]; n != nil {
			return n.CompartmentID
		}
	case "loadBalancerId", "nlbId":
		d.lbs.mu.Lock()
		defer d.lbs.mu.Unlock()
		if b := d.lbs.byID[id]; b != nil {
			return b.compartmentID
		}
	case "publicIpId":
		d.pips.mu.Lock()
		defer d.pips.mu.Unlock()
		if p := d.pips.byID[id]; p != nil {
			return p.compartmentID
		}
	case "workRequestId":
		d.wrs.mu.Lock()
		defer d.wrs.mu.Unlock()
		if w := d.wrs.byID[id]; w != nil {
			return w.compartmentID
		}
	}
	return ""
}
