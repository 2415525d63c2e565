package tcapi

import (
	"errors"
	"fmt"

	tcerr "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/errors"
)

// CallError is a failed Tencent Cloud API call, for every Tencent caller
// (instances, routes, CLBs). Its message follows the rule both clouds'
// errors follow: the operation, then the object, then the cloud's answer:
//
//	CreateListener on CLB lb-12345678: [InvalidParameter.PortCheckFailed] … (request id R)
//
// Target carries its own preposition ("on CLB …", "for node …", "in TKE
// route table …") so that the line reads as a sentence. It unwraps to Kind
// (a caller's sentinel classifying the failure, or nil) and to the SDK
// error, so errors.Is and errors.As see both.
type CallError struct {
	Action string // e.g. CreateListener
	Target string // e.g. "on CLB lb-12345678"
	Kind   error  // optional: a sentinel the caller matches with errors.Is
	Hint   string // optional: what happens next or what to do, appended in parentheses
	Err    error
}

func (e *CallError) Error() string {
	msg := fmt.Sprintf("%s %s: %s", e.Action, e.Target, Describe(e.Err))
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

func (e *CallError) Unwrap() []error {
	if e.Kind == nil {
		return []error{e.Err}
	}
	return []error{e.Kind, e.Err}
}

// Describe renders an SDK error as "[Code] Message (request id R)",
// keeping the cause of a call that never got an answer (network errors,
// timeouts); any other error as its own text.
func Describe(err error) string {
	var sdkErr *tcerr.TencentCloudSDKError
	if !errors.As(err, &sdkErr) {
		return err.Error()
	}
	msg := fmt.Sprintf("[%s] %s", sdkErr.Code, sdkErr.Message)
	if sdkErr.RequestId != "" {
		msg += " (request id " + sdkErr.RequestId + ")"
	}
	if cause := errors.Unwrap(sdkErr); cause != nil {
		msg += ": " + cause.Error()
	}
	return msg
}

// Code returns the Tencent error code in err, or "".
func Code(err error) string {
	var sdkErr *tcerr.TencentCloudSDKError
	if errors.As(err, &sdkErr) {
		return sdkErr.Code
	}
	return ""
}
