package tencentcloud

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/lb/lbkit"
	"github.com/ccmkit/ccm/internal/lb/lbspec"
	"github.com/ccmkit/ccm/internal/tencent/clbops"
)

// The values CreateLoadBalancer documents for what the creation-time
// annotations carry (clb v20180317 models.go: InternetAccessible,
// CreateLoadBalancerRequestParams).
var (
	// apiChargeTypes: the annotations take the two postpaid modes
	// (annotations.TKEInternetChargeType); BANDWIDTH_PACKAGE (with a
	// bandwidth package) and BANDWIDTH_PREPAID only extensiveParameters.
	apiChargeTypes       = []string{"BANDWIDTH_POSTPAID_BY_HOUR", "TRAFFIC_POSTPAID_BY_HOUR", "BANDWIDTH_PACKAGE", "BANDWIDTH_PREPAID"}
	addressIPVersions    = []string{"IPV4", "IPV6", "IPV6FULLCHAIN"} // case-insensitive
	vipIsps              = []string{"BGP", "CMCC", "CUCC", "CTCC"}
	bandwidthPkgSubTypes = []string{"SINGLEISP", "BGP", "HIGH_QUALITY_BGP", "SINGLEISP_CMCC", "SINGLEISP_CTCC", "SINGLEISP_CUCC"}
)

// maxBandwidthOut is the top of InternetMaxBandwidthOut for a public
// shared CLB, the kind the CCM creates ("对于公网属性的共享型和独占型 CLB
// 实例，最大出带宽的范围为1Mbps-2048Mbps"; TKE documents the same range),
// the annotation's range.
var maxBandwidthOut = int64(annotations.TKEInternetMaxBandwidthOut.Max)

// extensiveParameters is the part of CreateLoadBalancer that TKE's
// passthrough annotation may set. Decoding refuses any other field.
type extensiveParameters struct {
	AddressIPVersion   *string
	InternetAccessible *struct {
		InternetChargeType      *string
		InternetMaxBandwidthOut *int64
		BandwidthpkgSubType     *string
	}
	BandwidthPackageId *string //nolint:revive // the API's spelling
	VipIsp             *string
	ZoneId             *string //nolint:revive // the API's spelling
	MasterZoneId       *string //nolint:revive // the API's spelling
	SlaveZoneId        *string //nolint:revive // the API's spelling
	LoadBalancerName   *string
	Tags               []struct{ TagKey, TagValue string }
}

// ccmOwnedFields are CreateLoadBalancer fields the CCM sets itself: named
// in the error, so that the user learns which annotation to use instead.
var ccmOwnedFields = map[string]string{
	"LoadBalancerType":         "set from the Service (private with " + string(annotations.TKEInternalSubnetID) + ")",
	"SubnetId":                 "use " + string(annotations.TKEInternalSubnetID),
	"VpcId":                    "the cluster's VPC (the cloud config's vpc_id)",
	"Forward":                  "always an application CLB",
	"ClientToken":              "the CCM's, for idempotent creation",
	"Number":                   "one CLB per Service",
	"LoadBalancerPassToTarget": "use " + annotations.TKEPassToTarget.String(),
	"ProjectId":                "the default project",
}

// creation reads what the CLB is created with. It returns the name
// extensiveParameters gives (""), and warnings for settings that cannot
// apply to this Service's CLB. Every problem is an error before any call.
func creation(svc *v1.Service, p lbspec.Placement) (clbops.Creation, string, []lbkit.Warning, error) {
	var c clbops.Creation
	var errs annotations.Problems

	charge := agreeing(&errs, annotations.TKEInternetChargeType, annotations.TKELegacyInternetChargeType, func(n annotations.Enum) (string, error) {
		return n.FromService(svc)
	})
	bandwidth := agreeing(&errs, annotations.TKEInternetMaxBandwidthOut, annotations.TKELegacyInternetMaxBandwidthOut, func(n annotations.Int) (string, error) {
		v, err := n.FromService(svc)
		return strconv.Itoa(v), err
	})
	c.InternetChargeType = charge
	if bandwidth != "" {
		c.InternetMaxBandwidthOut, _ = strconv.ParseInt(bandwidth, 10, 64)
	}

	ext, err := readExtensive(svc)
	errs.Check(err)
	var name string
	if ext != nil {
		name, err = mergeExtensive(&c, ext)
		errs.Check(err)
	}
	if name != "" && !clbNamePattern.MatchString(name) {
		errs.Check(annotations.TKEExtensiveParameters.Invalid(name, "LoadBalancerName must be 1-80 letters, digits, - or _"))
	}
	if ours, err := annotations.TencentLBName.StringFromService(svc); err == nil && name != "" && ours != name {
		errs.Check(fmt.Errorf("annotations %s (%s) and %s (LoadBalancerName %s) name the CLB differently: set only one of them",
			annotations.TencentLBName, ours, annotations.TKEExtensiveParameters, name))
	}
	if len(errs) > 0 {
		return clbops.Creation{}, "", nil, errors.Join(errs...)
	}
	return c, name, creationWarnings(&c, p), nil
}

// agreeing reads the setting under its name and its legacy name: either
// may be set; both set must say the same.
func agreeing[D annotations.Descriptor](errs *annotations.Problems, name, legacy D, read func(D) (string, error)) string {
	v, err := read(name)
	ok := errs.Check(err)
	lv, lerr := read(legacy)
	lok := errs.Check(lerr)
	switch {
	case ok && lok && v != lv:
		errs.Check(fmt.Errorf("annotations %s (%s) and %s (%s) disagree: set only one of them", name.Key(), v, legacy.Key(), lv))
		return ""
	case ok:
		return v
	case lok:
		return lv
	}
	return ""
}

