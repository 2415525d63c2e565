package cloudsim

import (
	"fmt"

	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// CLBSpec describes a Tencent load balancer created out of band (see
// tencent.CLBSpec).
type CLBSpec = tencent.CLBSpec

// CLBListenerSpec describes a listener created out of band.
type CLBListenerSpec = tencent.CLBListenerSpec

// CLBTarget is a target of a CLB listener.
type CLBTarget = tencent.CLBTarget

// CLBLoadBalancer is a Tencent load balancer with its listeners and targets.
type CLBLoadBalancer = tencent.CLBLoadBalancer

// CLBListener is a listener with its targets.
type CLBListener = tencent.CLBListener

// CLBBindFailure makes BatchRegisterTargets fail for one listener (see
// tencent.BindFailure).
type CLBBindFailure = tencent.BindFailure

// DataPlaneStatus is what the data plane runs for one load balancer: VIP,
// listeners, target health.
type DataPlaneStatus = dataplane.LoadBalancerStatus

// CheckVIPRange reports whether a VIP range ("A-B" or a CIDR prefix) is
// valid for Options.VIPRange.
func CheckVIPRange(r string) error {
	p, err := dataplane.New(dataplane.Config{VIPRange: r, Disabled: true})
	if err != nil {
		return err
	}
	p.Close()
	return nil
}

// startCLB builds the data plane and the CLB service and registers it.
func (s *Sim) startCLB(opts Options) {
	p, err := dataplane.New(dataplane.Config{
		VIPRange:            opts.VIPRange,
		HealthCheckInterval: opts.HealthCheckInterval,
		Disabled:            opts.DisableDataPlane,
		Logf:                opts.DataPlaneLog,
	})
	if err != nil {
		panic(fmt.Sprintf("cloudsim: Options.VIPRange: %v", err))
	}
	s.plane = p
	s.clb = tencent.NewCLB(s.core, tencent.CLBOptions{
		Plane:         p,
		TaskLatency:   opts.TaskLatency,
		QuotaOpen:     opts.CLBQuotaOpen,
		QuotaInternal: opts.CLBQuotaInternal,
		TargetQuota:   opts.CLBTargetQuota,

		DeleteFrequencyLimit:  opts.CLBDeleteFrequencyLimit,
		DeleteFrequencyWindow: opts.CLBDeleteFrequencyWindow,
		NullHealthCheckFields: opts.CLBNullHealthCheckFields,
		SecurityGroups:        s.tencent.SecurityGroups(),
	})
	s.tencent.Register(s.clb.Service())
}

// stopCLB stops pending tasks and every listener and health check.
func (s *Sim) stopCLB() {
	s.clb.Close()
	s.plane.Close()
}

// TencentCLB exposes the CLB service, for tests that need more than the
// methods below.
func (s *Sim) TencentCLB() *tencent.CLB { return s.clb }

// CLBs returns every Tencent load balancer, in creation order, with its
// listeners and targets.
func (s *Sim) CLBs() []CLBLoadBalancer { return s.clb.LoadBalancers() }

// CLB returns one Tencent load balancer.
func (s *Sim) CLB(id string) (CLBLoadBalancer, error) { return s.clb.LoadBalancer(id) }

// CreateCLB creates a load balancer out of band, as a user in the console
// would: it is ready at once (Status 1), with its listeners and targets.
// Use it to set up an existing CLB for adoption tests.
func (s *Sim) CreateCLB(spec CLBSpec) (CLBLoadBalancer, error) { return s.clb.CreateLoadBalancer(spec) }

// DeleteCLB deletes a load balancer out of band, at once.
func (s *Sim) DeleteCLB(id string) error { return s.clb.DeleteLoadBalancer(id) }

// AddCLBListener adds a listener out of band, at once.
func (s *Sim) AddCLBListener(lbID string, spec CLBListenerSpec) (CLBListener, error) {
	return s.clb.AddListener(lbID, spec)
}

// DeleteCLBListener deletes a listener out of band, at once (drift).
func (s *Sim) DeleteCLBListener(lbID, listenerID string) error {
	return s.clb.DeleteListener(lbID, listenerID)
}

// CLBDataPlane reports a load balancer's VIP, running listeners and target
// health.
func (s *Sim) CLBDataPlane(lbID string) (DataPlaneStatus, error) { return s.clb.DataPlane(lbID) }

// FailCLBBindings arms a BatchRegisterTargets partial failure for one
// listener: the next call(s) naming it list it in FailListenerIdSet and
// bind the other listeners' targets.
func (s *Sim) FailCLBBindings(f CLBBindFailure) error { return s.clb.FailBindings(f) }

// ClearCLBBindFailures disarms every BatchRegisterTargets partial failure.
func (s *Sim) ClearCLBBindFailures() { s.clb.ClearBindFailures() }
