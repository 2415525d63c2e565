package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// AllActions is the Fault.Action that applies to every action without a
// fault of its own.
const AllActions = "*"

// DefaultFaultCode is the error code of a fault that names none.
const DefaultFaultCode = "InternalError"

// Fault makes calls to one action (or AllActions) fail and/or slow.
//
// A call first waits Latency; then, with probability ErrorRate, it fails:
// with HTTP status HTTPStatus if set, else with a normal error answer whose
// code is ErrorCode. A fault with ErrorRate 0 only adds latency.
//
// With FailTask set the call itself succeeds (after Latency), and it is the
// asynchronous task the call starts that fails, with probability ErrorRate
// (see Tasks). ErrorCode then appears in the task's failure message.
//
// With Times set, the fault fails that many calls (or tasks) and then
// clears itself: "the next two CreateListener calls are refused".
type Fault struct {
	Action     string        `json:"action"`
	ErrorRate  float64       `json:"errorRate"`            // 0..1; 1 = every call fails
	ErrorCode  string        `json:"errorCode"`            // default "InternalError"
	HTTPStatus int           `json:"httpStatus,omitempty"` // e.g. 500, 503: answer this status instead
	Latency    time.Duration `json:"latency,omitempty"`    // JSON: nanoseconds, or a string like "2s"
	FailTask   bool          `json:"failTask,omitempty"`   // fail the call's async task, not the call
	Times      int           `json:"times,omitempty"`      // fail this many calls, then clear; 0: until cleared
}

// Validate reports what is wrong with f, for the admin API.
func (f Fault) Validate() error {
	switch {
	case f.Action == "":
		return fmt.Errorf("%w: fault: action is required (use %q for all actions)", ErrInvalid, AllActions)
	case f.ErrorRate < 0 || f.ErrorRate > 1 || f.ErrorRate != f.ErrorRate:
		return fmt.Errorf("%w: fault: errorRate %v must be between 0 and 1", ErrInvalid, f.ErrorRate)
	case f.HTTPStatus != 0 && (f.HTTPStatus < 400 || f.HTTPStatus > 599):
		return fmt.Errorf("%w: fault: httpStatus %d must be between 400 and 599 (or 0 for an error answer)", ErrInvalid, f.HTTPStatus)
	case f.FailTask && f.HTTPStatus != 0:
		return fmt.Errorf("%w: fault: failTask fails the task, not the call, so it cannot have an httpStatus", ErrInvalid)
	case f.Latency < 0:
		return fmt.Errorf("%w: fault: latency %v must not be negative", ErrInvalid, f.Latency)
	case f.Times < 0:
		return fmt.Errorf("%w: fault: times %d must not be negative (0: until cleared)", ErrInvalid, f.Times)
	case f.Latency > 10*time.Minute:
		return fmt.Errorf("%w: fault: latency %v is longer than 10m", ErrInvalid, f.Latency)
	}
	return nil
}

// normalize clamps f into a valid fault and fills defaults.
func (f Fault) normalize() Fault {
	if f.Action == "" {
		f.Action = AllActions
	}
	if f.ErrorRate != f.ErrorRate || f.ErrorRate < 0 {
		f.ErrorRate = 0
	}
	if f.ErrorRate > 1 {
		f.ErrorRate = 1
	}
	if f.ErrorCode == "" {
		f.ErrorCode = DefaultFaultCode
	}
	if f.HTTPStatus != 0 && (f.HTTPStatus < 400 || f.HTTPStatus > 599) || f.FailTask {
		f.HTTPStatus = 0
	}
	if f.Latency < 0 {
		f.Latency = 0
	}
	if f.Times < 0 {
		f.Times = 0
	}
	return f
}

// Code is the result code under which a failed call is counted: the error
// code, or "HTTP<status>" for a status fault.
func (f Fault) Code() string {
	if f.HTTPStatus != 0 {
		return fmt.Sprintf("HTTP%d", f.HTTPStatus)
	}
	if f.ErrorCode == "" {
		return DefaultFaultCode
	}
	return f.ErrorCode
}

type faultJSON struct {
	Action     string          `json:"action"`
	ErrorRate  float64         `json:"errorRate"`
	ErrorCode  string          `json:"errorCode"`
	HTTPStatus int             `json:"httpStatus,omitempty"`
	Latency    json.RawMessage `json:"latency,omitempty"`
	FailTask   bool            `json:"failTask,omitempty"`
	Times      int             `json:"times,omitempty"`
}

// MarshalJSON writes Latency as a duration string ("1.5s").
func (f Fault) MarshalJSON() ([]byte, error) {
	j := faultJSON{Action: f.Action, ErrorRate: f.ErrorRate, ErrorCode: f.ErrorCode, HTTPStatus: f.HTTPStatus, FailTask: f.FailTask, Times: f.Times}
	if f.Latency != 0 {
		j.Latency, _ = json.Marshal(f.Latency.String())
	}
	return json.Marshal(j)
}

// UnmarshalJSON accepts Latency as integer nanoseconds or a duration string.
// Unknown fields are rejected.
func (f *Fault) UnmarshalJSON(b []byte) error {
	var j faultJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return fmt.Errorf("fault: %w", err)
	}
	*f = Fault{Action: j.Action, ErrorRate: j.ErrorRate, ErrorCode: j.ErrorCode, HTTPStatus: j.HTTPStatus, FailTask: j.FailTask, Times: j.Times}
	if len(j.Latency) == 0 || string(j.Latency) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(j.Latency, &s); err == nil {
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("fault: latency %q: %w", s, err)
		}
		f.Latency = d
		return nil
	}
	var ns int64
	if err := json.Unmarshal(j.Latency, &ns); err != nil {
		return fmt.Errorf("fault: latency must be integer nanoseconds or a duration string like \"2s\", got %s", j.Latency)
	}
	f.Latency = time.Duration(ns)
	return nil
}
