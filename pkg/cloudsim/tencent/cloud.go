package tencent

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// CloudOptions is the Tencent part of cloudsim.Options: what NewCloud
// builds and seeds. The zero value means the documented defaults.
type CloudOptions struct {
	Credentials    map[string]string // SecretId -> SecretKey accepted by signature verification
	RouteTables    []RouteTable      // TKE cluster route tables (with routes) to start with
	VPCRouteTables []VPCRouteTable   // VPC route tables (with routes) to start with
	VPCs           []VPCNetwork      // VPCs with their CIDRs (others have DefaultVPCCIDR)
	SecurityGroups []SecurityGroup   // security groups (with policies) to start with

	// Policies attaches CAM policy documents to subjects (a SecretId, or
	// role/<RoleName>); a subject without one has full access (cam.go).
	Policies map[string][]json.RawMessage

	// CAM roles (cam_roles.go): the roles, the OIDC identity providers STS trusts, and the
	// role bound to the instance the metadata service answers for ("":
	// none; the role must be in Roles).
	Roles         []Role
	OIDCProviders []OIDCProvider
	MetadataRole  string

	// The CLB service (see CLBOptions for each field's meaning).
	TaskLatency      time.Duration // each async task (0: DefaultTaskLatency; negative: done before the call returns)
	CLBQuotaOpen     int           // OPEN load balancers per region (0: DefaultCLBQuota)
	CLBQuotaInternal int           // INTERNAL load balancers per region (0: DefaultCLBQuota)
	CLBTargetQuota   int           // targets per listener, TOTAL_TARGET_BIND_QUOTA (0: DefaultTargetQuota)
	// DeleteLoadBalancer's frequency check: deleting CLBDeleteFrequencyLimit
	// (0: 30) or more load balancers in a region within
	// CLBDeleteFrequencyWindow (0: 5m) is refused with
	// FailedOperation.FrequencyCheckRisk, as documented. Tests shorten the
	// window.
	CLBDeleteFrequencyLimit  int
	CLBDeleteFrequencyWindow time.Duration
	// CLBNullHealthCheckFields: DescribeListeners answers null for every
	// health check field the SDK says may be null, whatever the check type.
	CLBNullHealthCheckFields bool
}

// Cloud is the Tencent dialect as package cloudsim mounts it (a
// core.Dialect): the API with its CLB service on the shared data plane,
// seeded from CloudOptions.
type Cloud struct {
	*Dialect
	clb *CLB
}

// NewCloud builds the dialect and its CLB service over c, with plane
// carrying the load balancers' traffic (nil: a disabled plane of its own),
// and adds the seeds of opts, all validated as the admin API would.
//
//cloudsim:dialect Tencent
func NewCloud(c *core.Core, plane *dataplane.Plane, opts CloudOptions) (*Cloud, error) {
	d := New(c, Options{Credentials: opts.Credentials})
	for _, subject := range slices.Sorted(maps.Keys(opts.Policies)) {
		for _, doc := range opts.Policies[subject] {
			if err := d.AttachPolicy(subject, doc); err != nil {
				return nil, fmt.Errorf("tencent: CloudOptions.Policies[%q]: %w", subject, err)
			}
		}
	}
	clb := NewCLB(c, CLBOptions{
		Plane:         plane,
		TaskLatency:   opts.TaskLatency,
		QuotaOpen:     opts.CLBQuotaOpen,
		QuotaInternal: opts.CLBQuotaInternal,
		TargetQuota:   opts.CLBTargetQuota,

		DeleteFrequencyLimit:  opts.CLBDeleteFrequencyLimit,
		DeleteFrequencyWindow: opts.CLBDeleteFrequencyWindow,
		NullHealthCheckFields: opts.CLBNullHealthCheckFields,
		SecurityGroups:        d.SecurityGroups(),
	})
	d.Register(clb.Service())
	d.Register(clb.TagService())
	cl := &Cloud{Dialect: d, clb: clb}
	if err := cl.seed(opts); err != nil {
		cl.Close()
		return nil, err
	}
	return cl, nil
}

// seed adds the VPCs first, as security groups and route tables may name
// them.
func (cl *Cloud) seed(opts CloudOptions) error {
	err := seedEach("tencent: CloudOptions.VPCs", opts.VPCs, cl.Networks().AddVPC)
	if err == nil {
		err = seedEach("tencent: CloudOptions.Roles", opts.Roles, cl.CAM().PutRole)
	}
	if err == nil {
		err = seedEach("tencent: CloudOptions.OIDCProviders", opts.OIDCProviders, func(p OIDCProvider) (OIDCProvider, error) {
			return p, cl.CAM().PutOIDCProvider(p)
		})
	}
	if err == nil && opts.MetadataRole != "" {
		if err = cl.CAM().BindMetadataRole(opts.MetadataRole); err != nil {
			err = fmt.Errorf("tencent: CloudOptions.MetadataRole: %w", err)
		}
	}
	if err == nil {
		err = seedEach("tencent: CloudOptions.SecurityGroups", opts.SecurityGroups, cl.SecurityGroups().Create)
	}
	if err == nil {
		err = seedEach("tencent: CloudOptions.RouteTables", opts.RouteTables, cl.TKE().CreateRouteTable)
	}
	if err == nil {
		err = seedEach("tencent: CloudOptions.VPCRouteTables", opts.VPCRouteTables, cl.VPC().CreateVPCRouteTable)
	}
	return err
}

// seedEach adds items with add, stopping at the first error, which names
// the option (what) it came from.
func seedEach[T any](what string, items []T, add func(T) (T, error)) error {
	for _, it := range items {
		if _, err := add(it); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}

// Name is DialectName.
func (cl *Cloud) Name() string { return DialectName }

// Patterns: the Tencent Cloud API is one endpoint, POST / (any method
// reaches the dialect, which answers UnsupportedProtocol to all but POST,
// as the real endpoint does); the instance metadata service's CAM paths
// are under MetadataPrefix (on the real cloud at
// http://metadata.tencentyun.com).
func (cl *Cloud) Patterns() []string { return []string{"/{$}", MetadataPrefix} }

// CLB is the CLB service.
func (cl *Cloud) CLB() *CLB { return cl.clb }

// Close stops the pending CLB tasks (and the CLB's own data plane, if it
// made one).
func (cl *Cloud) Close() { cl.clb.Close() }
