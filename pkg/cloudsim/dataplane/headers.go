package dataplane

import "net/http"

// HeaderEdit is one change a layer-7 listener makes to the headers of each
// request it forwards or each answer it returns (HTTP.RequestHeaders,
// HTTP.ResponseHeaders), as OCI's header rules do.
type HeaderEdit struct {
	Op     string // HeaderSet, HeaderRemove or HeaderExtend
	Name   string // the header; matched case-insensitively
	Value  string // HeaderSet: the value that replaces every occurrence
	Prefix string // HeaderExtend: put before the value
	Suffix string // HeaderExtend: put after the value
}

// Header edit operations.
const (
	HeaderSet    = "set"
	HeaderRemove = "remove"
	HeaderExtend = "extend" // a header that is absent stays absent
)

// applyHeaderEdits makes the edits to h, in order.
func applyHeaderEdits(h http.Header, edits []HeaderEdit) {
	for _, e := range edits {
		switch e.Op {
		case HeaderSet:
			h.Set(e.Name, e.Value)
		case HeaderRemove:
			h.Del(e.Name)
		case HeaderExtend:
			if v := h.Get(e.Name); v != "" {
				h.Set(e.Name, e.Prefix+v+e.Suffix)
			}
		}
	}
}
