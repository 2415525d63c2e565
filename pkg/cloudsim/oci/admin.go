package oci

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// LoadBalancer is a load balancer or network load balancer as the admin
// API shows it: one neutral shape for both kinds, so that tests can check
// either the same way.
type LoadBalancer struct {
	ID             string            `json:"id"`
	Kind           string            `json:"kind"` // "loadbalancer" or "networkloadbalancer"
	CompartmentID  string            `json:"compartmentId"`
	DisplayName    string            `json:"displayName"`
	LifecycleState string            `json:"lifecycleState"`
	Shape          string            `json:"shape,omitempty"` // LB only
	MinMbps        int               `json:"minimumBandwidthInMbps,omitempty"`
	MaxMbps        int               `json:"maximumBandwidthInMbps,omitempty"`
	IsPrivate      bool              `json:"isPrivate"`
	SubnetIDs      []string          `json:"subnetIds"`
	NSGIDs         []string          `json:"networkSecurityGroupIds,omitempty"`
	IPAddress      string            `json:"ipAddress"` // the VIP; traffic to it reaches the backends once ACTIVE
	Listeners      []Listener        `json:"listeners"`
	BackendSets    []BackendSet      `json:"backendSets"`
	FreeformTags   map[string]string `json:"freeformTags,omitempty"`
	TimeCreated    time.Time         `json:"timeCreated"`
	Busy           string            `json:"busy,omitempty"` // the operation of the work request in flight
}

// Listener is a listener of either kind.
type Listener struct {
	Name                  string `json:"name"`
	Protocol              string `json:"protocol"`
	Port                  int    `json:"port"`
	DefaultBackendSetName string `json:"defaultBackendSetName"`
	IdleTimeoutSeconds    int64  `json:"idleTimeoutSeconds,omitempty"`
	ProxyProtocolVersion  int    `json:"proxyProtocolVersion,omitempty"`
}

// BackendSet is a backend set of either kind.
type BackendSet struct {
	Name          string        `json:"name"`
	Policy        string        `json:"policy"`
	HealthChecker HealthChecker `json:"healthChecker"`
	Backends      []Backend     `json:"backends"`
}

// HealthChecker is a backend set's health check.
type HealthChecker struct {
	Protocol         string `json:"protocol"`
	Port             int    `json:"port"` // 0: the backend's port
	URLPath          string `json:"urlPath,omitempty"`
	ReturnCode       int    `json:"returnCode,omitempty"`
	Retries          int    `json:"retries"`
	IntervalInMillis int    `json:"intervalInMillis"`
	TimeoutInMillis  int    `json:"timeoutInMillis"`
}

// Backend is one backend: an address (or an NLB target instance) and port.
type Backend struct {
	Name      string `json:"name"`
	IPAddress string `json:"ipAddress,omitempty"`
	TargetID  string `json:"targetId,omitempty"`
	Port      int    `json:"port"`
	Weight    int    `json:"weight"`
	Drain     bool   `json:"drain,omitempty"`
	Backup    bool   `json:"backup,omitempty"`
	Offline   bool   `json:"offline,omitempty"`
}

