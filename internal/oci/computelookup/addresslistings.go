package computelookup

import (
	"context"
	"sync"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"
)

// addressListings are PrimaryVnics' private- and public-IP listings, each
// started once, in its own goroutine, as the attachment pages name its
// subnet or availability domain. After the first error no new listing
// starts, but the ones under way run to their end: they are not canceled,
// because the OCI SDK's common.Retry returns, when its context ends, the
// response variable that its own goroutine may still be writing (a data
// race the race detector caught in CI, oci-go-sdk v65.129.0 retry.go).
type addressListings struct {
	r   *Reader
	ctx context.Context
	wg  sync.WaitGroup

	mu         sync.Mutex
	started    map[string]bool // "subnet "+OCID, "ad "+name
	privateIPs []core.PrivateIp
	publicIPs  []core.PublicIp
	ipv6s      map[string][]string // VNIC -> its IPv6 addresses (ipv6s.go)
	err        error
}

// newAddressListings starts the regional (reserved) public-IP listing,
// which needs nothing from the attachments.
func newAddressListings(ctx context.Context, r *Reader) *addressListings {
	l := &addressListings{r: r, ctx: ctx, started: map[string]bool{}, ipv6s: map[string][]string{}}
	l.publicList("region", core.ListPublicIpsRequest{Scope: core.ListPublicIpsScopeRegion, Lifetime: core.ListPublicIpsLifetimeReserved})
	return l
}

// subnet lists the subnet's private IPs and its IPv6 addresses, once,
// side by side.
func (l *addressListings) subnet(id string) {
	if id == "" || !l.first("subnet "+id) {
		return
	}
	l.run(func() error {
		ips, err := l.r.privateIPs(l.ctx, id)
		if err == nil {
			l.mu.Lock()
			l.privateIPs = append(l.privateIPs, ips...)
			l.mu.Unlock()
		}
		return err
	})
	l.run(func() error {
		v6, err := l.r.subnetIPv6s(l.ctx, id)
		if err == nil {
			l.mu.Lock()
			for vnic, addrs := range v6 {
				l.ipv6s[vnic] = append(l.ipv6s[vnic], addrs...)
			}
			l.mu.Unlock()
		}
		return err
	})
}

// availabilityDomain lists the AD's ephemeral public IPs, once.
func (l *addressListings) availabilityDomain(ad string) {
	if ad == "" {
		return
	}
	l.publicList("ad "+ad, core.ListPublicIpsRequest{Scope: core.ListPublicIpsScopeAvailabilityDomain,
		AvailabilityDomain: common.String(ad), Lifetime: core.ListPublicIpsLifetimeEphemeral})
}

func (l *addressListings) publicList(key string, req core.ListPublicIpsRequest) {
	if !l.first(key) {
		return
	}
	l.run(func() error {
		ips, err := l.r.publicIPs(l.ctx, req)
		if err == nil {
			l.mu.Lock()
			l.publicIPs = append(l.publicIPs, ips...)
			l.mu.Unlock()
		}
		return err
	})
}

// first reports whether key is new, and marks it started.
func (l *addressListings) first(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started[key] || l.err != nil {
		return false
	}
	l.started[key] = true
	return true
}

// run runs f in the background; its error, if the first, is the answer.
func (l *addressListings) run(f func() error) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		if err := f(); err != nil {
			l.fail(err)
		}
	}()
}

// fail records err if it is the first one; no listing starts after it.
func (l *addressListings) fail(err error) {
	l.mu.Lock()
	if l.err == nil {
		l.err = err
	}
	l.mu.Unlock()
}

// wait waits for every listing and returns the first error.
func (l *addressListings) wait() error {
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}
