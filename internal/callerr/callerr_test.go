package callerr

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	tcerr "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/errors"
)

// ociAnswer stands for the OCI SDK's service error (unexported there):
// the methods of its common.ServiceError interface, and a message that
// runs to many lines.
type ociAnswer struct {
	status int
	code   string
}

func (e ociAnswer) Error() string          { return "long SDK message\nwith troubleshooting tips" }
func (e ociAnswer) GetHTTPStatusCode() int { return e.status }
func (e ociAnswer) GetMessage() string {
	return "Authorization failed or requested resource not found."
}
func (e ociAnswer) GetCode() string         { return e.code }
func (e ociAnswer) GetOpcRequestID() string { return "req-42" }

// TestError: both clouds' answers render in one shape (operation, object,
// then "[Code] Message (HTTP status, request id R)"), and the error
// unwraps to the caller's Kind and the SDK's error.
func TestError(t *testing.T) {
	errKind := errors.New("a kind")
	refused := tcerr.NewTencentCloudSDKError("InvalidParameter.PortCheckFailed", "port in use", "req-1")
	network := tcerr.NewTencentCloudSDKErrorWithCause("ClientError.NetworkError", "Fail to get response", "", syscall.ECONNREFUSED)
	tests := []struct {
		name     string
		err      *Error
		want     string
		wantCode string
		wantKind bool
	}{
		{
			name:     "cloud answer",
			err:      &Error{Action: "CreateListener", Target: "on CLB lb-12345678", Err: refused},
			want:     "CreateListener on CLB lb-12345678: [InvalidParameter.PortCheckFailed] port in use (request id req-1)",
			wantCode: "InvalidParameter.PortCheckFailed",
		},
		{
			name:     "no answer keeps the cause",
			err:      &Error{Action: "DescribeInstances", Target: `for node "n1"`, Err: network},
			want:     `DescribeInstances for node "n1": [ClientError.NetworkError] Fail to get response: connection refused`,
			wantCode: "ClientError.NetworkError",
		},
		{
			name:     "kind and hint",
			err:      &Error{Action: "CreateClusterRoute", Target: "in table t", Kind: errKind, Hint: "do this", Err: refused},
			want:     "CreateClusterRoute in table t: [InvalidParameter.PortCheckFailed] port in use (request id req-1) (do this)",
			wantCode: "InvalidParameter.PortCheckFailed",
			wantKind: true,
		},
		{
			name:     "OCI answer",
			err:      &Error{Action: "GetInstance", Target: "ocid1.instance.x", Err: ociAnswer{404, "NotAuthorizedOrNotFound"}},
			want:     "GetInstance ocid1.instance.x: [NotAuthorizedOrNotFound] Authorization failed or requested resource not found. (HTTP 404, request id req-42)",
			wantCode: "NotAuthorizedOrNotFound",
		},
		{
			name: "not an SDK error",
			err:  &Error{Action: "DescribeVpcs", Target: "for vpc-1", Err: errors.New("malformed answer: no Response")},
			want: "DescribeVpcs for vpc-1: malformed answer: no Response",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wrapped := fmt.Errorf("ensure: %w", tc.err)
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("Error() = %q\nwant      %q", got, tc.want)
			}
			if got := Code(wrapped); got != tc.wantCode {
				t.Errorf("Code = %q, want %q", got, tc.wantCode)
			}
			if got := errors.Is(wrapped, errKind); got != tc.wantKind {
				t.Errorf("errors.Is(kind) = %v, want %v", got, tc.wantKind)
			}
			if !errors.Is(wrapped, tc.err.Err) {
				t.Error("does not unwrap to the SDK error")
			}
			var ce *Error
			if !errors.As(wrapped, &ce) || ce.Action != tc.err.Action {
				t.Error("errors.As does not find the Error")
			}
		})
	}
}
