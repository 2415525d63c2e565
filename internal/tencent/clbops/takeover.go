package clbops

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/lb/lbkit"
	"github.com/ccmkit/ccm/internal/tencent/tcapi"
)

// Taking over the CLBs of managed TKE's service controller.
//
// TKE's controller creates a CLB per LoadBalancer Service, tags it
// tke-createdBy-flag=yes and tke-clusterId=<cluster id>, deletes it with
// the Service (only a CLB with the created-by tag: one the Service merely
// uses, through tke-existed-lbid, is kept), and writes its id into the
// Service's read-only annotation service.kubernetes.io/loadbalance-id
// (TKE docs "Using Existing CLBs", https://www.tencentcloud.com/document/
// product/457/36835, and "Service 使用已有 CLB", https://cloud.tencent.com/
// document/product/457/45491: "Service 创建的 CLB 均会配置 tke-createdBy-flag
// = yes 标签, Service 会在销毁时删除对应资源 … 所有 Service 均会配置
// tke-clusterId = 标签"; "指定使用的负载均衡需和集群处于同一 VPC"). Its
// listeners are named TKE-DEDICATED-LISTENER, the name by which it tells
// its own listeners from a user's before deleting one ("删除监听器时, 会校
// 验监听器名称是否被修改", 457/45491; the TKE Ingress error W1002 "listener
// name … is not TKE-DEDICATED-LISTENER … its lifecycle is not managed").
//
// The ownership rule: the CLB the annotation names becomes the Service's,
// as a CLB this CCM created is, when it carries tke-createdBy-flag=yes,
// sits in the cluster's VPC and its tke-clusterId tag is the configured
// tke_cluster_id. Then:
//   - the listeners on the Service's ports are the Service's, matched by
//     protocol and port whatever their names, and keep their names; a
//     TKE-DEDICATED-LISTENER on a port the Service no longer has is deleted,
//     as TKE would; any other listener is left alone;
//   - the CLB is deleted with the Service, as TKE did;
//   - TKE's tags are kept (they are what lets TKE's controller take the
//     Service back), and with lb_defaults ccmkit our own tags are added,
//     so that it is found as ours from then on; with lb_defaults tke
//     nothing is written: it is found by the annotation and TKE's tags on
//     every sync.
//
// Otherwise the CLB is refused with the reason (another VPC, another
// cluster, no tke_cluster_id configured), and nothing is created in its
// place while the Service carries the annotation: removing it is how the
// user asks for a new CLB (with a new address). A CLB the annotation names
// that TKE did not create (no created-by tag) is not TKE's to hand over,
// and the annotation is ignored, as before.

// TKE's marks on what its service controller creates.
const (
	TagTKECreatedBy   = "tke-createdBy-flag"
	tkeCreatedByValue = "yes"
	TagTKECluster     = "tke-clusterId"
	// TKEListenerName is the name TKE's controllers give their listeners.
	TKEListenerName = "TKE-DEDICATED-LISTENER"
)

// OwnerTKE names TKE's service controller in a Plan.
const OwnerTKE = "TKE service controller"

// RefusalError is a load balancer the Service's sync will not touch or
// replace, and why. The Service gets it as a Warning Event; the plan shows
// it as a refusal.
type RefusalError struct {
	LoadBalancer string // the CLB refused
	Owner        string // who made it (a Plan's Owner)
	Reason       string
}

func (e *RefusalError) Error() string { return e.Reason }

func refuse(lbID, owner, format string, args ...any) error {
	return &RefusalError{LoadBalancer: lbID, Owner: owner, Reason: fmt.Sprintf(format, args...)}
}

// tkeMade says whether TKE's service controller created lb.
func (lb *loadBalancer) tkeMade() bool { return lb.tags[TagTKECreatedBy] == tkeCreatedByValue }

// newCLBHint is how the user asks for a new CLB in place of a refused one.
var newCLBHint = fmt.Sprintf("nothing was created in its place; to give the Service a new CLB (with a new address) remove the annotation %s",
	annotations.TKELoadBalanceID)

// resolveIncumbent decides whether lb, which the Service's loadbalance-id
// annotation names and which no tag of ours marks as another Service's, is
// the Service's: nil, nil when it is not TKE's to hand over (the
// annotation is then ignored).
func (o *Ops) resolveIncumbent(spec *Desired, lb *loadBalancer) (*loadBalancer, error) {
	if owner, ok := lb.tags[TagServiceUID]; ok {
		if owner == string(spec.UID) {
			return lb, nil
		}
		return nil, refuse(lb.id, lbkit.OwnerOurs, "CLB %s named by annotation %s belongs to Service %s (tag %s=%s), not to this one; %s",
			lb.id, annotations.TKELoadBalanceID, lb.tags[TagService], TagServiceUID, owner, newCLBHint)
	}
	if !lb.tkeMade() {
		return nil, nil
	}
	cluster := lb.tags[TagTKECluster]
	switch {
	case lb.vpcID != o.vpcID:
		return nil, refuse(lb.id, OwnerTKE, "CLB %s, which TKE made for this Service (annotation %s), is in VPC %q, not the cluster's VPC %s, so it cannot reach this cluster's nodes and is not taken over; %s",
			lb.id, annotations.TKELoadBalanceID, lb.vpcID, o.vpcID, newCLBHint)
	case o.tkeClusterID == "":
		return nil, refuse(lb.id, OwnerTKE, "CLB %s was made by TKE's service controller (tag %s=%s); set tke_cluster_id in the cloud config to the id of the TKE cluster this CCM replaces to take it over; %s",
			lb.id, TagTKECluster, cluster, newCLBHint)
	case cluster != o.tkeClusterID:
		return nil, refuse(lb.id, OwnerTKE, "CLB %s was made by TKE's service controller for cluster %q (tag %s), not for tke_cluster_id %s, and is not taken over; %s",
			lb.id, cluster, TagTKECluster, o.tkeClusterID, newCLBHint)
	}
	lb.takeover = true
	return lb, nil
}

