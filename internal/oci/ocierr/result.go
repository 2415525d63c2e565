package ocierr

import "github.com/ccmkit/ccm/internal/ccmmetrics"

// Result classifies a result code recorded by the OCI client transport
// (OK, an OCI error code, HTTP<status> for an answer without one,
// NetworkError) for the cloud API metrics' result label. Codes: OCI API
// Errors, "Common Errors Returned by All Services"
// (https://docs.oracle.com/en-us/iaas/Content/API/References/apierrors.htm).
func Result(code string) ccmmetrics.Result {
	switch code {
	case ccmmetrics.CodeOK:
		return ccmmetrics.ResultOK
	case "TooManyRequests", "HTTP429": // 429
		return ccmmetrics.ResultThrottled
	case "NotAuthenticated", // 401: key, fingerprint, user, tenancy or clock
		"NotAuthorized": // 403: no permission to update one of the fields
		return ccmmetrics.ResultAuth
	case "NotAuthorizedOrNotFound": // 404: the object in the path is gone, or no policy shows it
		return ccmmetrics.ResultNotFound
	}
	// Among them 400 RelatedResourceNotAuthorizedOrNotFound (an object in
	// the body, a subnet or an NSG, is wrong: a request to fix), 404
	// NotFound (no such operation), 403 NotAllowed (home region only), 409
	// IncorrectState, 5xx, and an answer without a code other than 429 (a
	// proxy's, not OCI's).
	return ccmmetrics.ResultError
}
