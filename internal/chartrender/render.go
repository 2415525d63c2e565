// Package chartrender renders the project's Helm chart with the Helm Go
// library, exactly as `helm template` would, for the chart's snapshot tests
// and for the e2e suite's server-side dry-run.
package chartrender

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
)

// Render renders the chart in dir as release name in namespace with values
// (merged over the chart's values.yaml). It returns the manifests in file
// name order, NOTES.txt and empty documents left out.
func Render(dir, name, namespace string, values map[string]any) ([]string, error) {
	chrt, err := loader.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("load chart %s: %w", dir, err)
	}
	vals, err := util.ToRenderValues(chrt, values,
		common.ReleaseOptions{Name: name, Namespace: namespace, IsInstall: true, Revision: 1},
		common.DefaultCapabilities)
	if err != nil {
		return nil, fmt.Errorf("values for chart %s: %w", dir, err)
	}
	files, err := engine.Render(chrt, vals)
	if err != nil {
		return nil, fmt.Errorf("render chart %s: %w", dir, err)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		if path.Base(n) == "NOTES.txt" || strings.HasPrefix(path.Base(n), "_") {
			continue
		}
		for _, doc := range strings.Split(files[n], "\n---") {
			if strings.TrimSpace(stripComments(doc)) != "" {
				out = append(out, strings.TrimSpace(doc)+"\n")
			}
		}
	}
	return out, nil
}

func stripComments(doc string) string {
	var keep []string
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
