package promcheck

import (
	"fmt"
	"regexp"
	"slices"
	"sort"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// grafanaVar matches Grafana's interval variables, which are not PromQL.
var grafanaVar = regexp.MustCompile(`\$__(rate_interval|interval|range)\b`)

// Check parses one query (Grafana interval variables replaced by 5m) and
// returns the label names its result carries, or an error naming the
// first undocumented metric or label.
func (c *Catalog) Check(query string) ([]string, error) {
	expr, err := parser.NewParser(parser.Options{}).ParseExpr(grafanaVar.ReplaceAllString(query, "5m"))
	if err != nil {
		return nil, fmt.Errorf("parse %q: %w", query, err)
	}
	set, err := c.labelsOf(expr)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", query, err)
	}
	return sorted(set), nil
}

type labelSet map[string]bool

func sorted(s labelSet) []string {
	out := make([]string, 0, len(s))
	for l := range s {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

// labelsOf checks expr and returns the labels its result can carry: a
// selector's documented labels plus the target labels, narrowed by
// aggregations. Every label named in a matcher, a by/without clause or an
// on/ignoring clause must be in the set of the expression it applies to.
func (c *Catalog) labelsOf(expr parser.Expr) (labelSet, error) {
	switch e := expr.(type) {
	case *parser.NumberLiteral, *parser.StringLiteral:
		return labelSet{}, nil
	case *parser.ParenExpr:
		return c.labelsOf(e.Expr)
	case *parser.UnaryExpr:
		return c.labelsOf(e.Expr)
	case *parser.StepInvariantExpr:
		return c.labelsOf(e.Expr)
	case *parser.MatrixSelector:
		return c.labelsOf(e.VectorSelector)
	case *parser.SubqueryExpr:
		return c.labelsOf(e.Expr)
	case *parser.VectorSelector:
		return c.selector(e)
	case *parser.Call:
		var out labelSet
		for _, a := range e.Args {
			s, err := c.labelsOf(a)
			if err != nil {
				return nil, err
			}
			if a.Type() == parser.ValueTypeVector || a.Type() == parser.ValueTypeMatrix {
				out = s
			}
		}
		if out == nil {
			out = labelSet{}
		}
		if e.Func.Name == "histogram_quantile" {
			if !out["le"] {
				return nil, fmt.Errorf("histogram_quantile over series without le")
			}
			delete(out, "le")
		}
		return out, nil
	case *parser.AggregateExpr:
		inner, err := c.labelsOf(e.Expr)
		if err != nil {
			return nil, err
		}
		if e.Param != nil {
			if _, err := c.labelsOf(e.Param); err != nil {
				return nil, err
			}
		}
		for _, l := range e.Grouping {
			if !inner[l] {
				return nil, fmt.Errorf("%s %s (%s): label %q is not documented for the series aggregated (they have %v)",
					e.Op, clause(e.Without), l, l, sorted(inner))
			}
		}
		switch {
		case e.Op == parser.TOPK || e.Op == parser.BOTTOMK || e.Op == parser.LIMITK || e.Op == parser.LIMIT_RATIO:
			return inner, nil
		case e.Without:
			out := labelSet{}
			for l := range inner {
				if !slices.Contains(e.Grouping, l) {
					out[l] = true
				}
			}
			return out, nil
		default:
			out := labelSet{}
			for _, l := range e.Grouping {
				out[l] = true
			}
			return out, nil
		}
	case *parser.BinaryExpr:
		lhs, err := c.labelsOf(e.LHS)
		if err != nil {
			return nil, err
		}
		rhs, err := c.labelsOf(e.RHS)
		if err != nil {
			return nil, err
		}
		lv, rv := e.LHS.Type() == parser.ValueTypeVector, e.RHS.Type() == parser.ValueTypeVector
		if m := e.VectorMatching; m != nil && lv && rv {
			for _, l := range append(slices.Clone(m.MatchingLabels), m.Include...) {
				if !lhs[l] && !rhs[l] {
					return nil, fmt.Errorf("%s: label %q is on neither side", e.Op, l)
				}
			}
		}
		if !lv && rv {
			return rhs, nil
		}
		return lhs, nil
	default:
		return nil, fmt.Errorf("expression %T not handled by the checker", expr)
	}
}

func clause(without bool) string {
	if without {
		return "without"
	}
	return "by"
}

// selector checks a vector selector's metric name and matchers.
func (c *Catalog) selector(vs *parser.VectorSelector) (labelSet, error) {
	name := vs.Name
	for _, m := range vs.LabelMatchers {
		if m.Name == labels.MetricName {
			if m.Type != labels.MatchEqual {
				return nil, fmt.Errorf("selector %s: a metric name must be matched exactly", vs)
			}
			name = m.Value
		}
	}
	if name == "" {
		return nil, fmt.Errorf("selector %s names no metric", vs)
	}
	documented, ok := c.Series[name]
	if !ok {
		return nil, fmt.Errorf("metric %s is not documented in docs/metrics.md", name)
	}
	set := labelSet{}
	for _, l := range documented {
		set[l] = true
	}
	for _, l := range c.TargetLabels {
		set[l] = true
	}
	for _, m := range vs.LabelMatchers {
		if m.Name != labels.MetricName && !set[m.Name] {
			return nil, fmt.Errorf("metric %s: label %q is not documented for it (it has %v)", name, m.Name, documented)
		}
	}
	return set, nil
}
