package tcapi

import (
	"strings"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
)

// Result classifies a result code recorded by the transport (OK, a
// Tencent error code, HTTP<status>, NetworkError, ParseError) for the
// cloud API metrics' result label. Sources: the API's common error codes
// (Tencent Cloud API 3.0, "Common Error Codes": AuthFailure.*,
// RequestLimitExceeded.*) and the errors.go and per-action error lists of
// the SDK packages the CCM calls (cvm v20170312, clb v20180317, tke
// v20180525, vpc v20170312). A gateway's HTTP 429 is a throttle too.
func Result(code string) ccmmetrics.Result {
	switch {
	case code == ccmmetrics.CodeOK:
		return ccmmetrics.ResultOK
	case isThrottle(code), code == "HTTP429":
		return ccmmetrics.ResultThrottled
	case code == "AuthFailure", strings.HasPrefix(code, "AuthFailure."), authCodes[code]:
		return ccmmetrics.ResultAuth
	case code == "ResourceNotFound", strings.HasPrefix(code, "ResourceNotFound."), notFoundCodes[code]:
		return ccmmetrics.ResultNotFound
	}
	return ccmmetrics.ResultError
}

// authCodes: the caller may not do this. Only these refinements of
// UnauthorizedOperation: others refuse a business rule, not the caller
// (vpc UnauthorizedOperation.VpcPeerCidrConflict, .PrimaryIp).
var authCodes = map[string]bool{
	"UnauthorizedOperation":                  true, // "未授权操作": documented by 14 of the actions the CCM calls
	"UnauthorizedOperation.CamNoAuth":        true, // tke: "无该接口CAM权限", no CAM permission for the action
	"UnauthorizedOperation.InvalidToken":     true, // cvm DescribeInstances: the temporary token is invalid
	"UnauthorizedOperation.PermissionDenied": true, // cvm: "无权操作指定的资源，请正确配置CAM策略"
}

// notFoundCodes: the object the request names does not exist, beyond
// ResourceNotFound[.*] (vpc routes and VPCs, tke ResourceNotFound.RouteTableNotFound).
var notFoundCodes = map[string]bool{
	"InvalidParameter.LBIdNotFound":       true, // clb: Delete/DescribeListeners/Batch*Targets on a gone CLB
	"InvalidParameter.ListenerIdNotFound": true, // clb Batch(De)RegisterTargets
	"InvalidInstanceId.NotFound":          true, // cvm, vpc
	"InternalError.RouteTableNotFound":    true, // tke Create/DeleteClusterRoute
}