// KeyBody is the body of POST /admin/oci/keys.
type KeyBody struct {
	KeyID     string `json:"keyId"`     // "<tenancy OCID>/<user OCID>/<fingerprint>"
	PublicKey string `json:"publicKey"` // PEM
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func (d *Dialect) view(b *balancer) LoadBalancer {
	v := LoadBalancer{
		ID: b.id, Kind: kindName(b.kind), CompartmentID: b.compartmentID, DisplayName: b.displayName,
		LifecycleState: b.lifecycle, Shape: b.shapeName, IsPrivate: b.isPrivate, SubnetIDs: slices.Clone(b.subnetIDs), NSGIDs: slices.Clone(b.nsgIDs),
		FreeformTags: maps.Clone(b.freeformTags), TimeCreated: b.created, Listeners: []Listener{}, BackendSets: []BackendSet{},
	}
	if b.vip.IsValid() && b.lifecycle != stateDeleted {
		v.IPAddress = b.vip.String()
	}
	if b.shapeDetails != nil {
		v.MinMbps, v.MaxMbps = deref(b.shapeDetails.MinimumBandwidthInMbps), deref(b.shapeDetails.MaximumBandwidthInMbps)
	}
	if h, busy := d.tasks.Busy(busyKey(b.id)); busy {
		v.Busy = h
	}
	if b.kind == kindLB {
		for _, name := range slices.Sorted(maps.Keys(b.listeners)) {
			l := b.listeners[name]
			lv := Listener{Name: name, Protocol: deref(l.Protocol), Port: deref(l.Port), DefaultBackendSetName: deref(l.DefaultBackendSetName)}
			if cc := l.ConnectionConfiguration; cc != nil {
				lv.IdleTimeoutSeconds, lv.ProxyProtocolVersion = deref(cc.IdleTimeout), deref(cc.BackendTcpProxyProtocolVersion)
			}
			v.Listeners = append(v.Listeners, lv)
		}
		for _, name := range slices.Sorted(maps.Keys(b.backendSets)) {
			bs := b.backendSets[name]
			bv := BackendSet{Name: name, Policy: deref(bs.Policy), Backends: []Backend{}}
			if hc := bs.HealthChecker; hc != nil {
				bv.HealthChecker = HealthChecker{Protocol: deref(hc.Protocol), Port: deref(hc.Port), URLPath: deref(hc.UrlPath),
					ReturnCode: deref(hc.ReturnCode), Retries: deref(hc.Retries), IntervalInMillis: deref(hc.IntervalInMillis), TimeoutInMillis: deref(hc.TimeoutInMillis)}
			}
			for _, be := range bs.Backends {
				bv.Backends = append(bv.Backends, Backend{Name: deref(be.Name), IPAddress: deref(be.IpAddress), Port: deref(be.Port),
					Weight: deref(be.Weight), Drain: deref(be.Drain), Backup: deref(be.Backup), Offline: deref(be.Offline)})
			}
			v.BackendSets = append(v.BackendSets, bv)
		}
		return v
	}
	for _, name := range slices.Sorted(maps.Keys(b.nlbListeners)) {
		l := b.nlbListeners[name]
		v.Listeners = append(v.Listeners, Listener{Name: name, Protocol: string(l.Protocol), Port: deref(l.Port),
			DefaultBackendSetName: deref(l.DefaultBackendSetName), IdleTimeoutSeconds: int64(deref(l.TcpIdleTimeout)), ProxyProtocolVersion: nlbProxyProtocol(l)})
	}
	for _, name := range slices.Sorted(maps.Keys(b.nlbBackendSets)) {
		bs := b.nlbBackendSets[name]
		bv := BackendSet{Name: name, Policy: string(bs.Policy), Backends: []Backend{}}
		if hc := bs.HealthChecker; hc != nil {
			bv.HealthChecker = HealthChecker{Protocol: string(hc.Protocol), Port: deref(hc.Port), URLPath: deref(hc.UrlPath),
				ReturnCode: deref(hc.ReturnCode), Retries: deref(hc.Retries), IntervalInMillis: deref(hc.IntervalInMillis), TimeoutInMillis: deref(hc.TimeoutInMillis)}
		}
		for _, be := range bs.Backends {
			bv.Backends = append(bv.Backends, Backend{Name: deref(be.Name), IPAddress: deref(be.IpAddress), TargetID: deref(be.TargetId),
				Port: deref(be.Port), Weight: deref(be.Weight), Drain: deref(be.IsDrain), Backup: deref(be.IsBackup), Offline: deref(be.IsOffline)})
		}
		v.BackendSets = append(v.BackendSets, bv)
	}
	return v
}

// ---- Go API (used by package cloudsim and the admin API) ----

// AddKey registers an API signing key.
func (d *Dialect) AddKey(keyID, publicKeyPEM string) (Key, error) {
	k, err := d.keys.add(keyID, publicKeyPEM)
	if err != nil {
		return Key{}, fmt.Errorf("%w: %v", core.ErrInvalid, err)
	}
	return k, nil
}

// RemoveKey unregisters an API signing key.
func (d *Dialect) RemoveKey(keyID string) error {
	if !d.keys.remove(keyID) {
		return fmt.Errorf("OCI API key %q: %w", keyID, core.ErrNotFound)
	}
	return nil
}

// Keys lists the registered API signing keys (never the keys themselves).
func (d *Dialect) Keys() []Key { return d.keys.list() }

// SeedNetwork adds compartments, availability domains, VCNs, subnets and
// security lists, all or none.
func (d *Dialect) SeedNetwork(s NetworkSeed) (NetworkState, error) {
	if err := d.seedNetwork(s); err != nil {
		return NetworkState{}, err
	}
	return d.Network(), nil
}

// Network returns the whole network.
func (d *Dialect) Network() NetworkState {
	st := d.net.state()
	st.NetworkSecurityGroups = d.nsgs.export()
	return st
}

// LoadBalancers lists load balancers of both kinds (DELETED ones while they
// are retained), oldest first.
func (d *Dialect) LoadBalancers() []LoadBalancer {
	now := d.core.Now()
	var out []LoadBalancer
	for _, kind := range []string{kindLB, kindNLB} {
		for _, b := range d.lbs.list(kind, "", now, d.retention) {
			out = append(out, d.view(b))
		}
	}
	slices.SortStableFunc(out, func(a, b LoadBalancer) int { return a.TimeCreated.Compare(b.TimeCreated) })
	if out == nil {
		out = []LoadBalancer{}
	}
	return out
}

func (d *Dialect) find(id string) (*balancer, error) {
	for _, kind := range []string{kindLB, kindNLB} {
		if b, err := d.lbs.get(id, kind, d.core.Now(), d.retention); err == nil {
			return b, nil
		}
	}
	return nil, fmt.Errorf("OCI load balancer %q: %w", id, core.ErrNotFound)
}

// LoadBalancer returns one load balancer of either kind.
func (d *Dialect) LoadBalancer(id string) (LoadBalancer, error) {
	b, err := d.find(id)
	if err != nil {
		return LoadBalancer{}, err
	}
	return d.view(b), nil
}

// DeleteLoadBalancer deletes a load balancer out of band, at once, as
// another tool would: it is DELETED without a work request.
func (d *Dialect) DeleteLoadBalancer(id string) error {
	d.lbs.mu.Lock()
	defer d.lbs.mu.Unlock()
	b := d.lbs.byID[id]
	if b == nil || b.lifecycle == stateDeleted {
		return fmt.Errorf("OCI load balancer %q: %w", id, core.ErrNotFound)
	}
	d.deleteLocked(b)
	return nil
}

// DeleteListener deletes a listener out of band, at once (drift).
func (d *Dialect) DeleteListener(lbID, name string) error {
	d.lbs.mu.Lock()
	defer d.lbs.mu.Unlock()
	b := d.lbs.byID[lbID]
	if b == nil || b.lifecycle == stateDeleted {
		return fmt.Errorf("OCI load balancer %q: %w", lbID, core.ErrNotFound)
	}
	_, inLB := b.listeners[name]
	_, inNLB := b.nlbListeners[name]
	if !inLB && !inNLB {
		return fmt.Errorf("listener %q of OCI load balancer %s: %w", name, lbID, core.ErrNotFound)
	}
	next := b.clone()
	delete(next.listeners, name)
	delete(next.nlbListeners, name)
	next.version++
	d.lbs.byID[lbID] = next
	d.syncPlaneLocked(next)
	return nil
}

// FailLoadBalancer turns a load balancer FAILED out of band, as OCI does
// when one breaks: it serves no traffic, and the only way on is to delete
// it (cloudsim's model of the lifecycle in LoadBalancer's models.go).
func (d *Dialect) FailLoadBalancer(id string) error {
	d.lbs.mu.Lock()
	defer d.lbs.mu.Unlock()
	b := d.lbs.byID[id]
	if b == nil || b.lifecycle == stateDeleted {
		return fmt.Errorf("OCI load balancer %q: %w", id, core.ErrNotFound)
	}
	next := b.clone()
	next.lifecycle, next.updated = stateFailed, d.core.Now()
	next.version++
	d.lbs.byID[id] = next
	d.syncPlaneLocked(next)
	var prev any = b.clone()
	d.core.Lag().Wrote(lbLagKey(id), prev, next.clone()) // reads see it within the read lag (lag.go)
	return nil
}

// DataPlane reports what the data plane runs for a load balancer.
func (d *Dialect) DataPlane(id string) (dataplane.LoadBalancerStatus, error) {
	b, err := d.find(id)
	if err != nil {
		return dataplane.LoadBalancerStatus{}, err
	}
	st, ok := d.plane.Status(b.id)
	if !ok {
		st = dataplane.LoadBalancerStatus{ID: b.id, Listeners: []dataplane.ListenerStatus{}}
		if b.vip.IsValid() && b.lifecycle != stateDeleted {
			st.VIP = b.vip.String()
		}
	}
	return st, nil
}

// ---- admin HTTP API ----

// registerAdmin adds the OCI endpoints to the admin API, under /admin/oci/.
func (d *Dialect) registerAdmin(c *core.Core) {
	h := c.HandleAdminFunc
	h("GET /admin/oci/keys", func(*http.Request) (int, any, error) { return http.StatusOK, d.Keys(), nil })
	h("POST /admin/oci/keys", func(r *http.Request) (int, any, error) {
		var body KeyBody
		if err := core.DecodeAdmin(r, &body); err != nil {
			return 0, nil, err
		}
		k, err := d.AddKey(body.KeyID, body.PublicKey)
		return http.StatusCreated, k, err
	})
	h("DELETE /admin/oci/keys/{keyId...}", func(r *http.Request) (int, any, error) {
		return http.StatusNoContent, nil, d.RemoveKey(r.PathValue("keyId"))
	})
	h("GET /admin/oci/network", func(*http.Request) (int, any, error) { return http.StatusOK, d.Network(), nil })
	h("POST /admin/oci/network", func(r *http.Request) (int, any, error) {
		var body NetworkSeed
		if err := core.DecodeAdmin(r, &body); err != nil {
			return 0, nil, err
		}
		st, err := d.SeedNetwork(body)
		return http.StatusOK, st, err
	})
	h("GET /admin/oci/loadbalancers", func(*http.Request) (int, any, error) { return http.StatusOK, d.LoadBalancers(), nil })
	h("GET /admin/oci/loadbalancers/{id}", func(r *http.Request) (int, any, error) {
		v, err := d.LoadBalancer(r.PathValue("id"))
		return http.StatusOK, v, err
	})
	h("DELETE /admin/oci/loadbalancers/{id}", func(r *http.Request) (int, any, error) {
		return http.StatusNoContent, nil, d.DeleteLoadBalancer(r.PathValue("id"))
	})
	h("DELETE /admin/oci/loadbalancers/{id}/listeners/{name}", func(r *http.Request) (int, any, error) {
		return http.StatusNoContent, nil, d.DeleteListener(r.PathValue("id"), r.PathValue("name"))
	})
	h("GET /admin/oci/loadbalancers/{id}/dataplane", func(r *http.Request) (int, any, error) {
		st, err := d.DataPlane(r.PathValue("id"))
		return http.StatusOK, st, err
	})
	h("DELETE /admin/oci/instances/{id}", func(r *http.Request) (int, any, error) {
		return http.StatusNoContent, nil, d.PurgeTerminated(r.PathValue("id"))
	})
	h("GET /admin/oci/metadata", func(*http.Request) (int, any, error) {
		v, err := d.MetadataInstance()
		return http.StatusOK, v, err
	})
	h("PUT /admin/oci/metadata", func(r *http.Request) (int, any, error) {
		var body MetadataBody
		if err := core.DecodeAdmin(r, &body); err != nil {
			return 0, nil, err
		}
		v, err := d.SetMetadataInstance(body.InstanceID, body.Tenancy)
		return http.StatusOK, v, err
	})
	h("GET /admin/oci/workrequests", func(*http.Request) (int, any, error) {
		wrs := d.WorkRequests()
		if wrs == nil {
			wrs = []WorkRequest{}
		}
		return http.StatusOK, wrs, nil
	})
}
