// Package ocierr names failed OCI API calls and classifies their errors,
// for the OCI provider and its operations layer.
package ocierr

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/oracle/oci-go-sdk/v65/common"
)

// APIError is a failed OCI API call, named by operation and object. Its
// message is short (the SDK's own runs to a dozen lines of troubleshooting
// tips) and keeps what an operator needs: status, OCI error code, message
// and the opc-request-id that Oracle support asks for. Unwrap returns the
// SDK's error.
type APIError struct {
	Operation string // e.g. GetInstance
	Object    string // e.g. the instance OCID; may be empty
	Status    int    // HTTP status; 0 when the call never got an answer
	Code      string // OCI error code, e.g. NotAuthorizedOrNotFound
	Message   string
	RequestID string
	err       error
}

func (e *APIError) Error() string {
	what := e.Operation
	if e.Object != "" {
		what += " " + e.Object
	}
	if e.Status == 0 {
		return fmt.Sprintf("OCI %s: %v", what, e.err)
	}
	msg := fmt.Sprintf("OCI %s: %d %s", what, e.Status, e.Code)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.RequestID != "" {
		msg += " (opc-request-id " + e.RequestID + ")"
	}
	return msg
}

func (e *APIError) Unwrap() error { return e.err }

// Wrap wraps err from operation op on object; nil stays nil.
func Wrap(op, object string, err error) error {
	if err == nil {
		return nil
	}
	e := &APIError{Operation: op, Object: object, err: err}
	if se, ok := common.IsServiceError(err); ok {
		e.Status, e.Code, e.Message, e.RequestID = se.GetHTTPStatusCode(), se.GetCode(), se.GetMessage(), se.GetOpcRequestID()
	}
	return e
}

// IsNotFound reports an OCI 404. OCI answers 404 NotAuthorizedOrNotFound
// both for a missing resource and for one the caller may not see, so on
// its own it proves nothing about existence.
func IsNotFound(err error) bool {
	var e *APIError
	if errors.As(err, &e) {
		return e.Status == http.StatusNotFound
	}
	se, ok := common.IsServiceError(err)
	return ok && se.GetHTTPStatusCode() == http.StatusNotFound
}

// Status returns the HTTP status of a failed call, or 0.
func Status(err error) int {
	var e *APIError
	if errors.As(err, &e) {
		return e.Status
	}
	if se, ok := common.IsServiceError(err); ok {
		return se.GetHTTPStatusCode()
	}
	return 0
}

// Code returns the OCI error code of a failed call, or "".
func Code(err error) string {
	var e *APIError
	if errors.As(err, &e) {
		return e.Code
	}
	if se, ok := common.IsServiceError(err); ok {
		return se.GetCode()
	}
	return ""
}
