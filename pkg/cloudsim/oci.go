package cloudsim

import (
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// OCINetworkSeed adds OCI compartments, availability domains, VCNs, subnets
// and security lists (see oci.NetworkSeed).
type OCINetworkSeed = oci.NetworkSeed

// OCINetwork is the whole OCI network, as the admin API shows it.
type OCINetwork = oci.NetworkState

// OCIKey is a registered OCI API signing key (its id, never the key).
type OCIKey = oci.Key

// OCILoadBalancer is an OCI load balancer or network load balancer with its
// listeners, backend sets and backends (see oci.LoadBalancer).
type OCILoadBalancer = oci.LoadBalancer

// OCIBalancerLimits are the configuration limits of one OCI load balancer
// (see oci.BalancerLimits).
type OCIBalancerLimits = oci.BalancerLimits

// OCIInstanceIdentity is the instance the OCI metadata service answers
// for (see oci.InstanceIdentity).
type OCIInstanceIdentity = oci.InstanceIdentity

// OCIWorkRequest is an OCI work request as the admin API shows it.
type OCIWorkRequest = oci.WorkRequest

// CheckOCIOptions reports whether the OCI keys and network seed of opts are
// valid, so that a caller can report a bad configuration instead of New
// panicking.
func CheckOCIOptions(opts Options) error {
	return oci.CheckOptions(opts.OCI)
}

// AddOCIKey registers an OCI API signing key: keyId
// "<tenancy OCID>/<user OCID>/<fingerprint>" and the PEM RSA public key. The
// fingerprint must be the key's (see oci.Fingerprint).
func (s *Sim) AddOCIKey(keyID, publicKeyPEM string) error {
	_, err := s.oci.AddKey(keyID, publicKeyPEM)
	return err
}

// SetOCIMetadataInstance makes the OCI instance metadata service (/opc/v2)
// answer for an instance of the fleet (its OCID or id), whose identity
// certificate names tenancy: software using instance principals then "runs
// on" that instance.
func (s *Sim) SetOCIMetadataInstance(instanceID, tenancy string) (oci.InstanceIdentity, error) {
	return s.oci.SetMetadataInstance(instanceID, tenancy)
}

// RemoveOCIKey unregisters an OCI API signing key (it is revoked: requests
// signed with it are refused from now on).
func (s *Sim) RemoveOCIKey(keyID string) error { return s.oci.RemoveKey(keyID) }

// SeedOCINetwork adds compartments, availability domains, VCNs, subnets and
// security lists, all or none.
func (s *Sim) SeedOCINetwork(seed oci.NetworkSeed) (oci.NetworkState, error) {
	return s.oci.SeedNetwork(seed)
}

// OCILoadBalancers lists the OCI load balancers and network load balancers,
// oldest first.
func (s *Sim) OCILoadBalancers() []oci.LoadBalancer { return s.oci.LoadBalancers() }

// OCILoadBalancer returns one OCI load balancer or network load balancer.
func (s *Sim) OCILoadBalancer(id string) (oci.LoadBalancer, error) { return s.oci.LoadBalancer(id) }

// DeleteOCILoadBalancer deletes an OCI load balancer out of band, at once.
func (s *Sim) DeleteOCILoadBalancer(id string) error { return s.oci.DeleteLoadBalancer(id) }

// FailOCILoadBalancer turns a load balancer FAILED out of band.
func (s *Sim) FailOCILoadBalancer(id string) error { return s.oci.FailLoadBalancer(id) }

// HoldOCILoadBalancer starts a work request on an OCI load balancer that
// runs for d, as another client's change does: an NLB refuses changes
// meanwhile with 409 Conflict, an LB queues them (oci.HoldLoadBalancer).
// It returns the work request's id.
func (s *Sim) HoldOCILoadBalancer(id string, d time.Duration) (string, error) {
	return s.oci.HoldLoadBalancer(id, d)
}

// DeleteOCIListener deletes a listener out of band, at once (drift).
func (s *Sim) DeleteOCIListener(lbID, name string) error { return s.oci.DeleteListener(lbID, name) }

// PurgeOCITerminated makes a terminated instance disappear from the OCI
// API at once, before its retention ends (GetInstance then answers 404).
func (s *Sim) PurgeOCITerminated(id string) error { return s.oci.PurgeTerminated(id) }

// OCIDataPlane reports an OCI load balancer's VIP, running listeners and
// backend health.
func (s *Sim) OCIDataPlane(id string) (DataPlaneStatus, error) { return s.oci.DataPlane(id) }
