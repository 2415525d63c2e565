package cloudsim

import (
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/console"
	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
	"github.com/ccmkit/ccm/pkg/cloudsim/oci"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// ConsolePath is where the admin listener serves the web console (package
// console): a read-only page of both clouds' state, refreshed live.
const ConsolePath = console.Path

// ConsoleState is the snapshot the console draws (GET
// /admin/console/state): each part as its own admin endpoint shows it,
// read one after the other (not one atomic view: a second later the next
// poll catches up).
type ConsoleState struct {
	Time      time.Time         `json:"time"`
	Region    string            `json:"region"`
	Instances []Instance        `json:"instances"`
	Faults    []Fault           `json:"faults"`
	ReadLag   core.ReadLagBody  `json:"readLag"`
	Calls     []core.RecentCall `json:"calls"` // the last ones, oldest first
	Tencent   TencentConsole    `json:"tencent"`
	OCI       OCIConsole        `json:"oci"`
}

// TencentConsole is the Tencent part of ConsoleState.
type TencentConsole struct {
	LoadBalancers []tencent.CLBLoadBalancer `json:"loadBalancers"`
	// DataPlane is each load balancer's traffic view (target health,
	// open and forwarded connections), by load balancer id.
	DataPlane      map[string]dataplane.LoadBalancerStatus `json:"dataPlane"`
	RouteTables    []tencent.RouteTable                    `json:"routeTables"`    // TKE cluster route tables
	VPCRouteTables []tencent.VPCRouteTable                 `json:"vpcRouteTables"` // vpc route tables
	SecurityGroups []tencent.SecurityGroup                 `json:"securityGroups"`
}

// OCIConsole is the OCI part of ConsoleState. OCI has no route tables in
// cloudsim: the CCM manages none there (routes are the Tencent TKE ones).
type OCIConsole struct {
	LoadBalancers []oci.LoadBalancer                      `json:"loadBalancers"`
	DataPlane     map[string]dataplane.LoadBalancerStatus `json:"dataPlane"`
	// Network holds the VCNs, subnets, security lists and NSGs.
	Network oci.NetworkState `json:"network"`
}

// ConsoleState reads the snapshot the console draws.
func (s *Sim) ConsoleState() ConsoleState {
	c := s.core
	st := ConsoleState{
		Time:      c.Now(),
		Region:    c.Region(),
		Instances: c.Instances(),
		Faults:    c.Faults(),
		ReadLag:   core.ReadLagBody{Max: c.Lag().Max().String(), Pending: c.Lag().Pending()},
		Calls:     c.RecentCalls(),
	}
	if t := s.tencent; t != nil {
		st.Tencent = TencentConsole{
			LoadBalancers:  t.CLB().LoadBalancers(),
			DataPlane:      map[string]dataplane.LoadBalancerStatus{},
			RouteTables:    t.TKE().RouteTables(),
			VPCRouteTables: t.VPC().VPCRouteTables(),
			SecurityGroups: t.SecurityGroups().List(),
		}
		for _, lb := range st.Tencent.LoadBalancers {
			if dp, err := t.CLB().DataPlane(lb.ID); err == nil { // gone since the list: left out
				st.Tencent.DataPlane[lb.ID] = dp
			}
		}
	}
	if o := s.oci; o != nil {
		st.OCI = OCIConsole{LoadBalancers: o.LoadBalancers(), DataPlane: map[string]dataplane.LoadBalancerStatus{}, Network: o.Network()}
		for _, lb := range st.OCI.LoadBalancers {
			if dp, err := o.DataPlane(lb.ID); err == nil {
				st.OCI.DataPlane[lb.ID] = dp
			}
		}
	}
	return st
}
