package oci

import (
	"fmt"
	"net/http"
)

// Error is an OCI API error answer: an HTTP status and the body
// {"code": ..., "message": ...} that oci-go-sdk turns into a
// common.ServiceError.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

// Errorf returns an *Error.
func Errorf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// The OCI error codes cloudsim answers, from the API's list of common
// errors (docs.oracle.com/iaas/Content/API/References/apierrors.htm).
const (
	CodeCannotParseRequest      = "CannotParseRequest"                     // 400
	CodeInvalidParameter        = "InvalidParameter"                       // 400
	CodeMissingParameter        = "MissingParameter"                       // 400
	CodeLimitExceeded           = "LimitExceeded"                          // 400
	CodeRelatedResourceNotFound = "RelatedResourceNotAuthorizedOrNotFound" // 400
	CodeNotAuthenticated        = "NotAuthenticated"                       // 401
	CodeNotAuthorizedOrNotFound = "NotAuthorizedOrNotFound"                // 404
	CodeNotFound                = "NotFound"                               // 404: no such operation
	CodeMethodNotAllowed        = "MethodNotAllowed"                       // 405
	CodeIncorrectState          = "IncorrectState"                         // 409
	CodeInvalidatedRetryToken   = "InvalidatedRetryToken"                  // 409
	CodeAlreadyExists           = "NotAuthorizedOrResourceAlreadyExists"   // 409
	CodeConflict                = "Conflict"                               // 409: NLB busy (balancers.go)
	CodeNoEtagMatch             = "NoEtagMatch"                            // 412
	CodeTooManyRequests         = "TooManyRequests"                        // 429
	CodeInternalServerError     = "InternalServerError"                    // 500
	CodeServiceUnavailable      = "ServiceUnavailable"                     // 503
)

// statusOfCode is the HTTP status each known code comes with, for injected
// faults that name a code but no status.
var statusOfCode = map[string]int{
	CodeCannotParseRequest:      http.StatusBadRequest,
	CodeInvalidParameter:        http.StatusBadRequest,
	CodeMissingParameter:        http.StatusBadRequest,
	CodeLimitExceeded:           http.StatusBadRequest,
	"QuotaExceeded":             http.StatusBadRequest,
	CodeRelatedResourceNotFound: http.StatusBadRequest,
	CodeNotAuthenticated:        http.StatusUnauthorized,
	"NotAuthorized":             http.StatusForbidden,
	CodeNotAuthorizedOrNotFound: http.StatusNotFound,
	CodeNotFound:                http.StatusNotFound,
	CodeMethodNotAllowed:        http.StatusMethodNotAllowed,
	CodeIncorrectState:          http.StatusConflict,
	CodeInvalidatedRetryToken:   http.StatusConflict,
	CodeAlreadyExists:           http.StatusConflict,
	"Conflict":                  http.StatusConflict,
	CodeNoEtagMatch:             http.StatusPreconditionFailed,
	CodeTooManyRequests:         http.StatusTooManyRequests,
	CodeInternalServerError:     http.StatusInternalServerError,
	"InternalError":             http.StatusInternalServerError, // core's default fault code
	CodeServiceUnavailable:      http.StatusServiceUnavailable,
}

// codeOfStatus is the code cloudsim answers with for an injected status
// fault that names no code of its own.
var codeOfStatus = map[int]string{
	http.StatusBadRequest:          CodeInvalidParameter,
	http.StatusUnauthorized:        CodeNotAuthenticated,
	http.StatusForbidden:           "NotAuthorized",
	http.StatusNotFound:            CodeNotAuthorizedOrNotFound,
	http.StatusConflict:            CodeIncorrectState,
	http.StatusPreconditionFailed:  CodeNoEtagMatch,
	http.StatusTooManyRequests:     CodeTooManyRequests,
	http.StatusInternalServerError: CodeInternalServerError,
	http.StatusServiceUnavailable:  CodeServiceUnavailable,
}

func badRequest(format string, args ...any) *Error {
	return Errorf(http.StatusBadRequest, CodeInvalidParameter, format, args...)
}

func missing(param string) *Error {
	return Errorf(http.StatusBadRequest, CodeMissingParameter, "Missing required parameter: %s.", param)
}

func notFound(kind, id string) *Error {
	return Errorf(http.StatusNotFound, CodeNotAuthorizedOrNotFound,
		"Authorization failed or requested resource not found: %s %s.", kind, id)
}

func incorrectState(format string, args ...any) *Error {
	return Errorf(http.StatusConflict, CodeIncorrectState, format, args...)
}

func relatedNotFound(kind, id string) *Error {
	return Errorf(http.StatusBadRequest, CodeRelatedResourceNotFound,
		"The %s %s given in the request body was not found, or you are not authorized to use it.", kind, id)
}
