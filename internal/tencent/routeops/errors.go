package routeops

import (
	"errors"
	"strings"

	"github.com/ccmkit/ccm/internal/callerr"
	"github.com/ccmkit/ccm/internal/tencent/tcapi"
)

// Kinds of failure a backend reports, whatever the cloud's error code. The
// Manager turns them into messages that say what to do.
var (
	// ErrTableNotFound: the configured route table does not exist.
	ErrTableNotFound = errors.New("route table not found")
	// ErrTableExists: creating the table found one of that name.
	ErrTableExists = errors.New("route table already exists")
	// ErrTableCIDRConflict: the table's CIDR overlaps the VPC or another cluster.
	ErrTableCIDRConflict = errors.New("route table CIDR conflicts")
	// ErrCIDRConflict: the destination overlaps another route in the table.
	ErrCIDRConflict = errors.New("CIDR conflicts with another route")
	// ErrGatewayInUse: the gateway already has a route (TKE: one CIDR per gateway).
	ErrGatewayInUse = errors.New("gateway already has a route")
	// ErrOutOfTable: the destination is outside the table's CIDR.
	ErrOutOfTable = errors.New("CIDR outside the route table")
	// ErrGatewayNotInstance: the gateway is not an instance's private IP.
	ErrGatewayNotInstance = errors.New("gateway is not an instance")
	// ErrRouteNotFound: the route to delete is not in the table.
	ErrRouteNotFound = errors.New("route not found")
	// ErrTKECIDRConflict: the destination of a VPC route lies inside a TKE
	// cluster route table's CIDR (vpc UnsupportedOperation.ConflictWithDockerRoute).
	ErrTKECIDRConflict = errors.New("destination inside a TKE cluster route table's CIDR")
	// ErrVPCCIDRConflict: the destination lies inside the VPC's CIDR
	// (vpc InvalidParameterValue.VpcCidrConflict).
	ErrVPCCIDRConflict = errors.New("destination inside the VPC's CIDR")
)

// Code returns the cloud's error code in err, or "".
func Code(err error) string { return tcapi.Code(err) }

// kindByCode maps the last part of a Tencent error code to a Kind. The SDK
// documents most route errors under two prefixes (InvalidParameter.X and
// InternalError.X, sometimes ResourceNotFound.X or ResourceInUse.X), so only
// the part after the first dot decides.
var kindByCode = map[string]error{
	"RouteTableNotFound":             ErrTableNotFound,
	"ResourceExistAlready":           ErrTableExists,
	"CidrConflictWithVpcCidr":        ErrTableCIDRConflict,
	"CidrConflictWithOtherCluster":   ErrTableCIDRConflict,
	"CidrConflictWithVpcGlobalRoute": ErrTableCIDRConflict,
	"CidrConflictWithOtherRoute":     ErrCIDRConflict,
	"GatewayAlreadyAssociatedCidr":   ErrGatewayInUse,
	"CidrOutOfRouteTable":            ErrOutOfTable,
	"CvmNotFound":                    ErrGatewayNotInstance,
}

// tkeKind classifies a tke SDK error by its code.
func tkeKind(err error) error {
	if _, rest, ok := strings.Cut(Code(err), "."); ok {
		return kindByCode[rest]
	}
	return nil
}

// cause wraps a call's error inside a message that already names the route
// and the table: it shows only the action and the cloud's answer, and
// unwraps to the error so that errors.Is sees its Kind.
type cause struct{ err error }

func (c cause) Error() string {
	var ce *callerr.Error
	if errors.As(c.err, &ce) {
		return ce.Action + ": " + callerr.Describe(ce.Err)
	}
	return c.err.Error()
}

func (c cause) Unwrap() error { return c.err }
