package annotations

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The typed annotations. Each descriptor is the one place that says what
// an annotation accepts and what it means when unset: its parser reads
// the descriptor, and ./gen writes the reference's Type and Default from
// it, so a call site cannot accept other values than the doc lists.
//
// Default is what Value returns for an unset annotation. When the default
// depends on the Service or the cloud config, the caller applies it (it
// reads FromService, ErrNotSet meaning unset) and DefaultDoc says in the
// reference what it is; a DefaultDoc beside a non-zero Default must begin
// with that Default (./gen checks), so the two cannot drift apart.

// Descriptor is a typed annotation as the reference documents it.
type Descriptor interface {
	Key() Name
	// Doc returns the reference's Type and Default cells.
	Doc() (typ, def string)
	// defaultText is Default as written, "" when it is the zero value.
	defaultText() string
	defaultDoc() string
}

// Check reports a DefaultDoc that contradicts the Default beside it.
func Check(d Descriptor) error {
	if def, doc := d.defaultText(), d.defaultDoc(); def != "" && doc != "" && !strings.HasPrefix(doc, def) {
		return fmt.Errorf("%s: DefaultDoc %q does not begin with the Default %s", d.Key(), doc, def)
	}
	return nil
}

// Key returns the annotation key; the descriptors embed Name.
func (n Name) Key() Name { return n }

// Bool is a true/false annotation (any spelling strconv.ParseBool reads:
// 1, t, TRUE, 0, f, FALSE...).
type Bool struct {
	Name
	Default    bool
	DefaultDoc string
}

// FromService parses the value, or returns ErrNotSet.
func (b Bool) FromService(svc *corev1.Service) (bool, error) {
	v, err := b.StringFromService(svc)
	if err != nil {
		return false, err
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return false, b.Invalid(v, "must be true or false")
	}
	return on, nil
}

// Value returns the value, or Default when unset or invalid (the problem
// goes to p).
func (b Bool) Value(svc *corev1.Service, p *Problems) bool {
	return or(p, b.Default)(b.FromService(svc))
}

func (b Bool) Doc() (string, string) { return "bool", docDefault(b, strconv.FormatBool(b.Default)) }
func (b Bool) defaultText() string   { return nonZero(b.Default, strconv.FormatBool(b.Default)) }
func (b Bool) defaultDoc() string    { return b.DefaultDoc }

// Int is a decimal integer annotation in [Min, Max] (any integer when both
// are 0).
type Int struct {
	Name
	Min, Max   int
	Unit       string // for the reference: "Mbps"
	Default    int
	DefaultDoc string
}

// FromService parses the value and checks the range, or returns ErrNotSet.
func (i Int) FromService(svc *corev1.Service) (int, error) {
	return i.FromServiceIn(svc, i.Min, i.Max)
}

// FromServiceIn is FromService with the range of the provider at hand,
// for settings whose range is the cloud's (health check thresholds).
func (i Int) FromServiceIn(svc *corev1.Service, min, max int) (int, error) {
	v, err := i.StringFromService(svc)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, i.Invalid(v, "must be an integer")
	}
	if (min != 0 || max != 0) && (n < min || n > max) {
		return 0, i.Invalid(svc.Annotations[string(i.Name)], "must be between %d and %d", min, max)
	}
	return n, nil
}

// Value returns the value, or Default when unset or invalid (the problem
// goes to p).
func (i Int) Value(svc *corev1.Service, p *Problems) int {
	return or(p, i.Default)(i.FromService(svc))
}

func (i Int) Doc() (string, string) {
	var in []string
	if i.Unit != "" {
		in = append(in, i.Unit)
	}
	switch {
	case i.Max == i.Min+1: // two values read better listed
		in = append(in, fmt.Sprintf("%d, %d", i.Min, i.Max))
	case i.Min != 0 || i.Max != 0:
		in = append(in, fmt.Sprintf("%d-%d", i.Min, i.Max))
	}
	typ := "int"
	if len(in) > 0 {
		typ += " (" + strings.Join(in, ", ") + ")"
	}
	return typ, docDefault(i, strconv.Itoa(i.Default))
}
func (i Int) defaultText() string { return nonZero(i.Default, strconv.Itoa(i.Default)) }
func (i Int) defaultDoc() string  { return i.DefaultDoc }

// Duration is a Go duration ("10s", "1m30s") or a plain number of Unit
// (seconds, the form cloud consoles use, unless Unit says otherwise), in
// [Min, Max] unless both are 0.
type Duration struct {
	Name
	// Unit is what a plain number counts: time.Second when 0. The public
	// OCI CCM's annotations count milliseconds.
	Unit       time.Duration
	Min, Max   time.Duration
	Default    time.Duration
	DefaultDoc string
}

