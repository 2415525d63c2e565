package cloudconfig

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// KeyDoc is one row of a provider's key table in docs/configuration.md.
// The rows are not written by hand: hack/configdoc reads them from the doc
// comments of the config struct's fields (the type a provider declares as
// ConfigType), so that a key is declared once, next to its field. The
// convention, for each field with a json tag (a section's fields under
// "section."):
//
//   - The comment's first paragraph is the row's meaning and validation, in
//     Markdown (type and default as prose: "Go duration, default `60s`:
//     ..."); its final period is dropped in the table.
//   - Tag lines in that paragraph fill the other columns: "Required: <when>."
//     (default "no") and "Env: NAME, NAME." (the environment variables
//     that set the key, highest precedence first).
//   - "Row: <dotted key>." instead of a meaning puts the key into that
//     earlier key's row (a key and its _file variant, older names).
//   - Later paragraphs are notes for the code's readers, not rendered.
//
// hack/configdoc's tests fail when a key has no row.
type KeyDoc struct {
	// Keys are the file keys the row describes, by dotted path; usually one.
	Keys []string
	// Env are the environment variables that set it, highest precedence
	// first; none for a cloud configured by file only.
	Env []string
	// Required is "yes", "no", or the condition under which it is.
	Required string
	// Doc is the meaning and validation, in Markdown.
	Doc string
}

// KeyTable renders docs as a Markdown table, with an environment column
// when any row has one.
func KeyTable(docs []KeyDoc) string {
	withEnv := slices.ContainsFunc(docs, func(d KeyDoc) bool { return len(d.Env) > 0 })
	var b strings.Builder
	if withEnv {
		b.WriteString("| key | environment (highest precedence first) | required | meaning and validation |\n|---|---|---|---|\n")
	} else {
		b.WriteString("| key | required | meaning and validation |\n|---|---|---|\n")
	}
	for _, d := range docs {
		fmt.Fprintf(&b, "| %s |", codeList(d.Keys))
		if withEnv {
			fmt.Fprintf(&b, " %s |", codeList(d.Env))
		}
		fmt.Fprintf(&b, " %s | %s |\n", d.Required, d.Doc)
	}
	return b.String()
}

func codeList(names []string) string {
	if len(names) == 0 {
		return "—"
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "`" + n + "`"
	}
	return strings.Join(quoted, ", ")
}

// LeafKeys lists the dotted paths of every key of struct type t, sections
// flattened ("auth.region"); a map or a typed value is one key.
func LeafKeys(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		// A struct of keys is a section; a struct without (a typed value
		// such as netip.Prefix) is one key.
		if ft := t.Field(i).Type; ft.Kind() == reflect.Struct {
			if subs := LeafKeys(ft); len(subs) > 0 {
				for _, sub := range subs {
					out = append(out, name+"."+sub)
				}
				continue
			}
		}
		out = append(out, name)
	}
	return out
}

// Generated sections of a Markdown file are delimited by these comments,
// which Markdown renders as nothing.
const (
	sectionBegin = "<!-- BEGIN GENERATED: %s (go run ./hack/configdoc) -->\n"
	sectionEnd   = "<!-- END GENERATED: %s -->\n"
)

// ReplaceSection returns doc with the generated section name replaced by
// content. The prose around it stays hand-written; a missing or unclosed
// section is an error rather than a silently unchanged file.
func ReplaceSection(doc []byte, name, content string) ([]byte, error) {
	begin, end := []byte(fmt.Sprintf(sectionBegin, name)), []byte(fmt.Sprintf(sectionEnd, name))
	i := bytes.Index(doc, begin)
	if i < 0 {
		return nil, fmt.Errorf("no line %q", bytes.TrimSpace(begin))
	}
	j := bytes.Index(doc[i:], end)
	if j < 0 {
		return nil, fmt.Errorf("section %s has no line %q", name, bytes.TrimSpace(end))
	}
	var out bytes.Buffer
	out.Write(doc[:i+len(begin)])
	out.WriteString(content)
	out.Write(doc[i+j:])
	return out.Bytes(), nil
}

// AppendSection returns doc with an empty generated section called name
// added at its end under a heading, unless doc has one already: a new
// provider's key table then needs no hand-made marker lines.
func AppendSection(doc []byte, heading, name string) []byte {
	if bytes.Contains(doc, []byte(fmt.Sprintf(sectionBegin, name))) {
		return doc
	}
	var out bytes.Buffer
	out.Write(bytes.TrimRight(doc, "\n"))
	fmt.Fprintf(&out, "\n\n## %s\n\n", heading)
	fmt.Fprintf(&out, sectionBegin, name)
	fmt.Fprintf(&out, sectionEnd, name)
	return out.Bytes()
}
