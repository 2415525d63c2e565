package ocierr

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

type svcErr struct {
	status int
	code   string
}

func (e svcErr) Error() string           { return "long SDK message\nwith troubleshooting tips" }
func (e svcErr) GetHTTPStatusCode() int  { return e.status }
func (e svcErr) GetMessage() string      { return "Authorization failed or requested resource not found." }
func (e svcErr) GetCode() string         { return e.code }
func (e svcErr) GetOpcRequestID() string { return "req-42" }

func TestWrap(t *testing.T) {
	if Wrap("GetInstance", "x", nil) != nil {
		t.Fatal("Wrap(nil) is not nil")
	}
	tests := []struct {
		name     string
		err      error
		want     string
		status   int
		code     string
		notFound bool
	}{
		{name: "service error", err: svcErr{404, "NotAuthorizedOrNotFound"},
			want:   "GetInstance ocid1.instance.x: [NotAuthorizedOrNotFound] Authorization failed or requested resource not found. (HTTP 404, request id req-42)",
			status: 404, code: "NotAuthorizedOrNotFound", notFound: true},
		{name: "throttle", err: svcErr{429, "TooManyRequests"}, want: "[TooManyRequests] Authorization failed or requested resource not found. (HTTP 429, request id req-42)", status: 429, code: "TooManyRequests"},
		{name: "network", err: errors.New("dial tcp: connection refused"), want: "GetInstance ocid1.instance.x: dial tcp: connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := fmt.Errorf("node n: %w", Wrap("GetInstance", "ocid1.instance.x", tt.err))
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("message = %q, want it to contain %q on one line", err.Error(), tt.want)
			}
			if Status(err) != tt.status || Code(err) != tt.code || IsNotFound(err) != tt.notFound {
				t.Errorf("Status/Code/IsNotFound = %d/%q/%v", Status(err), Code(err), IsNotFound(err))
			}
			if !errors.Is(err, tt.err) {
				t.Error("the SDK's error is not unwrapped")
			}
		})
	}
	// The SDK's own error, unwrapped, is classified the same way.
	if !IsNotFound(svcErr{404, "NotAuthorizedOrNotFound"}) || Status(svcErr{500, "InternalServerError"}) != 500 {
		t.Error("raw SDK errors are not classified")
	}
}
