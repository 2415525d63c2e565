package oci

import (
	"context"
	"io"
	"net/http"

	"github.com/ccmkit/ccm/internal/oci/config"
	"github.com/ccmkit/ccm/internal/oci/lbops"
	"github.com/ccmkit/ccm/internal/oci/ociapi"
	"github.com/ccmkit/ccm/internal/oci/ocipreflight"
	"github.com/ccmkit/ccm/internal/preflight"
)

// The preflight command's OCI checks: this file only loads the config and
// builds the clients the way the CCM does; the checks live in
// internal/oci/ocipreflight, on the framework of internal/preflight.
func init() {
	preflight.Register(ProviderName, preflight.Cloud{Check: runPreflight, OwnsProviderID: ownsProviderID})
}

func runPreflight(ctx context.Context, r io.Reader, in preflight.Input, rep *preflight.Report) {
	cfg, err := config.Load(r)
	if err != nil {
		rep.Fail("cloud config", err.Error(), "fix the fields named (docs/oci.md)")
		return
	}
	// Every client shares one base transport (internal/oci/ociapi), so one
	// Clock sees every answer.
	var clock *preflight.Clock
	wrap := func(next http.RoundTripper) http.RoundTripper {
		clock = preflight.NewClock(next, in.Now)
		return clock
	}
	creds, err := newCredentials(cfg, 0, wrap)
	if err != nil {
		rep.Fail("credential source", err.Error(), credentialsFix(cfg))
		return
	}
	rep.Pass("credential source", creds.Kind()+": "+creds.Describe())
	opts := clientOptions(cfg, creds)
	opts.Wrap = wrap
	c, err := ociapi.New(opts)
	if err != nil {
		rep.Fail("cloud config", err.Error(), "fix the fields named (docs/oci.md)")
		return
	}
	rep.Pass("cloud config", "region "+cfg.Auth.Region+", compartment "+cfg.Compartment)
	target := ocipreflight.Target{
		Region: cfg.Auth.Region, Compartment: cfg.Compartment, VCN: cfg.VCN,
		Subnets:    []string{cfg.LoadBalancer.Subnet1, cfg.LoadBalancer.Subnet2},
		LBDisabled: cfg.LoadBalancer.Disabled,
		// The smaller of the LB's and the NLB's per-set limit, with one
		// listener: a Service may ask for either kind.
		BackendsPerSet: min(lbops.LimitsOf(lbops.KindLB).BackendsPerListener(1), lbops.LimitsOf(lbops.KindNLB).BackendsPerListener(1)),
	}
	ocipreflight.Check(ctx, ocipreflight.API{Compute: c.Compute, Network: c.Network,
		Reads: ocipreflight.ReadAPI{Compute: c.Compute, Network: c.Network, LB: c.LB, NLB: c.NLB}}, target, clock, in, rep)
}

// credentialsFix is what to do about credentials that do not load.
func credentialsFix(cfg *config.Config) string {
	if cfg.InstancePrincipals() {
		return "run on an OCI instance in a dynamic group that a policy allows (docs/credentials.md#oci), or configure an API key"
	}
	return "fix the key files named (docs/credentials.md#oci)"
}

// ownsProviderID: oci://<instance OCID> or a bare instance OCID (providerid.go).
func ownsProviderID(id string) bool {
	_, err := parseProviderID(id)
	return err == nil
}
