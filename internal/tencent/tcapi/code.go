package tcapi

import (
	"errors"

	tcerr "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/errors"
)

// A failed call is a *callerr.Error, the shape both clouds' call errors
// share (internal/callerr).

// Code returns the Tencent error code in err, or "".
func Code(err error) string {
	var sdkErr *tcerr.TencentCloudSDKError
	if errors.As(err, &sdkErr) {
		return sdkErr.Code
	}
	return ""
}
