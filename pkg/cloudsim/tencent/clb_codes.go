package tencent

import (
	"errors"
	"slices"
	"strings"
)

// Codes the CLB handlers answer that not every action documents.
const (
	codeResourceInOperating = "FailedOperation.ResourceInOperating"
	codeFrequencyCheckRisk  = "FailedOperation.FrequencyCheckRisk"
)

// clbDocumentedCodes are the action-specific error codes the SDK lists for
// each emulated CLB action ("可能返回的错误码" above each method of
// tencentcloud-sdk-go clb@v1.3.105 v20180317/client.go). Codes without a dot
// (InvalidParameter, FailedOperation, LimitExceeded, ...) are Tencent's
// common error codes, valid for every action, and are not listed.
//
// Examples that matter to clients: FailedOperation.ResourceInOperating is
// documented for ModifyLoadBalancerAttributes, CreateListener,
// ModifyListener, DeleteLoadBalancerListeners, RegisterTargets,
// BatchRegisterTargets and ModifyTargetWeight, but not for
// DeleteLoadBalancer, DeleteListener, DeregisterTargets or
// BatchDeregisterTargets; InvalidParameter.ListenerIdNotFound and
// InvalidParameter.LBIdNotFound are not documented for DeleteListener.
var clbDocumentedCodes = map[string][]string{
	"CreateLoadBalancer": {"InvalidParameter.ClientTokenLimitExceeded", "InvalidParameter.FormatError",
		"InvalidParameterValue.Length", "InvalidParameterValue.Range"},
	"DescribeLoadBalancers": {"InvalidParameter.FormatError", "InvalidParameter.RegionNotFound",
		"InvalidParameterValue.InvalidFilter", "InvalidParameterValue.Length", "InvalidParameterValue.Range"},
	"DeleteLoadBalancer": {"FailedOperation.EipTrafficCheckRisk", codeFrequencyCheckRisk, "FailedOperation.TargetNumCheckRisk",
		"FailedOperation.TrafficCheckRisk", "InvalidParameter.FormatError", "InvalidParameter.LBIdNotFound",
		"InvalidParameterValue.Length"},
	"ModifyLoadBalancerAttributes": {codeResourceInOperating, "InvalidParameter.FormatError", "InvalidParameter.LBIdNotFound",
		"InvalidParameter.RegionNotFound", "InvalidParameterValue.Duplicate", "InvalidParameterValue.Length"},
	"DescribeQuota": {"InvalidParameter.FormatError"},
	"CreateListener": {codeResourceInOperating, "InvalidParameter.FormatError", "InvalidParameter.PortCheckFailed",
		"InvalidParameterValue.Length"},
	"DescribeListeners": {"InvalidParameter.FormatError", "InvalidParameter.LBIdNotFound", "InvalidParameter.RegionNotFound",
		"InvalidParameterValue.InvalidFilter", "InvalidParameterValue.Length"},
	"ModifyListener":              {codeResourceInOperating, "InvalidParameter.FormatError", "InvalidParameterValue.Length"},
	"DeleteListener":              {"InvalidParameter.FormatError", "InvalidParameterValue.Length"},
	"DeleteLoadBalancerListeners": {codeResourceInOperating, "InvalidParameter.FormatError", "InvalidParameterValue.Length"},
	"RegisterTargets": {codeResourceInOperating, "InvalidParameter.FormatError", "InvalidParameterValue.Duplicate",
		"InvalidParameterValue.Length"},
	"DeregisterTargets": {"InvalidParameter.FormatError", "InvalidParameterValue.Duplicate", "InvalidParameterValue.Length"},
	"BatchRegisterTargets": {codeResourceInOperating, "InvalidParameter.FormatError", "InvalidParameter.LBIdNotFound",
		"InvalidParameter.ListenerIdNotFound", "InvalidParameter.LocationNotFound", "InvalidParameter.PortCheckFailed",
		"InvalidParameter.ProtocolCheckFailed", "InvalidParameter.RegionNotFound", "InvalidParameterValue.Length"},
	"BatchDeregisterTargets": {"InvalidParameter.FormatError", "InvalidParameter.LBIdNotFound",
		"InvalidParameter.ListenerIdNotFound", "InvalidParameter.LocationNotFound", "InvalidParameter.PortCheckFailed",
		"InvalidParameter.ProtocolCheckFailed", "InvalidParameter.RegionNotFound", "InvalidParameterValue.Duplicate",
		"InvalidParameterValue.Length", "InvalidParameterValue.Range"},
	"ModifyTargetWeight": {codeResourceInOperating, "InvalidParameter.FormatError", "InvalidParameterValue.Duplicate",
		"InvalidParameterValue.Length"},
	"BatchModifyTargetWeight": {"InvalidParameter.FormatError", "InvalidParameterValue.Length"},
	"DescribeTargets":         {"InvalidParameter.FormatError", "InvalidParameterValue.InvalidFilter", "InvalidParameterValue.Length"},
	"DescribeTargetHealth":    {"InvalidParameter.FormatError", "InvalidParameter.LBIdNotFound", "InvalidParameterValue.Length"},
	"DescribeTaskStatus":      {"InvalidParameter.RegionNotFound"},
	"CreateRule":              {codeResourceInOperating, "InvalidParameter.FormatError", "InvalidParameterValue.Length"},
	"ModifyRule":              {codeResourceInOperating, "InvalidParameter.FormatError", "InvalidParameterValue.Length"},
	"DeleteRule":              {codeResourceInOperating, "InvalidParameter.FormatError", "InvalidParameterValue.Length"},
}

// documentedCode returns the code action answers for code: code itself if
// it is a common code or the SDK lists it for action, else its common
// prefix (InvalidParameter.ListenerIdNotFound -> InvalidParameter,
// FailedOperation.ResourceInOperating -> FailedOperation). The message,
// which says what happened, is kept.
func documentedCode(action, code string) string {
	prefix, _, dotted := strings.Cut(code, ".")
	list, known := clbDocumentedCodes[action]
	if !dotted || !known || slices.Contains(list, code) {
		return code
	}
	return prefix
}

// documented wraps a CLB handler so that it answers only error codes its
// action documents: a client written against the SDK's list must never see
// another one from cloudsim.
func documented(action string, h ActionFunc) ActionFunc {
	return func(call *Call, body []byte) (any, error) {
		resp, err := h(call, body)
		var e *Error
		if errors.As(err, &e) {
			if c := documentedCode(action, e.Code); c != e.Code {
				return nil, &Error{Code: c, Message: e.Message}
			}
		}
		return resp, err
	}
}
