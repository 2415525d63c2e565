// Package callerr is the one shape of a failed cloud API call, for every
// cloud: the operation, then the object, then the cloud's answer.
//
//	CreateListener on CLB lb-12345678: [InvalidParameter.PortCheckFailed] port in use (request id R)
//	GetInstance ocid1.instance…: [NotAuthorizedOrNotFound] Authorization failed… (HTTP 404, request id R)
//
// So an Event or a log line reads the same whichever cloud refused, and
// code that classifies failures (errors.As on *Error) needs no cloud's
// type. Each SDK's error is read through the methods both SDKs expose
// (GetCode, GetMessage, a request id getter, OCI's HTTP status), so this
// package imports no SDK.
package callerr

import (
	"errors"
	"fmt"
	"strings"
)

// Error is a failed cloud API call. It unwraps to Kind (a caller's
// sentinel classifying the failure, or nil) and to the SDK's error, so
// errors.Is and errors.As see both.
type Error struct {
	Action string // the API action: CreateListener, GetInstance
	// Target is what the call was on, carrying its own preposition where
	// the line needs one to read as a sentence ("on CLB lb-1", `for node
	// "n1"`, "in TKE route table rt-1"), or a bare id; may be empty.
	Target string
	Kind   error  // optional: a sentinel the caller matches with errors.Is
	Hint   string // optional: what happens next or what to do, appended in parentheses
	Err    error  // the SDK's error
}

func (e *Error) Error() string {
	msg := e.Action
	if e.Target != "" {
		msg += " " + e.Target
	}
	msg += ": " + Describe(e.Err)
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

func (e *Error) Unwrap() []error {
	if e.Kind == nil {
		return []error{e.Err}
	}
	return []error{e.Kind, e.Err}
}

// answer is a cloud's error answer, as both SDKs' errors expose it.
type answer interface {
	error
	GetCode() string
	GetMessage() string
}

// Describe renders an SDK error as "[Code] Message (HTTP status, request
// id R)", on one line (OCI's own message runs to a dozen lines of tips),
// keeping the cause of a call that never got an answer (network errors,
// timeouts); any other error as its own text.
func Describe(err error) string {
	var a answer
	if err == nil {
		return "<nil>"
	}
	if !errors.As(err, &a) || a.GetCode() == "" {
		return err.Error()
	}
	msg := fmt.Sprintf("[%s] %s", a.GetCode(), a.GetMessage())
	var notes []string
	if s := Status(err); s != 0 {
		notes = append(notes, fmt.Sprintf("HTTP %d", s))
	}
	if id := RequestID(err); id != "" {
		notes = append(notes, "request id "+id)
	}
	if len(notes) > 0 {
		msg += " (" + strings.Join(notes, ", ") + ")"
	}
	if cause := errors.Unwrap(a); cause != nil {
		msg += ": " + cause.Error()
	}
	return msg
}

// Code returns the cloud's error code in err, or "".
func Code(err error) string {
	var a answer
	if errors.As(err, &a) {
		return a.GetCode()
	}
	return ""
}

// Status returns the HTTP status of the cloud's answer in err, or 0 (no
// answer, or a cloud whose errors carry none: Tencent answers 200).
func Status(err error) int {
	var s interface{ GetHTTPStatusCode() int }
	if errors.As(err, &s) {
		return s.GetHTTPStatusCode()
	}
	return 0
}

// RequestID returns the cloud's request id in err (Tencent's RequestId,
// OCI's opc-request-id, which support asks for), or "".
func RequestID(err error) string {
	var tc interface{ GetRequestId() string }
	if errors.As(err, &tc) {
		return tc.GetRequestId()
	}
	var oci interface{ GetOpcRequestID() string }
	if errors.As(err, &oci) {
		return oci.GetOpcRequestID()
	}
	return ""
}
