package oci

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// listAllPrivateIps pages through ListPrivateIps with the given page size
// and returns the IPs and the number of calls.
func listAllPrivateIps(t *testing.T, nc ocicore.VirtualNetworkClient, req ocicore.ListPrivateIpsRequest) ([]ocicore.PrivateIp, int) {
	t.Helper()
	var out []ocicore.PrivateIp
	for calls := 1; ; calls++ {
		resp, err := nc.ListPrivateIps(ctx(t), req)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, resp.Items...)
		if resp.OpcNextPage == nil {
			return out, calls
		}
		req.Page = resp.OpcNextPage
	}
}

func TestListPrivateIps(t *testing.T) {
	e := newTestEnv(t, Options{Network: NetworkSeed{Subnets: []Subnet{{ID: "ocid1.subnet.oc1..aaaaaaaaother", CIDRBlock: "10.0.200.0/24"}}}}, core.Config{})
	var ins []core.Instance
	for i := range 5 {
		ins = append(ins, core.Instance{Name: "n", PrivateIP: "10.0.1." + string(rune('1'+i)), HostnameLabel: "host" + string(rune('a'+i))})
	}
	ins = append(ins, core.Instance{Name: "elsewhere", PrivateIP: "10.0.200.9", SubnetID: "ocid1.subnet.oc1..aaaaaaaaother"})
	added := e.addInstances(ins...)
	nc := e.network()

	got, calls := listAllPrivateIps(t, nc, ocicore.ListPrivateIpsRequest{SubnetId: common.String(DefaultSubnetID), Limit: common.Int(2)})
	if len(got) != 5 || calls != 3 {
		t.Fatalf("subnet listing: %d IPs over %d calls, want 5 over 3", len(got), calls)
	}
	for k, ip := range got {
		want := added[k]
		if *ip.IpAddress != want.PrivateIP || *ip.VnicId != vnicID(want.OCID) || !*ip.IsPrimary ||
			*ip.SubnetId != DefaultSubnetID || *ip.HostnameLabel != want.HostnameLabel {
			t.Errorf("private IP %d = %+v, want %s on %s", k, ip, want.PrivateIP, vnicID(want.OCID))
		}
	}

	tests := []struct {
		name string
		req  ocicore.ListPrivateIpsRequest
		want []string
	}{
		{"by VNIC", ocicore.ListPrivateIpsRequest{VnicId: common.String(vnicID(added[2].OCID))}, []string{"10.0.1.3"}},
		{"by address and subnet", ocicore.ListPrivateIpsRequest{SubnetId: common.String(DefaultSubnetID), IpAddress: common.String("10.0.1.4")}, []string{"10.0.1.4"}},
		{"other subnet", ocicore.ListPrivateIpsRequest{SubnetId: common.String("ocid1.subnet.oc1..aaaaaaaaother")}, []string{"10.0.200.9"}},
		{"address in another subnet", ocicore.ListPrivateIpsRequest{SubnetId: common.String(DefaultSubnetID), IpAddress: common.String("10.0.200.9")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := listAllPrivateIps(t, nc, tt.req)
			var ips []string
			for _, ip := range got {
				ips = append(ips, *ip.IpAddress)
			}
			if len(ips) != len(tt.want) || (len(ips) > 0 && ips[0] != tt.want[0]) {
				t.Fatalf("got %v, want %v", ips, tt.want)
			}
		})
	}

	_, err := nc.ListPrivateIps(ctx(t), ocicore.ListPrivateIpsRequest{IpAddress: common.String("10.0.1.1")})
	wantErr(t, err, http.StatusBadRequest, CodeMissingParameter)
	_, err = nc.ListPrivateIps(ctx(t), ocicore.ListPrivateIpsRequest{SubnetId: common.String("subnet-1")})
	wantErr(t, err, http.StatusBadRequest, CodeInvalidParameter)
}

