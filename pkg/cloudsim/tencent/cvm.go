package tencent

import (
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// CVM limits, as documented. Sources: the DescribeInstancesRequestParams
// comments in tencentcloud-sdk-go cvm@v1.3.183 v20170312/models.go
// (InstanceIds: "每次请求的实例的上限为100"; Filters: "每次请求的`Filters`的上限为10，
// `Filter.Values`的上限为5"; Limit: "默认为20，最大值为100"), and
// /work/shared/reference/tencentcloud-api.md, "CVM: DescribeInstances"
// (also the 40 requests/s rate limit and the LimitExceeded error codes).
const (
	CVMVersion              = "2017-03-12"
	DescribeInstancesQPS    = 40  // reference doc: documented rate limit
	MaxInstanceIDs          = 100 // models.go: InstanceIds
	MaxFilters              = 10  // models.go: Filters
	MaxFilterValues         = 5   // models.go: Filter.Values
	DefaultDescribeLimit    = 20  // models.go: Limit default
	MaxDescribeLimit        = 100 // models.go: Limit maximum
	instanceChargeType      = "POSTPAID_BY_HOUR"
	creationTimeLayout      = "2006-01-02 15:04:05"
	describeInstancesAction = "DescribeInstances"
)

// beijing is the time zone of the creation-*-time filters. cloudsim's
// choice: models.go gives their format ("2023-06-01 00:00:00"), not their
// zone; Beijing time is the zone of the API's other zone-less times (CLB's
// CreateTime, VPC's CreatedTime).
var beijing = time.FixedZone("UTC+8", 8*3600)

var uuidRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func cvmService() *Service {
	return &Service{
		Name:    "cvm",
		Version: CVMVersion,
		Actions: map[string]Action{
			describeInstancesAction: {Handler: describeInstances, RateLimit: DescribeInstancesQPS, RegionRequired: true},
		},
	}
}

// instanceFilter matches an instance against one filter's values (OR).
type instanceFilter func(rec *core.Record, values []string) bool

func anyEqual(field func(*core.Record) string) instanceFilter {
	return func(rec *core.Record, values []string) bool { return slices.Contains(values, field(rec)) }
}

func matchNone(*core.Record, []string) bool { return false }

// cvmFilters are the DescribeInstances filters cloudsim implements ("tag:<key>"
// is handled separately). host-id and dedicated-cluster-id are valid but
// match nothing, since simulated instances have none.
var cvmFilters = map[string]instanceFilter{
	"zone":        anyEqual(func(r *core.Record) string { return r.Zone }),
	"project-id":  anyEqual(func(*core.Record) string { return "0" }),
	"vpc-id":      anyEqual(func(r *core.Record) string { return r.VpcID }),
	"subnet-id":   anyEqual(func(r *core.Record) string { return r.SubnetID }),
	"instance-id": anyEqual(func(r *core.Record) string { return r.ID }),
	"uuid":        anyEqual(func(r *core.Record) string { return r.UUID }),
	// Exact match: the API documentation does not promise a fuzzy match.
	"instance-name":        anyEqual(func(r *core.Record) string { return r.Name }),
	"instance-charge-type": anyEqual(func(*core.Record) string { return instanceChargeType }),
	"instance-state":       anyEqual(func(r *core.Record) string { return r.State }),
	"instance-type":        anyEqual(func(r *core.Record) string { return r.Type }),
	"private-ip-address":   anyEqual(func(r *core.Record) string { return r.PrivateIP }),
	"public-ip-address": func(r *core.Record, values []string) bool {
		return r.PublicIP != "" && slices.Contains(values, r.PublicIP)
	},
	"tag-key": func(r *core.Record, values []string) bool {
		for _, v := range values {
			if _, ok := r.Tags[v]; ok {
				return true
			}
		}
		return false
	},
	"tag-value": func(r *core.Record, values []string) bool {
		for _, tv := range r.Tags {
			if slices.Contains(values, tv) {
				return true
			}
		}
		return false
	},
	"creation-start-time": func(r *core.Record, values []string) bool {
		for _, v := range values {
			t, _ := time.ParseInLocation(creationTimeLayout, v, beijing)
			if !r.Created.Before(t) {
				return true
			}
		}
		return false
	},
	"creation-end-time": func(r *core.Record, values []string) bool {
		for _, v := range values {
			t, _ := time.ParseInLocation(creationTimeLayout, v, beijing)
			if !r.Created.After(t) {
				return true
			}
		}
		return false
	},
	"host-id":              matchNone,
	"dedicated-cluster-id": matchNone,
	"security-group-id": func(r *core.Record, values []string) bool {
		return slices.ContainsFunc(r.SecurityGroupIDs, func(id string) bool { return slices.Contains(values, id) })
	},
}

func filterNames() string {
	names := make([]string, 0, len(cvmFilters)+1)
	for n := range cvmFilters {
		names = append(names, n)
	}
	names = append(names, "tag:<key>")
	sort.Strings(names)
	return strings.Join(names, ", ")
}

type compiledFilter struct {
	match  instanceFilter
	values []string
}

// validateFilterValue checks the formats the real API validates.
func validateFilterValue(name, v string) *Error {
	switch name {
	case "instance-id":
		if !core.ValidInstanceID(v) {
			return Errorf("InvalidInstanceId.Malformed", "The instance ID `%s` in filter `instance-id` is malformed: want `ins-` followed by 8 lower-case letters or digits.", v)
		}
	case "vpc-id":
		if !core.ValidVpcID(v) {
			return Errorf("InvalidParameterValue.VpcIdMalformed", "The VPC ID `%s` in filter `vpc-id` is malformed: want `vpc-` followed by 8 lower-case letters or digits.", v)
		}
	case "subnet-id":
		if !core.ValidSubnetID(v) {
			return Errorf("InvalidParameterValue.SubnetIdMalformed", "The subnet ID `%s` in filter `subnet-id` is malformed: want `subnet-` followed by 8 lower-case letters or digits.", v)
		}
	case "private-ip-address", "public-ip-address":
		if a, err := netip.ParseAddr(v); err != nil || !a.Is4() {
			return Errorf("InvalidParameterValue.IPAddressMalformed", "The IP address `%s` in filter `%s` is malformed.", v, name)
		}
	case "uuid":
		if !uuidRe.MatchString(v) {
			return Errorf("InvalidParameterValue.UuidMalformed", "The UUID `%s` in filter `uuid` is malformed.", v)
		}
	case "project-id":
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return Errorf("InvalidParameterValue", "The project ID `%s` in filter `project-id` is not an integer.", v)
		}
	case "creation-start-time", "creation-end-time":
		if _, err := time.ParseInLocation(creationTimeLayout, v, beijing); err != nil {
			return Errorf("InvalidParameterValue.InvalidTimeFormat", "The time `%s` in filter `%s` is malformed: want `YYYY-MM-DD hh:mm:ss`.", v, name)
		}
	}
	return nil
}

