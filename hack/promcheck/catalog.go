package promcheck

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Catalog is what docs/metrics.md documents: the series names with their
// labels, and the target labels the scrape adds to every series.
type Catalog struct {
	Series       map[string][]string // series name -> label names
	TargetLabels []string
}

var (
	backticked  = regexp.MustCompile("`([^`]+)`")
	parenthesis = regexp.MustCompile(`\([^)]*\)`)
)

// ParseCatalog reads the Markdown tables of docs/metrics.md: tables whose
// header starts with "metric" (columns metric, type, labels, meaning) and
// the table whose header starts with "target label". In the labels column,
// backticked names are labels and parenthesised text lists their values;
// "—" means none. A histogram X yields the series X_bucket (with le),
// X_sum and X_count.
func ParseCatalog(doc string) (*Catalog, error) {
	c := &Catalog{Series: map[string][]string{}}
	var header []string
	for n, line := range strings.Split(doc, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			header = nil
			continue
		}
		cells := splitRow(line)
		if header == nil {
			header = cells
			continue
		}
		if strings.Trim(cells[0], "-: ") == "" { // the |---| line
			continue
		}
		switch header[0] {
		case "metric":
			if len(cells) < 3 || len(header) < 3 || header[1] != "type" || header[2] != "labels" {
				return nil, fmt.Errorf("metrics.md line %d: a metric table needs the columns metric, type, labels", n+1)
			}
			name := backticked.FindStringSubmatch(cells[0])
			if name == nil {
				return nil, fmt.Errorf("metrics.md line %d: no `metric name` in %q", n+1, cells[0])
			}
			var labels []string
			for _, m := range backticked.FindAllStringSubmatch(parenthesis.ReplaceAllString(cells[2], ""), -1) {
				labels = append(labels, m[1])
			}
			if err := c.add(name[1], cells[1], labels); err != nil {
				return nil, fmt.Errorf("metrics.md line %d: %w", n+1, err)
			}
		case "target label":
			m := backticked.FindStringSubmatch(cells[0])
			if m == nil {
				return nil, fmt.Errorf("metrics.md line %d: no `label` in %q", n+1, cells[0])
			}
			c.TargetLabels = append(c.TargetLabels, m[1])
		}
	}
	if len(c.Series) == 0 {
		return nil, fmt.Errorf("metrics.md: no metric table found")
	}
	return c, nil
}

func (c *Catalog) add(name, typ string, labels []string) error {
	put := func(series string, labels []string) error {
		if _, dup := c.Series[series]; dup {
			return fmt.Errorf("series %s documented twice", series)
		}
		c.Series[series] = labels
		return nil
	}
	switch typ {
	case "counter", "gauge":
		return put(name, labels)
	case "histogram":
		for _, s := range []string{"_sum", "_count"} {
			if err := put(name+s, labels); err != nil {
				return err
			}
		}
		return put(name+"_bucket", append(slices.Clone(labels), "le"))
	default:
		return fmt.Errorf("metric %s: unknown type %q", name, typ)
	}
}

// splitRow splits a Markdown table row into trimmed cells.
func splitRow(line string) []string {
	parts := strings.Split(strings.Trim(line, "|"), "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}
