package cloudconfig

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"strings"
	"time"
)

// normKey folds the spellings a user might type for a key: vpcId, VPC_ID
// and vpc-id all become vpcid.
func normKey(s string) string {
	return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(s))
}

// SameKey reports whether two keys differ only in case, '_' and '-'.
func SameKey(a, b string) bool { return normKey(a) == normKey(b) }

// SuggestKey offers the known key an unknown one was probably meant to be,
// as " (did you mean <prefix><key>?)", or "".
func SuggestKey(prefix, k string, known []string) string {
	for _, want := range known {
		if SameKey(k, want) {
			return fmt.Sprintf(" (did you mean %s%s?)", prefix, want)
		}
	}
	return ""
}

// JSONKeys lists the keys of struct type t: its fields' json tags.
func JSONKeys(t reflect.Type) []string {
	keys := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		keys = append(keys, name)
	}
	return keys
}

// YAMLKind names the kind of a value sigs.k8s.io/yaml decoded, for "must
// be a string, got a number" messages.
func YAMLKind(v any) string {
	switch v.(type) {
	case bool:
		return "a boolean"
	case float64, int64, int:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// OneLine joins a multi-line message (go-yaml lists several errors on new
// lines) into one, so that a single log line shows it whole.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// ReadSmallFile reads a regular file of at most limit bytes: credentials
// are small, and the bound keeps a wrong path (a log, /dev/zero) from being
// read whole. what names the content for the too-large message ("a
// credential", "a PEM key"). An error from opening the file does not repeat
// the path, which the caller's message already names.
func ReadSmallFile(path string, limit int64, what string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return "", fmt.Errorf("%s: %w", pe.Op, pe.Err)
		}
		return "", err
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return "", err
	}
	if int64(len(data)) > limit {
		return "", fmt.Errorf("larger than %d bytes, not %s", limit, what)
	}
	return string(data), nil
}

// Duration parses a config duration: def when s is empty, otherwise a Go
// duration of at least min (0 allows "0s", which switches a feature off).
// hint is the message for a bad value, e.g. `must be a duration like "60s"`.
func Duration(s string, def, minimum time.Duration, hint string) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < minimum {
		return 0, errors.New(hint)
	}
	return d, nil
}
