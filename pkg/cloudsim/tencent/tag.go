package tencent

import "strings"

// The Tag API (tag 2018-08-13), as far as CLB needs it: adding tags to an
// existing load balancer, which CLB's own API cannot do (its tags are set
// only by CreateLoadBalancer). The Go module proxy here serves no version
// of the SDK's tag module, so the request is decoded into a struct with
// the SDK's field names (tencentcloud-sdk-go tag/v20180813/models.go,
// AttachResourcesTagRequestParams).

// TagVersion is the Tag API's version.
const TagVersion = "2018-08-13"

// MaxTagResourceIDs: AttachResourcesTag ResourceIds "资源个数最多为50"
// (AttachResourcesTagRequestParams).
const MaxTagResourceIDs = 50

// MaxResourceTags is how many tags one load balancer may carry through the
// Tag API: cloudsim's choice (the Tag docs' per-resource limit, 50; the
// error LimitExceeded.ResourceAttachedTags is documented for the action).
const MaxResourceTags = 50

type attachResourcesTagRequest struct {
	ServiceType    *string   `json:"ServiceType"`
	ResourceIds    []*string `json:"ResourceIds"`
	TagKey         *string   `json:"TagKey"`
	TagValue       *string   `json:"TagValue"`
	ResourceRegion *string   `json:"ResourceRegion"`
	ResourcePrefix *string   `json:"ResourcePrefix"`
}

type attachResourcesTagResponse struct {
	RequestId *string `json:"RequestId"`
}

// TagService is the tag service for Dialect.Register, acting on l's load
// balancers.
func (l *CLB) TagService() *Service {
	return &Service{Name: "tag", Version: TagVersion, Actions: map[string]Action{
		// No documented rate limit was found; the clients' fallback (20/s)
		// applies on their side.
		"AttachResourcesTag": {Handler: l.attachResourcesTag},
	}}
}

// attachResourcesTag attaches one tag to load balancers. Error codes are
// those the SDK documents for the action (tag@v20180813 client.go).
// Resources of other products are not emulated: cloudsim's choice is to
// refuse them with InvalidParameterValue.ServiceTypeInvalid, saying so.
func (l *CLB) attachResourcesTag(call *Call, body []byte) (any, error) {
	var req attachResourcesTagRequest
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	key, value := ptrStr(req.TagKey), ptrStr(req.TagValue)
	switch {
	case ptrStr(req.ServiceType) != "clb":
		return nil, Errorf("InvalidParameterValue.ServiceTypeInvalid", "ServiceType `%s`: cloudsim emulates the tags of clb resources only.", ptrStr(req.ServiceType))
	case ptrStr(req.ResourcePrefix) != "clb":
		return nil, Errorf("InvalidParameterValue.ResourcePrefixInvalid", "ResourcePrefix `%s` is not a clb resource prefix (want `clb`).", ptrStr(req.ResourcePrefix))
	case ptrStr(req.ResourceRegion) == "":
		return nil, Errorf("InvalidParameterValue.RegionInvalid", "ResourceRegion is required for regional resources.")
	case len(req.ResourceIds) == 0:
		return nil, Errorf("InvalidParameter", "ResourceIds is required.")
	case len(req.ResourceIds) > MaxTagResourceIDs:
		return nil, Errorf("LimitExceeded.ResourceNumPerRequest", "At most %d resources per request, got %d.", MaxTagResourceIDs, len(req.ResourceIds))
	case key == "":
		return nil, Errorf("InvalidParameterValue.TagKeyEmpty", "TagKey is required.")
	case strings.ContainsAny(key, "\n\r\t") || strings.ContainsAny(value, "\n\r\t"):
		return nil, Errorf("InvalidParameterValue.TagKeyCharacterIllegal", "Tag keys and values cannot contain control characters.")
	}
	region := ptrStr(req.ResourceRegion)
	l.mu.Lock()
	defer l.mu.Unlock()
	var lbs []*clbLB
	for _, id := range req.ResourceIds {
		lb := l.lbs[ptrStr(id)]
		if lb == nil || lb.region != region {
			return nil, Errorf("InvalidParameterValue.ResourceIdInvalid", "Resource `%s` does not exist in region `%s`.", ptrStr(id), region)
		}
		for _, t := range lb.tags {
			if t.key == key {
				return nil, Errorf("ResourceInUse.TagKeyAttached", "Resource `%s` already has tag key `%s`.", lb.id, key)
			}
		}
		if len(lb.tags) >= MaxResourceTags {
			return nil, Errorf("LimitExceeded.ResourceAttachedTags", "Resource `%s` already has %d tags.", lb.id, len(lb.tags))
		}
		lbs = append(lbs, lb)
	}
	for _, lb := range lbs {
		lb.tags = append(lb.tags, clbTag{key, value})
	}
	return &attachResourcesTagResponse{}, nil
}