func compileFilters(filters []*cvm.Filter) ([]compiledFilter, *Error) {
	if len(filters) > MaxFilters {
		return nil, Errorf("InvalidFilterValue.LimitExceeded", "The number of `Filters` (%d) exceeds the limit of %d.", len(filters), MaxFilters)
	}
	out := make([]compiledFilter, 0, len(filters))
	for _, f := range filters {
		if f == nil || f.Name == nil || *f.Name == "" {
			return nil, Errorf("InvalidFilter", "A filter has no `Name`.")
		}
		name := *f.Name
		values := deref(f.Values)
		if len(values) == 0 {
			return nil, Errorf("InvalidParameterValue", "The filter `%s` has no `Values`.", name)
		}
		if len(values) > MaxFilterValues {
			return nil, Errorf("InvalidFilterValue.LimitExceeded", "The filter `%s` has %d values, more than the limit of %d.", name, len(values), MaxFilterValues)
		}
		if key, ok := strings.CutPrefix(name, "tag:"); ok {
			if key == "" {
				return nil, Errorf("InvalidFilter", "The filter `%s` has no tag key.", name)
			}
			out = append(out, compiledFilter{values: values, match: func(r *core.Record, vals []string) bool {
				v, ok := r.Tags[key]
				return ok && slices.Contains(vals, v)
			}})
			continue
		}
		match, ok := cvmFilters[name]
		if !ok {
			return nil, Errorf("InvalidFilter", "The filter `%s` is not supported. Supported filters: %s.", name, filterNames())
		}
		for _, v := range values {
			if e := validateFilterValue(name, v); e != nil {
				return nil, e
			}
		}
		out = append(out, compiledFilter{match: match, values: values})
	}
	return out, nil
}

func deref(ps []*string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if p != nil {
			out = append(out, *p)
		}
	}
	return out
}

