// Package ocierr names failed OCI API calls and classifies their errors,
// for the OCI provider and its operations layer.
package ocierr

import (
	"net/http"

	"github.com/ccmkit/ccm/internal/callerr"
)

// Wrap names a failed call of operation op on object, in the shape both
// clouds' call errors share (callerr.Error): its message is one line (the
// SDK's own runs to a dozen lines of troubleshooting tips) and keeps what
// an operator needs: OCI error code, message, HTTP status and the
// opc-request-id that Oracle support asks for. nil stays nil.
func Wrap(op, object string, err error) error {
	if err == nil {
		return nil
	}
	return &callerr.Error{Action: op, Target: object, Err: err}
}

// IsNotFound reports an OCI 404. OCI answers 404 NotAuthorizedOrNotFound
// both for a missing resource and for one the caller may not see, so on
// its own it proves nothing about existence.
func IsNotFound(err error) bool { return Status(err) == http.StatusNotFound }

// Status returns the HTTP status of a failed call, or 0.
func Status(err error) int { return callerr.Status(err) }

// Code returns the OCI error code of a failed call, or "".
func Code(err error) string { return callerr.Code(err) }
