// Package cloudconfig is the machinery both providers' cloud configs share:
// a Secret type that never prints, a Problems collector that reports every
// problem at once with secrets scrubbed out, key suggestions for unknown
// keys, and bounded reads of credential files. Each provider keeps its own
// keys and rules; this package holds only what would otherwise be copied.
package cloudconfig

import (
	"fmt"
	"io"
	"strconv"
)

// Redacted is what a Secret looks like in any output.
const Redacted = "[redacted]"

// Secret is a credential. It never prints its value: every fmt verb, JSON
// and logr output show [redacted]. Use string(s) only to hand it to the SDK.
type Secret string

// String implements fmt.Stringer.
func (Secret) String() string { return Redacted }

// GoString implements fmt.GoStringer.
func (Secret) GoString() string { return strconv.Quote(Redacted) }

// Format implements fmt.Formatter so that no verb (%x, %q, %d...) reveals the value.
func (Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, Redacted) }

// MarshalJSON keeps the value out of JSON logs and dumps.
func (Secret) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(Redacted)), nil }

// MarshalLog implements logr.Marshaler for structured logs.
func (Secret) MarshalLog() any { return Redacted }
