package cloudsim

import (
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

// TencentCLB exposes the CLB service, for tests that need more than the
// methods below.
func (s *Sim) TencentCLB() *tencent.CLB { return s.tencent.CLB() }

// CLBs returns every Tencent load balancer, in creation order, with its
// listeners and targets.
func (s *Sim) CLBs() []tencent.CLBLoadBalancer { return s.tencent.CLB().LoadBalancers() }

// CLB returns one Tencent load balancer.
func (s *Sim) CLB(id string) (tencent.CLBLoadBalancer, error) {
	return s.tencent.CLB().LoadBalancer(id)
}

// CreateCLB creates a load balancer out of band, as a user in the console
// would: it is ready at once (Status 1), with its listeners and targets.
// Use it to set up an existing CLB for adoption tests.
func (s *Sim) CreateCLB(spec tencent.CLBSpec) (tencent.CLBLoadBalancer, error) {
	return s.tencent.CLB().CreateLoadBalancer(spec)
}

// DeleteCLB deletes a load balancer out of band, at once.
func (s *Sim) DeleteCLB(id string) error { return s.tencent.CLB().DeleteLoadBalancer(id) }

// AddCLBListener adds a listener out of band, at once.
func (s *Sim) AddCLBListener(lbID string, spec tencent.CLBListenerSpec) (tencent.CLBListener, error) {
	return s.tencent.CLB().AddListener(lbID, spec)
}

// DeleteCLBListener deletes a listener out of band, at once (drift).
func (s *Sim) DeleteCLBListener(lbID, listenerID string) error {
	return s.tencent.CLB().DeleteListener(lbID, listenerID)
}

// CLBDataPlane reports a load balancer's VIP, running listeners and target
// health.
func (s *Sim) CLBDataPlane(lbID string) (DataPlaneStatus, error) {
	return s.tencent.CLB().DataPlane(lbID)
}

// FailCLBBindings arms a BatchRegisterTargets partial failure for one
// listener: the next call(s) naming it list it in FailListenerIdSet and
// bind the other listeners' targets.
func (s *Sim) FailCLBBindings(f tencent.BindFailure) error { return s.tencent.CLB().FailBindings(f) }

// ClearCLBBindFailures disarms every BatchRegisterTargets partial failure.
func (s *Sim) ClearCLBBindFailures() { s.tencent.CLB().ClearBindFailures() }