func (d Duration) unit() time.Duration {
	if d.Unit == 0 {
		return time.Second
	}
	return d.Unit
}

// FromService parses the value and checks the range, or returns ErrNotSet.
func (d Duration) FromService(svc *corev1.Service) (time.Duration, error) {
	return d.FromServiceIn(svc, d.Min, d.Max)
}

// FromServiceIn is FromService with the range of the provider at hand
// (health check and session affinity times); both 0 is no range.
func (d Duration) FromServiceIn(svc *corev1.Service, min, max time.Duration) (time.Duration, error) {
	v, err := d.StringFromService(svc)
	if err != nil {
		return 0, err
	}
	var t time.Duration
	if n, err := strconv.Atoi(v); err == nil {
		t = time.Duration(n) * d.unit()
	} else if t, err = time.ParseDuration(v); err != nil {
		if d.unit() == time.Millisecond {
			return 0, d.Invalid(v, "must be a number of milliseconds (as upstream) or a duration such as 10s")
		}
		return 0, d.Invalid(v, "must be a duration such as 10s or 2m, or a number of seconds")
	}
	// Upstream's millisecond annotations have always reported a negative
	// value as out of range; ours say what is wrong with it.
	if t < 0 && d.unit() != time.Millisecond {
		return 0, d.Invalid(v, "must not be negative")
	}
	if (min != 0 || max != 0) && (t < min || t > max) {
		return 0, d.Invalid(v, "must be between %s and %s", min, max)
	}
	return t, nil
}

// Value returns the value, or Default when unset or invalid (the problem
// goes to p).
func (d Duration) Value(svc *corev1.Service, p *Problems) time.Duration {
	return or(p, d.Default)(d.FromService(svc))
}

func (d Duration) Doc() (string, string) {
	if d.unit() == time.Millisecond {
		return fmt.Sprintf("milliseconds (%d-%d) or duration", d.Min.Milliseconds(), d.Max.Milliseconds()), docDefault(d, d.format(d.Default))
	}
	typ := "duration (10s, 1m, or seconds"
	switch {
	case d.Max != 0 && d.Min == 0:
		typ += "; at most " + d.format(d.Max)
	case d.Max != 0:
		typ += "; " + d.format(d.Min) + " to " + d.format(d.Max)
	}
	return typ + ")", docDefault(d, d.format(d.Default))
}

// format writes t as the reference does: milliseconds for a millisecond
// annotation, else the short form of a duration (1h, not 1h0m0s).
func (d Duration) format(t time.Duration) string {
	if d.unit() == time.Millisecond {
		return strconv.FormatInt(t.Milliseconds(), 10)
	}
	s := t.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
func (d Duration) defaultText() string { return nonZero(d.Default, d.format(d.Default)) }
func (d Duration) defaultDoc() string  { return d.DefaultDoc }

// Enum is one of Values, matched ignoring case, so that "Private" reads as
// "private".
type Enum struct {
	Name
	Values     []string
	Default    string // "": none
	DefaultDoc string
}

// FromService returns the entry of Values the value matches, or ErrNotSet.
func (e Enum) FromService(svc *corev1.Service) (string, error) {
	v, err := e.StringFromService(svc)
	if err != nil {
		return "", err
	}
	for _, a := range e.Values {
		if strings.EqualFold(v, a) {
			return a, nil
		}
	}
	return "", e.Invalid(v, "must be one of %s", strings.Join(e.Values, ", "))
}

// Value returns the value, or Default when unset or invalid (the problem
// goes to p).
func (e Enum) Value(svc *corev1.Service, p *Problems) string {
	return or(p, e.Default)(e.FromService(svc))
}

func (e Enum) Doc() (string, string) {
	def := e.Default
	if def == "" {
		def = "none"
	}
	return "enum (" + strings.Join(e.Values, ", ") + ")", docDefault(e, def)
}
func (e Enum) defaultText() string { return e.Default }
func (e Enum) defaultDoc() string  { return e.DefaultDoc }

// or returns the parsed value, or def after handing the error to p.
func or[T any](p *Problems, def T) func(T, error) T {
	return func(v T, err error) T {
		if !p.Check(err) {
			return def
		}
		return v
	}
}

func docDefault(d Descriptor, def string) string {
	if doc := d.defaultDoc(); doc != "" {
		return doc
	}
	return def
}

func nonZero[T comparable](v T, s string) string {
	var zero T
	if v == zero {
		return ""
	}
	return s
}
