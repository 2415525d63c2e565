package tcapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	tchttp "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/http"
)

// The Tag API (tag 2018-08-13) adds tags to an existing resource: CLB has
// no action of its own for that (its tags are set only by
// CreateLoadBalancer). The Go module proxy serves no version of the SDK's
// tag module here, so the one action the CCM needs is declared below in
// the SDK's own shape (a request embedding tchttp.BaseRequest, sent by
// common.Client.Send exactly as a generated client sends it: signed
// TC3-HMAC-SHA256 JSON-POST to tag.tencentcloudapi.com). The fields and
// their meaning are those of tencentcloud-sdk-go's
// tag/v20180813/models.go, AttachResourcesTagRequestParams.

// TagVersion is the Tag API's version.
const TagVersion = "2018-08-13"

// AttachResourcesTagRequest attaches one tag to resources of one product.
type AttachResourcesTagRequest struct {
	*tchttp.BaseRequest

	// ServiceType: "资源所属业务名称（资源六段式中的第三段）" ("clb").
	ServiceType *string `json:"ServiceType,omitempty" name:"ServiceType"`
	// ResourceIds: "资源ID数组，资源个数最多为50".
	ResourceIds []*string `json:"ResourceIds,omitempty" name:"ResourceIds"`
	TagKey      *string   `json:"TagKey,omitempty" name:"TagKey"`
	TagValue    *string   `json:"TagValue,omitempty" name:"TagValue"`
	// ResourceRegion: "资源所在地域，不区分地域的资源不需要传入该字段，区分地域的资源必填".
	ResourceRegion *string `json:"ResourceRegion,omitempty" name:"ResourceRegion"`
	// ResourcePrefix: "资源前缀（资源六段式中最后一段"/"前面的部分）… 其他云资源必填" ("clb").
	ResourcePrefix *string `json:"ResourcePrefix,omitempty" name:"ResourcePrefix"`
}

// NewAttachResourcesTagRequest returns an empty request for the action.
func NewAttachResourcesTagRequest() *AttachResourcesTagRequest {
	r := &AttachResourcesTagRequest{BaseRequest: &tchttp.BaseRequest{}}
	r.Init().WithApiInfo("tag", TagVersion, "AttachResourcesTag")
	return r
}

// AttachResourcesTagResponse is the action's answer: a RequestId only.
type AttachResourcesTagResponse struct {
	*tchttp.BaseResponse
	Response *struct {
		RequestId *string `json:"RequestId,omitempty" name:"RequestId"`
	} `json:"Response"`
}

// TagClient calls the Tag API.
type TagClient struct{ c *common.Client }

// Tag returns a Tag API client sharing the credential, profile and
// transport of the other clients.
func (s *Clients) Tag() (*TagClient, error) {
	c := common.NewCommonClient(s.cred, s.region, s.profile)
	if c == nil {
		return nil, fmt.Errorf("create Tag client for region %s", s.region)
	}
	s.configure(c)
	return &TagClient{c: c}, nil
}

// AttachResourcesTagWithContext attaches a tag (synchronous: no task).
func (t *TagClient) AttachResourcesTagWithContext(ctx context.Context, req *AttachResourcesTagRequest) (*AttachResourcesTagResponse, error) {
	if req == nil {
		return nil, errors.New("AttachResourcesTag: no request")
	}
	req.SetContext(ctx)
	resp := &AttachResourcesTagResponse{BaseResponse: &tchttp.BaseResponse{}}
	if err := t.c.Send(req, resp); err != nil {
		return nil, err
	}
	return resp, nil
}
