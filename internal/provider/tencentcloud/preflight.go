package tencentcloud

import (
	"context"
	"io"
	"os"

	"github.com/ccmkit/ccm/internal/preflight"
	"github.com/ccmkit/ccm/internal/tencent/config"
	"github.com/ccmkit/ccm/internal/tencent/tcapi"
	"github.com/ccmkit/ccm/internal/tencent/tcpreflight"
)

// The preflight command's Tencent Cloud checks: this file only loads the
// config and builds the clients the way the CCM does; the checks live in
// internal/tencent/tcpreflight, on the framework of internal/preflight.
func init() {
	preflight.Register(ProviderName, preflight.Cloud{Check: runPreflight, OwnsProviderID: ownsProviderID})
}

func runPreflight(ctx context.Context, r io.Reader, in preflight.Input, rep *preflight.Report) {
	cfg, err := config.Load(r, os.Getenv)
	if err != nil {
		rep.Fail("cloud config", err.Error(), "fix the fields named (docs/configuration.md)")
		return
	}
	opts, err := clientOptions(cfg)
	if err != nil {
		rep.Fail("cloud config", err.Error(), "fix the fields named (docs/configuration.md)")
		return
	}
	rep.Pass("cloud config", "region "+cfg.Region+", "+cfg.VpcID)
	// Measure the clock on every answer; one attempt per call, so that a
	// refused credential is reported, not retried.
	topts := transportOptions(tcapi.Limits{})
	topts.MaxAttempts = 1
	clock := preflight.NewClock(nil, in.Now)
	topts.Base = clock
	opts.Transport = tcapi.NewTransport(topts)

	cred, err := startCredentials(ctx, cfg, opts.Transport, true) // the report names the source
	if err != nil {
		rep.Fail(preflight.CheckCredentialSource, err.Error(), credentialFix(cfg))
		return
	}
	rep.Pass(preflight.CheckCredentialSource, preflight.DescribeCredentials(cred.Source().Describe(), cred.Value().Expiry, in.Now))
	opts.Credential = cred

	api, err := preflightAPI(tcapi.NewClients(opts))
	if err != nil {
		rep.Fail("cloud config", err.Error(), "fix the fields named (docs/configuration.md)")
		return
	}
	target := tcpreflight.Target{
		Region: cfg.Region, VpcID: cfg.VpcID,
		ClusterRouteTable: cfg.ClusterRouteTable, RouteTableID: cfg.RouteTableID,
		CreateRouteTable: cfg.CreateClusterRouteTable, ClusterCIDR: cfg.ClusterCIDR,
	}
	if cfg.RoutesEnabled() {
		target.RouteBackend = config.RouteBackendTKE
		if cfg.RouteBackend == config.RouteBackendVPC {
			target.RouteBackend = config.RouteBackendVPC
		}
	}
	tcpreflight.Check(ctx, api, target, clock, in, rep)
}

// credentialFix says what to check when the credential source fails.
func credentialFix(cfg *config.Config) string {
	switch cfg.CredentialSource {
	case config.CredentialSourceCVMRole:
		return "bind a CAM role to this CVM (carrier cvm.qcloud.com) and check that the metadata service answers; see docs/credentials.md"
	case config.CredentialSourceWebIdentity:
		return "check the token file (a projected ServiceAccount token with the provider's client id as audience), the role ARN, and the OIDC identity provider and its trust in the role; see docs/credentials.md"
	}
	return "check the key files named; see docs/credentials.md"
}

func preflightAPI(s *tcapi.Clients) (tcpreflight.API, error) {
	cvmc, err := s.CVM()
	if err != nil {
		return tcpreflight.API{}, err
	}
	vpcc, err := s.VPC()
	if err != nil {
		return tcpreflight.API{}, err
	}
	tkec, err := s.TKE()
	if err != nil {
		return tcpreflight.API{}, err
	}
	clbc, err := s.CLB()
	if err != nil {
		return tcpreflight.API{}, err
	}
	return tcpreflight.API{CVM: cvmc, VPC: vpcc, TKE: tkec, CLB: clbc,
		Reads: tcpreflight.ReadAPI{CVM: cvmc, VPC: vpcc, TKE: tkec, CLB: clbc}}, nil
}

// ownsProviderID: tencentcloud://<zone>/<instance id> (providerid.go).
func ownsProviderID(id string) bool {
	_, err := parseProviderID(id)
	return err == nil
}
