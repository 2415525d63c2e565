package tcapi

import (
	"testing"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
)

// Every code the transport records, as documented by the API's common
// error codes and the SDK packages the CCM calls, and what it comes to.
func TestResult(t *testing.T) {
	tests := []struct {
		code string
		want ccmmetrics.Result
	}{
		{"OK", ccmmetrics.ResultOK},

		{"RequestLimitExceeded", ccmmetrics.ResultThrottled},
		{"RequestLimitExceeded.UinLimitExceeded", ccmmetrics.ResultThrottled},
		{"RequestLimitExceeded.IPLimitExceeded", ccmmetrics.ResultThrottled},
		{"HTTP429", ccmmetrics.ResultThrottled},

		{"AuthFailure", ccmmetrics.ResultAuth},
		{"AuthFailure.SignatureFailure", ccmmetrics.ResultAuth},
		{"AuthFailure.SignatureExpire", ccmmetrics.ResultAuth},
		{"AuthFailure.SecretIdNotFound", ccmmetrics.ResultAuth}, // not not_found: the key is unknown
		{"AuthFailure.InvalidSecretId", ccmmetrics.ResultAuth},
		{"AuthFailure.TokenFailure", ccmmetrics.ResultAuth},
		{"AuthFailure.UnauthorizedOperation", ccmmetrics.ResultAuth},
		{"AuthFailure.CamRoleNameAuthenticateFailed", ccmmetrics.ResultAuth},
		{"UnauthorizedOperation", ccmmetrics.ResultAuth},
		{"UnauthorizedOperation.CamNoAuth", ccmmetrics.ResultAuth},
		{"UnauthorizedOperation.InvalidToken", ccmmetrics.ResultAuth},
		{"UnauthorizedOperation.PermissionDenied", ccmmetrics.ResultAuth},

		{"ResourceNotFound", ccmmetrics.ResultNotFound},
		{"ResourceNotFound.RouteTableNotFound", ccmmetrics.ResultNotFound},
		{"InternalError.RouteTableNotFound", ccmmetrics.ResultNotFound},
		{"InvalidParameter.LBIdNotFound", ccmmetrics.ResultNotFound},
		{"InvalidParameter.ListenerIdNotFound", ccmmetrics.ResultNotFound},
		{"InvalidInstanceId.NotFound", ccmmetrics.ResultNotFound},

		// A business rule refused, not the caller.
		{"UnauthorizedOperation.VpcPeerCidrConflict", ccmmetrics.ResultError},
		{"LimitExceeded", ccmmetrics.ResultError}, // a quota, not the rate limit
		{"FailedOperation.ResourceInOperating", ccmmetrics.ResultError},
		{"FailedOperation.FrequencyCheckRisk", ccmmetrics.ResultError},
		{"InvalidParameter.PortCheckFailed", ccmmetrics.ResultError},
		{"InvalidParameter.RegionNotFound", ccmmetrics.ResultError}, // the config's region, not an object
		{"InternalError", ccmmetrics.ResultError},
		{"HTTP400", ccmmetrics.ResultError},
		{"HTTP502", ccmmetrics.ResultError},
		{"NetworkError", ccmmetrics.ResultError},
		{"ParseError", ccmmetrics.ResultError},
	}
	for _, tt := range tests {
		if got := Result(tt.code); got != tt.want {
			t.Errorf("Result(%q) = %q, want %q", tt.code, got, tt.want)
		}
	}
}