// describeInstances implements cvm DescribeInstances.
func describeInstances(call *Call, body []byte) (any, error) {
	var req cvm.DescribeInstancesRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	ids := deref(req.InstanceIds)
	// "参数不支持同时指定InstanceIds和Filters" (cvm@v1.3.183 models.go,
	// DescribeInstancesRequestParams.InstanceIds). The code is InvalidParameter
	// ("参数错误"), the documented one of the action's list (client.go) that
	// fits; errors.go also has InvalidParameterCombination ("表示参数组合不正确"),
	// but DescribeInstances does not list it.
	if len(ids) > 0 && len(req.Filters) > 0 {
		return nil, Errorf("InvalidParameter", "The parameters `InstanceIds` and `Filters` cannot be specified at the same time.")
	}
	if len(ids) > MaxInstanceIDs {
		return nil, Errorf("InvalidParameterValue.LimitExceeded", "The number of `InstanceIds` (%d) exceeds the limit of %d.", len(ids), MaxInstanceIDs)
	}
	for _, id := range ids {
		if !core.ValidInstanceID(id) {
			return nil, Errorf("InvalidInstanceId.Malformed", "The instance ID `%s` is malformed: want `ins-` followed by 8 lower-case letters or digits.", id)
		}
	}
	filters, ferr := compileFilters(req.Filters)
	if ferr != nil {
		return nil, ferr
	}
	offset, limit := int64(0), int64(DefaultDescribeLimit)
	if req.Offset != nil {
		if *req.Offset < 0 {
			return nil, Errorf("InvalidParameterValue", "The value `%d` of parameter `Offset` must not be negative.", *req.Offset)
		}
		offset = *req.Offset
	}
	if req.Limit != nil {
		switch {
		case *req.Limit < 0:
			return nil, Errorf("InvalidParameterValue", "The value `%d` of parameter `Limit` must not be negative.", *req.Limit)
		case *req.Limit > MaxDescribeLimit:
			return nil, Errorf("InvalidParameterValue.LimitExceeded", "The value `%d` of parameter `Limit` exceeds the maximum of %d.", *req.Limit, MaxDescribeLimit)
		case *req.Limit > 0:
			limit = *req.Limit
		}
	}

	defRegion := call.Core.Region()
	var matches []*core.Record
	snap := call.Core.ReadSnapshot() // as the read lag shows it (core/lag.go)
	for i := range snap {
		rec := &snap[i]
		if rec.Region(defRegion) != call.Region {
			continue
		}
		if len(ids) > 0 && !slices.Contains(ids, rec.ID) {
			continue
		}
		ok := true
		for _, f := range filters {
			if !f.match(rec, f.values) {
				ok = false
				break
			}
		}
		if ok {
			matches = append(matches, rec)
		}
	}
	total := int64(len(matches))
	page := []*cvm.Instance{}
	for i := offset; i < total && i < offset+limit; i++ {
		page = append(page, toCVMInstance(matches[i]))
	}
	return &cvm.DescribeInstancesResponseParams{
		TotalCount:  common.Int64Ptr(total),
		InstanceSet: page,
	}, nil
}

func toCVMInstance(r *core.Record) *cvm.Instance {
	publicIPs := []*string{}
	if r.PublicIP != "" {
		publicIPs = append(publicIPs, common.StringPtr(r.PublicIP))
	}
	keys := make([]string, 0, len(r.Tags))
	for k := range r.Tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	tags := []*cvm.Tag{}
	for _, k := range keys {
		tags = append(tags, &cvm.Tag{Key: common.StringPtr(k), Value: common.StringPtr(r.Tags[k])})
	}
	inst := &cvm.Instance{
		InstanceId:         common.StringPtr(r.ID),
		InstanceName:       common.StringPtr(r.Name),
		InstanceType:       common.StringPtr(r.Type),
		InstanceState:      common.StringPtr(r.State),
		InstanceChargeType: common.StringPtr(instanceChargeType),
		RestrictState:      common.StringPtr("NORMAL"),
		Placement: &cvm.Placement{
			Zone:      common.StringPtr(r.Zone),
			ProjectId: common.Int64Ptr(0),
		},
		PrivateIpAddresses: []*string{common.StringPtr(r.PrivateIP)},
		PublicIpAddresses:  publicIPs,
		VirtualPrivateCloud: &cvm.VirtualPrivateCloud{
			VpcId:        common.StringPtr(r.VpcID),
			SubnetId:     common.StringPtr(r.SubnetID),
			AsVpcGateway: common.BoolPtr(false),
		},
		Tags:             tags,
		SecurityGroupIds: common.StringPtrs(r.SecurityGroupIDs),
		Uuid:             common.StringPtr(r.UUID),
		CreatedTime:      common.StringPtr(r.Created.UTC().Format("2006-01-02T15:04:05Z")),
	}
	if cpu, mem, ok := instanceSize(r.Type); ok {
		inst.CPU, inst.Memory = common.Int64Ptr(cpu), common.Int64Ptr(mem)
	}
	return inst
}

var sizeRe = regexp.MustCompile(`^[A-Z0-9]+\.([0-9]*)(SMALL|MEDIUM|LARGE|XLARGE)([0-9]+)$`)

// instanceSize derives CPU cores and memory (GB) from a Tencent instance
// type such as S5.MEDIUM4 (2 cores, 4 GB) or S5.2XLARGE16 (8 cores, 16 GB).
func instanceSize(typ string) (cpu, mem int64, ok bool) {
	m := sizeRe.FindStringSubmatch(strings.ToUpper(typ))
	if m == nil {
		return 0, 0, false
	}
	mem, _ = strconv.ParseInt(m[3], 10, 64)
	mult := int64(1)
	if m[1] != "" {
		mult, _ = strconv.ParseInt(m[1], 10, 64)
	}
	switch m[2] {
	case "SMALL":
		cpu = 1
	case "MEDIUM":
		cpu = 2
	case "LARGE":
		cpu = 4
	case "XLARGE":
		cpu = 4 * mult
	}
	if m[1] != "" && m[2] != "XLARGE" {
		return 0, 0, false
	}
	return cpu, mem, true
}