func TestListPublicIps(t *testing.T) {
	e := newTestEnv(t, Options{}, core.Config{})
	ads := e.d.net.availabilityDomains()
	added := e.addInstances(
		core.Instance{Name: "a", PrivateIP: "10.0.1.1", PublicIP: "203.0.113.1"},
		core.Instance{Name: "b", PrivateIP: "10.0.1.2", PublicIP: "203.0.113.2", AvailabilityDomain: ads[1]},
		core.Instance{Name: "c", PrivateIP: "10.0.1.3"},
		core.Instance{Name: "d", PrivateIP: "10.0.1.4", PublicIP: "203.0.113.4"},
	)
	nc := e.network()
	comp := common.String(DefaultCompartmentID)

	tests := []struct {
		name string
		req  ocicore.ListPublicIpsRequest
		want []string
	}{
		{"first AD, ephemeral", ocicore.ListPublicIpsRequest{CompartmentId: comp, Scope: ocicore.ListPublicIpsScopeAvailabilityDomain,
			AvailabilityDomain: common.String(ads[0]), Lifetime: ocicore.ListPublicIpsLifetimeEphemeral}, []string{"203.0.113.1", "203.0.113.4"}},
		{"second AD, any lifetime", ocicore.ListPublicIpsRequest{CompartmentId: comp, Scope: ocicore.ListPublicIpsScopeAvailabilityDomain,
			AvailabilityDomain: common.String(ads[1])}, []string{"203.0.113.2"}},
		{"region: no reserved IPs", ocicore.ListPublicIpsRequest{CompartmentId: comp, Scope: ocicore.ListPublicIpsScopeRegion,
			Lifetime: ocicore.ListPublicIpsLifetimeReserved}, nil},
		{"AD, reserved", ocicore.ListPublicIpsRequest{CompartmentId: comp, Scope: ocicore.ListPublicIpsScopeAvailabilityDomain,
			AvailabilityDomain: common.String(ads[0]), Lifetime: ocicore.ListPublicIpsLifetimeReserved}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := nc.ListPublicIps(ctx(t), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			var ips []string
			for _, ip := range resp.Items {
				ips = append(ips, *ip.IpAddress)
				if ip.Scope != ocicore.PublicIpScopeAvailabilityDomain || ip.Lifetime != ocicore.PublicIpLifetimeEphemeral ||
					ip.AssignedEntityType != ocicore.PublicIpAssignedEntityTypePrivateIp || ip.LifecycleState != ocicore.PublicIpLifecycleStateAssigned {
					t.Errorf("public IP %s: %+v", *ip.IpAddress, ip)
				}
			}
			if len(ips) != len(tt.want) || (len(ips) > 1 && ips[1] != tt.want[1]) || (len(ips) > 0 && ips[0] != tt.want[0]) {
				t.Fatalf("got %v, want %v", ips, tt.want)
			}
		})
	}
	// The public IP leads to the private IP, which leads to the VNIC.
	resp, err := nc.ListPublicIps(ctx(t), ocicore.ListPublicIpsRequest{CompartmentId: comp, Scope: ocicore.ListPublicIpsScopeAvailabilityDomain,
		AvailabilityDomain: common.String(ads[0]), Limit: common.Int(1)})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Items) != 1 || resp.OpcNextPage == nil || *resp.Items[0].AssignedEntityId != privateIPID(added[0].OCID) {
		t.Fatalf("first page %+v, next %v", resp.Items, resp.OpcNextPage)
	}

	errs := []struct {
		name   string
		req    ocicore.ListPublicIpsRequest
		status int
		code   string
	}{
		{"AD scope without AD", ocicore.ListPublicIpsRequest{CompartmentId: comp, Scope: ocicore.ListPublicIpsScopeAvailabilityDomain}, 400, CodeMissingParameter},
		{"region scope with AD", ocicore.ListPublicIpsRequest{CompartmentId: comp, Scope: ocicore.ListPublicIpsScopeRegion, AvailabilityDomain: common.String(ads[0])}, 400, CodeInvalidParameter},
		{"unknown compartment", ocicore.ListPublicIpsRequest{CompartmentId: common.String("ocid1.compartment.oc1..aaaaaaaanone"), Scope: ocicore.ListPublicIpsScopeRegion}, 404, CodeNotAuthorizedOrNotFound},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			_, err := nc.ListPublicIps(ctx(t), tt.req)
			wantErr(t, err, tt.status, tt.code)
		})
	}
}

// The node reads have cloudsim's default limit; load-balancer operations
// have none.
func TestNodeReadRateLimits(t *testing.T) {
	// A clock that stands still: the bucket never refills, so the test
	// counts the burst exactly however slowly a loaded machine sends.
	frozen := time.Now()
	e := newTestEnv(t, Options{}, core.Config{Clock: func() time.Time { return frozen }})
	limits := e.core.RateLimits()
	for _, op := range NodeReadActions {
		if limits[ActionPrefix+op] != NodeReadRateLimit {
			t.Errorf("%s: limit %v, want %v", op, limits[ActionPrefix+op], NodeReadRateLimit)
		}
	}
	if q, ok := limits[ActionPrefix+"GetLoadBalancer"]; ok {
		t.Errorf("GetLoadBalancer has a limit (%v); want none", q)
	}
	nc := e.network()
	// The burst is one second's worth (core.Allow); the calls past it are
	// refused with 429 TooManyRequests.
	const n = NodeReadRateLimit + 5
	throttled := 0
	for range n {
		_, err := nc.ListPrivateIps(ctx(t), ocicore.ListPrivateIpsRequest{SubnetId: common.String(DefaultSubnetID)})
		var se common.ServiceError
		switch {
		case errors.As(err, &se) && se.GetHTTPStatusCode() == http.StatusTooManyRequests && se.GetCode() == CodeTooManyRequests:
			throttled++
		case err != nil:
			t.Fatalf("want 200 or 429 TooManyRequests, got %v", err)
		}
	}
	if throttled != n-NodeReadRateLimit {
		t.Fatalf("%d calls under a %d/s limit with a stopped clock: %d throttled, want %d", n, NodeReadRateLimit, throttled, n-NodeReadRateLimit)
	}
}