// incumbentForCleanup returns the CLB TKE made for the Service, if the
// loadbalance-id annotation names one that passes the takeover checks:
// Get reports it and Delete deletes it, as TKE would have. A refused one
// is not the Service's, so it is neither reported nor deleted.
func (o *Ops) incumbentForCleanup(ctx context.Context, spec *Desired) (*loadBalancer, error) {
	if spec.Incumbent == "" || spec.Incumbent == spec.AdoptID {
		return nil, nil
	}
	lb, err := o.describeByID(ctx, spec.Incumbent)
	if err != nil || lb == nil {
		return nil, err
	}
	if _, tagged := lb.tags[TagServiceUID]; tagged {
		return nil, nil // ours: found by its tag, or another Service's
	}
	if lb, err := o.resolveIncumbent(spec, lb); err == nil && lb != nil {
		return lb, nil
	}
	return nil, nil
}

// takeoverTags are the tags of ours a taken-over CLB lacks, in key order:
// none with lb_defaults tke, which writes nothing.
func (o *Ops) takeoverTags(lb *loadBalancer, spec *Desired) []string {
	if !lb.takeover || o.tkeCompat {
		return nil
	}
	want := tags(spec)
	var missing []string
	for _, k := range sortedKeys(want) {
		if _, ok := lb.tags[k]; !ok {
			missing = append(missing, k)
		}
	}
	return missing
}

// markTakenOver adds our tags to a CLB taken over from TKE (one
// AttachResourcesTag per tag: the action takes one key), so that from now
// on it is found as ours; TKE's tags stay.
func (o *Ops) markTakenOver(ctx context.Context, lb *loadBalancer, spec *Desired) error {
	keys := o.takeoverTags(lb, spec)
	if len(keys) == 0 {
		return nil
	}
	if o.tagAPI == nil {
		return errors.New("taking over a CLB needs the Tag API, which this CCM was built without")
	}
	want := tags(spec)
	logWrite(ctx, "Taking over CLB made by TKE's service controller", "clb", lb.id, "service", spec.Service, "tags", keys)
	for _, k := range keys {
		if err := o.attachTag(ctx, lb, k, want[k]); err != nil {
			return err
		}
		lb.tags[k] = want[k]
	}
	return nil
}

// listenerOwner says which listeners of a CLB the Service owns.
type listenerOwner struct {
	// suffix ends our listener names ("-<uid>" on an adopted CLB).
	suffix string
	// byPort: the listeners on the Service's ports are its own whatever
	// their names, and TKE's named ones are too (a CLB TKE made).
	byPort bool
	// tkeNames: new listeners are named as TKE names them (lb_defaults
	// tke on a CLB TKE made, so that TKE can take it back).
	tkeNames bool
}

// ownerOf is the listener ownership of lb for ref's Service.
func (o *Ops) ownerOf(lb *loadBalancer, spec *Desired) listenerOwner {
	if lb.adopted {
		return listenerOwner{suffix: ownerSuffix(lb, spec.Ref)}
	}
	return listenerOwner{byPort: lb.tkeMade(), tkeNames: lb.tkeMade() && o.tkeCompat}
}

// owns: l's name is what we would call a listener with its protocol and
// port, or, on a CLB TKE made, TKE's name.
func (w listenerOwner) owns(l *listener) bool {
	return l.owned(w.suffix) || (w.byPort && l.name == TKEListenerName)
}

// name is what a new listener is called.
func (w listenerOwner) name(protocol string, port int64) string {
	if w.tkeNames {
		return TKEListenerName
	}
	return listenerName(protocol, port, w.suffix)
}

// incumbentIDs are the CLBs the loadbalance-id annotations of specs name
// that no tag or adoption already found.
func incumbentIDs(specs []*Desired, found func(*Desired) bool) []string {
	var ids []string
	for _, s := range specs {
		if s.Incumbent != "" && s.AdoptID == "" && !found(s) && !slices.Contains(ids, s.Incumbent) {
			ids = append(ids, s.Incumbent)
		}
	}
	return ids
}

// codeTagKeyAttached: AttachResourcesTag's "the tag key is already
// attached to the resource" (tag@v20180813 client.go,
// RESOURCEINUSE_TAGKEYATTACHED): a retry after a lost answer, done.
const codeTagKeyAttached = "ResourceInUse.TagKeyAttached"

// attachTag adds one tag to lb (AttachResourcesTag: ServiceType and
// ResourcePrefix "clb", as in the CLB's six-segment resource name
// qcs::clb:<region>:uin/<uin>:clb/<id>; ResourceRegion is required for a
// regional resource). It answers at once: there is no task.
func (o *Ops) attachTag(ctx context.Context, lb *loadBalancer, key, value string) error {
	req := tcapi.NewAttachResourcesTagRequest()
	req.ServiceType, req.ResourcePrefix = common.StringPtr("clb"), common.StringPtr("clb")
	req.ResourceIds = common.StringPtrs([]string{lb.id})
	req.ResourceRegion = common.StringPtr(o.region)
	req.TagKey, req.TagValue = common.StringPtr(key), common.StringPtr(value)
	err := o.call(ctx, "AttachResourcesTag", fmt.Sprintf("%s (tag %s)", lb, key), func() error {
		_, err := o.tagAPI.AttachResourcesTagWithContext(ctx, req)
		return err
	})
	if Code(err) == codeTagKeyAttached {
		return nil
	}
	return err
}