// readExtensive decodes the passthrough annotation, refusing every field
// it does not know (nil, nil when it is not set).
func readExtensive(svc *v1.Service) (*extensiveParameters, error) {
	raw, err := annotations.TKEExtensiveParameters.StringFromService(svc)
	if err != nil {
		return nil, err
	}
	n := annotations.TKEExtensiveParameters
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &fields); err != nil {
		return nil, n.Invalid(raw, "must be a JSON object: %v", err)
	}
	for _, f := range slices.Sorted(maps.Keys(fields)) {
		if why, owned := ccmOwnedFields[f]; owned {
			return nil, n.Invalid(raw, "field %s is set by the CCM (%s)", f, why)
		}
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.DisallowUnknownFields()
	var ext extensiveParameters
	if err := dec.Decode(&ext); err != nil {
		return nil, n.Invalid(raw, "%s; the accepted fields are AddressIPVersion, InternetAccessible, BandwidthPackageId, VipIsp, ZoneId, MasterZoneId, SlaveZoneId, LoadBalancerName and Tags",
			strings.TrimPrefix(err.Error(), "json: "))
	}
	return &ext, nil
}

// mergeExtensive checks ext's values and merges them into c, which holds
// the dedicated annotations' values; it returns ext's LoadBalancerName.
func mergeExtensive(c *clbops.Creation, ext *extensiveParameters) (string, error) {
	n := annotations.TKEExtensiveParameters
	var errs []error
	enum := func(field string, v *string, allowed []string, foldCase bool) string {
		if v == nil {
			return ""
		}
		for _, a := range allowed {
			if *v == a || (foldCase && strings.EqualFold(*v, a)) {
				return *v
			}
		}
		errs = append(errs, n.Invalid(*v, "%s must be one of %s", field, strings.Join(allowed, ", ")))
		return ""
	}
	same := func(field, ours, theirs string) string {
		if ours != "" && theirs != "" && ours != theirs {
			errs = append(errs, fmt.Errorf("annotation %s: %s %s disagrees with the dedicated annotation's %s: set it in one place", n, field, theirs, ours))
		}
		if ours != "" {
			return ours
		}
		return theirs
	}
	str := func(v *string) string {
		if v == nil {
			return ""
		}
		return *v
	}
	c.AddressIPVersion = enum("AddressIPVersion", ext.AddressIPVersion, addressIPVersions, true)
	c.VipIsp = enum("VipIsp", ext.VipIsp, vipIsps, false)
	c.BandwidthPackageID = str(ext.BandwidthPackageId)
	c.ZoneID, c.MasterZoneID, c.SlaveZoneID = str(ext.ZoneId), str(ext.MasterZoneId), str(ext.SlaveZoneId)
	if ia := ext.InternetAccessible; ia != nil {
		c.InternetChargeType = same("InternetAccessible.InternetChargeType", c.InternetChargeType,
			enum("InternetAccessible.InternetChargeType", ia.InternetChargeType, apiChargeTypes, false))
		c.BandwidthPackageSubType = enum("InternetAccessible.BandwidthpkgSubType", ia.BandwidthpkgSubType, bandwidthPkgSubTypes, false)
		if bw := ia.InternetMaxBandwidthOut; bw != nil {
			if *bw < 1 || *bw > maxBandwidthOut {
				errs = append(errs, n.Invalid(strconv.FormatInt(*bw, 10), "InternetAccessible.InternetMaxBandwidthOut must be 1-%d (Mbps)", maxBandwidthOut))
			} else {
				ours := ""
				if c.InternetMaxBandwidthOut > 0 {
					ours = strconv.FormatInt(c.InternetMaxBandwidthOut, 10)
				}
				v, _ := strconv.ParseInt(same("InternetAccessible.InternetMaxBandwidthOut", ours, strconv.FormatInt(*bw, 10)), 10, 64)
				c.InternetMaxBandwidthOut = v
			}
		}
	}
	for _, t := range ext.Tags {
		switch {
		case t.TagKey == "":
			errs = append(errs, n.Invalid("", "Tags: every tag needs a TagKey"))
		case strings.HasPrefix(t.TagKey, "ccmkit.io/"):
			errs = append(errs, n.Invalid(t.TagKey, "Tags: keys under ccmkit.io/ are the CCM's own"))
		default:
			if c.Tags == nil {
				c.Tags = map[string]string{}
			}
			c.Tags[t.TagKey] = t.TagValue
		}
	}
	return str(ext.LoadBalancerName), errors.Join(errs...)
}

// creationWarnings drops what cannot apply to this Service's CLB, each
// with a Warning: nothing applies to an adopted CLB, and the public
// network settings do not apply to a private one.
func creationWarnings(c *clbops.Creation, p lbspec.Placement) []lbkit.Warning {
	const reason = "CreationSettingIgnored"
	if p.AdoptID != "" && !reflect.DeepEqual(*c, clbops.Creation{}) {
		*c = clbops.Creation{}
		return []lbkit.Warning{{Reason: reason, Message: fmt.Sprintf(
			"The CLB is adopted (%s %s): the settings CLB takes at creation (%s, %s, %s) do not apply to it and were ignored",
			annotations.TKEExistedLBID, p.AdoptID, annotations.TKEInternetChargeType, annotations.TKEInternetMaxBandwidthOut, annotations.TKEExtensiveParameters)}}
	}
	if p.Internal && (c.InternetChargeType != "" || c.InternetMaxBandwidthOut > 0 || c.VipIsp != "") {
		c.InternetChargeType, c.InternetMaxBandwidthOut, c.BandwidthPackageSubType, c.VipIsp = "", 0, "", ""
		return []lbkit.Warning{{Reason: reason, Message: "The CLB is private: its public network settings (charge type, bandwidth, VipIsp) do not apply and were ignored"}}
	}
	return nil
}
