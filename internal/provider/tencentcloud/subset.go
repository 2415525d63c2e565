package tencentcloud

import (
	"context"
	"fmt"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/lb/lbsubset"
	"github.com/ccmkit/ccm/internal/tencent/clbops"
)

// BackendLimit is what one CLB listener can bind: TOTAL_TARGET_BIND_QUOTA
// targets (100 unless a ticket raised it). Below the documented default
// every eligible node is bound and the quota is not even read; above it,
// the pipeline chooses the Service's subset.
//
// With local-svc-only-bind-node-with-pod, an externalTrafficPolicy Local
// Service is narrowed to its endpoint nodes even below the limit.
func (t *clbTranslator) BackendLimit(ctx context.Context, d *clbops.Desired) lbsubset.Limit {
	if t.quotas == nil || len(d.Backends) <= clbops.DefaultTargetQuota {
		if d.EndpointNodesOnly {
			return lbsubset.Limit{EndpointNodesOnly: true, WeightCap: weightCap(d), What: annotations.TKELocalOnlyBindNodeWithPod.String()}
		}
		return lbsubset.Limit{}
	}
	n := t.quotas.TargetsPerListener(ctx)
	return lbsubset.Limit{N: n, What: fmt.Sprintf("%s, %d targets per CLB listener", clbops.QuotaTargetBind, n),
		EndpointNodesOnly: d.EndpointNodesOnly, WeightCap: weightCap(d)}
}

// weightCap is CLB's largest weight with local-svc-weighted-balance (and
// local-svc-only-bind-node-with-pod), else 0: no weights.
func weightCap(d *clbops.Desired) int {
	if d.WeightedBalance && d.EndpointNodesOnly {
		return clbops.MaxWeight
	}
	return 0
}
