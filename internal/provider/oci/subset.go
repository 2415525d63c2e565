package oci

import (
	"context"

	"github.com/ccmkit/ccm/internal/lb/lbsubset"
	"github.com/ccmkit/ccm/internal/oci/lbops"
)

// BackendLimit is what one listener of d can hold within the kind's
// documented limits: every backend set holds the same nodes, so each can
// hold min(backends per set, backends in all / backend sets). Past it, the
// pipeline chooses the Service's subset, as for Tencent CLB.
func (t *ociTranslator) BackendLimit(_ context.Context, d *lbops.Desired) lbsubset.Limit {
	lim := lbops.LimitsOf(d.Kind)
	return lbsubset.Limit{N: lim.BackendsPerListener(len(d.Listeners)), What: lim.Describe(d.Kind, len(d.Listeners))}
}
