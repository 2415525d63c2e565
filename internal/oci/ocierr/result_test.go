package ocierr

import (
	"testing"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
)

// Every common OCI error code (OCI API Errors, "Common Errors Returned by
// All Services"), HTTP<status> codes of answers without one, and what each
// comes to.
func TestResult(t *testing.T) {
	tests := []struct {
		code string
		want ccmmetrics.Result
	}{
		{"OK", ccmmetrics.ResultOK},
		{"TooManyRequests", ccmmetrics.ResultThrottled},
		{"HTTP429", ccmmetrics.ResultThrottled},
		{"NotAuthenticated", ccmmetrics.ResultAuth},
		{"NotAuthorized", ccmmetrics.ResultAuth},
		{"NotAuthorizedOrNotFound", ccmmetrics.ResultNotFound},

		{"CannotParseRequest", ccmmetrics.ResultError},
		{"InvalidParameter", ccmmetrics.ResultError},
		{"LimitExceeded", ccmmetrics.ResultError}, // a tenancy limit, not the rate limit
		{"MissingParameter", ccmmetrics.ResultError},
		{"QuotaExceeded", ccmmetrics.ResultError},
		{"RelatedResourceNotAuthorizedOrNotFound", ccmmetrics.ResultError},
		{"NotAllowed", ccmmetrics.ResultError},
		{"SignUpRequired", ccmmetrics.ResultError},
		{"MethodNotAllowed", ccmmetrics.ResultError},
		{"IncorrectState", ccmmetrics.ResultError},
		{"NotAuthorizedOrResourceAlreadyExists", ccmmetrics.ResultError},
		{"Conflict", ccmmetrics.ResultError},
		{"NoEtagMatch", ccmmetrics.ResultError},
		{"InternalServerError", ccmmetrics.ResultError},
		{"MethodNotImplemented", ccmmetrics.ResultError},
		{"ServiceUnavailable", ccmmetrics.ResultError},
		{"HTTP500", ccmmetrics.ResultError},
		{"NotFound", ccmmetrics.ResultError}, // no such operation: our bug, not a gone object
		{"ExternalServerIncorrectState", ccmmetrics.ResultError},
		{"InvalidatedRetryToken", ccmmetrics.ResultError},
		{"HTTP401", ccmmetrics.ResultError}, // no OCI code: a proxy's answer
		{"HTTP403", ccmmetrics.ResultError},
		{"HTTP404", ccmmetrics.ResultError},
		{"NetworkError", ccmmetrics.ResultError},
	}
	for _, tt := range tests {
		if got := Result(tt.code); got != tt.want {
			t.Errorf("Result(%q) = %q, want %q", tt.code, got, tt.want)
		}
	}
}
