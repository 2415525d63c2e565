package tencentcloud

import (
	"context"
	"fmt"

	"github.com/ccmkit/ccm/internal/lbsubset"
	"github.com/ccmkit/ccm/internal/tencent/clbops"
)

// BackendLimit is what one CLB listener can bind: TOTAL_TARGET_BIND_QUOTA
// targets (100 unless a ticket raised it). Below the documented default
// every eligible node is bound and the quota is not even read; above it,
// the pipeline chooses the Service's subset.
func (t *clbTranslator) BackendLimit(ctx context.Context, d *clbops.Desired) lbsubset.Limit {
	if t.quotas == nil || len(d.Backends) <= clbops.DefaultTargetQuota {
		return lbsubset.Limit{}
	}
	n := t.quotas.TargetsPerListener(ctx)
	return lbsubset.Limit{N: n, What: fmt.Sprintf("%s, %d targets per CLB listener", clbops.QuotaTargetBind, n)}
}
