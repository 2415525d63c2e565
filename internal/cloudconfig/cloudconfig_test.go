package cloudconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

const testSecret = "AKIDs3cretvalue0123456789"

// TestSecretNeverPrints is security code: no output path may show a
// Secret's value, alone or inside a struct.
func TestSecretNeverPrints(t *testing.T) {
	type holder struct {
		Name string
		Key  Secret `json:"key"`
	}
	s := Secret(testSecret)
	h := holder{Name: "n", Key: s}
	var outputs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10.3s"} {
		outputs = append(outputs, fmt.Sprintf(verb, s), fmt.Sprintf(verb, h), fmt.Sprintf(verb, &h))
	}
	outputs = append(outputs, s.String(), fmt.Sprint(s), fmt.Sprintln(s))
	for _, v := range []any{s, h, &h, map[string]Secret{"k": s}, []Secret{s}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, string(b))
	}
	outputs = append(outputs, fmt.Sprint(s.MarshalLog()))
	var buf strings.Builder
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "key", s, "holder", h)
	slog.New(slog.NewTextHandler(&buf, nil)).Info("x", "key", s, "holder", h)
	outputs = append(outputs, buf.String())
	for _, out := range outputs {
		if strings.Contains(out, testSecret) || strings.Contains(out, "AKID") {
			t.Errorf("output reveals the secret: %s", out)
		}
		if !strings.Contains(out, Redacted) {
			t.Errorf("output %q does not show %s", out, Redacted)
		}
	}
}

func TestScrub(t *testing.T) {
	tests := []struct {
		msg     string
		secrets []string
		want    string
	}{
		{"region \"s3cret\": bad", []string{"s3cret"}, "region \"[redacted]\": bad"},
		{"short abc stays", []string{"abc"}, "short abc stays"},
		// The marker itself spells the secret: the whole message goes.
		{"x dact y", []string{"dact"}, "(message hidden because it would reveal a secret)"},
		// ...and if the fallback spells it too, only "***" is left.
		{"x dact hidden y", []string{"dact", "hidden"}, "***"},
	}
	for _, tt := range tests {
		if got := Scrub(tt.msg, tt.secrets); got != tt.want {
			t.Errorf("Scrub(%q) = %q, want %q", tt.msg, got, tt.want)
		}
	}
}

// TestProblemsScrubSecrets: a secret pasted into any key, or a line of a
// PEM key, never reaches the error, in any of its forms.
func TestProblemsScrubSecrets(t *testing.T) {
	pem := "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAsecretline0001\nMIIEowIBAAKCAQEAsecretline0002\n-----END RSA PRIVATE KEY-----\n"
	var p Problems
	p.Remember("  " + testSecret + "\n")
	p.Remember(pem)
	p.Remember("   ") // blank: nothing to scrub, and ordinary spaces must survive
	p.Addf("region %q: must look like ap-guangzhou", testSecret)
	p.Addf("vpc_id %q: bad", "MIIEowIBAAKCAQEAsecretline0002")
	p.Addf("read %s: %w", "x", fs.ErrNotExist)
	err := p.Err("testcloud")
	var ce *Error
	if !errors.As(err, &ce) || len(ce.Problems) != 3 {
		t.Fatalf("err = %#v, want *Error with 3 problems", err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("errors.Is(err, fs.ErrNotExist) = false; problems must stay unwrappable")
	}
	outputs := []string{err.Error(), fmt.Sprintf("%v", err), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err),
		fmt.Sprintf("%v", *ce), fmt.Sprintf("%+v", *ce), fmt.Sprintf("%#v", *ce), fmt.Sprintf("%#v", []any{ce})}
	for _, pr := range ce.Problems {
		outputs = append(outputs, pr.Error())
	}
	if b, jerr := json.Marshal(ce); jerr == nil {
		outputs = append(outputs, string(b))
	}
	for _, out := range outputs {
		for _, s := range []string{testSecret, "MIIEowIBAAKCAQEAsecretline0002", "secretline0001"} {
			if strings.Contains(out, s) {
				t.Errorf("output reveals %q: %s", s, out)
			}
		}
	}
	want := `testcloud config: 3 problems: (1) region "[redacted]": must look like ap-guangzhou; (2) vpc_id "[redacted]": bad; (3) read x: file does not exist`
	if got := err.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
	var none Problems
	if none.Err("x") != nil {
		t.Error("Err without problems is not nil")
	}
	one := Problems{}
	one.Addf("a: required")
	if got := one.Err("oci").Error(); got != "oci config: a: required" {
		t.Errorf("one problem: %q", got)
	}
}

// TestErrorScrubsAcrossJoins: a contrived secret that spans two problems
// once they are joined is still hidden.
func TestErrorScrubsAcrossJoins(t *testing.T) {
	var p Problems
	p.Remember("end; (2) start")
	p.Addf("the end")
	p.Addf("start here")
	if got := p.Err("c").Error(); strings.Contains(got, "end; (2) start") {
		t.Errorf("Error() reveals the secret: %s", got)
	}
}

func TestSuggestKey(t *testing.T) {
	known := []string{"vpc_id", "region", "subnet1"}
	tests := []struct{ prefix, key, want string }{
		{"", "vpcId", " (did you mean vpc_id?)"},
		{"", "VPC-ID", " (did you mean vpc_id?)"},
		{"loadBalancer.", "Subnet_1", " (did you mean loadBalancer.subnet1?)"},
		{"", "zone", ""},
	}
	for _, tt := range tests {
		if got := SuggestKey(tt.prefix, tt.key, known); got != tt.want {
			t.Errorf("SuggestKey(%q, %q) = %q, want %q", tt.prefix, tt.key, got, tt.want)
		}
	}
}

func TestYAMLKind(t *testing.T) {
	for v, want := range map[any]string{true: "a boolean", 1.5: "a number", "s": "a string", int64(2): "a number"} {
		if got := YAMLKind(v); got != want {
			t.Errorf("YAMLKind(%v) = %q, want %q", v, got, want)
		}
	}
	if got := YAMLKind([]any{1}); got != "a list" {
		t.Errorf("list: %q", got)
	}
	if got := YAMLKind(map[string]any{}); got != "a mapping" {
		t.Errorf("mapping: %q", got)
	}
}

func TestJSONKeys(t *testing.T) {
	type c struct {
		A string `json:"a_key,omitempty"`
		B Secret `json:"b"`
	}
	if got := strings.Join(JSONKeys(reflect.TypeFor[c]()), ","); got != "a_key,b" {
		t.Errorf("JSONKeys = %s", got)
	}
}

func TestReadSmallFile(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok")
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(ok, []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, make([]byte, 11), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadSmallFile(ok, 10, "a credential"); err != nil || got != "abc\n" {
		t.Errorf("ok: %q, %v", got, err)
	}
	if _, err := ReadSmallFile(big, 10, "a credential"); err == nil || err.Error() != "larger than 10 bytes, not a credential" {
		t.Errorf("big: %v", err)
	}
	if _, err := ReadSmallFile(dir, 10, "a credential"); err == nil || err.Error() != "not a regular file" {
		t.Errorf("dir: %v", err)
	}
	_, err := ReadSmallFile(filepath.Join(dir, "missing"), 10, "a credential")
	if !errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), dir) {
		t.Errorf("missing: %v (want fs.ErrNotExist, without the path)", err)
	}
}

func TestDuration(t *testing.T) {
	const hint = "must be a duration"
	tests := []struct {
		in      string
		min     time.Duration
		want    time.Duration
		wantErr bool
	}{
		{"", 0, time.Minute, false},
		{"0s", 0, 0, false},
		{"90s", 0, 90 * time.Second, false},
		{"0s", time.Nanosecond, 0, true},
		{"-1s", 0, 0, true},
		{"5", 0, 0, true},
	}
	for _, tt := range tests {
		got, err := Duration(tt.in, time.Minute, tt.min, hint)
		if (err != nil) != tt.wantErr || got != tt.want || (err != nil && err.Error() != hint) {
			t.Errorf("Duration(%q, min %s) = %s, %v", tt.in, tt.min, got, err)
		}
	}
}

func TestKeyTableAndLeafKeys(t *testing.T) {
	type inner struct {
		B string `json:"b"`
	}
	type cfg struct {
		A    string            `json:"a"`
		In   inner             `json:"in"`
		M    map[string]string `json:"m,omitempty"`
		P    netip.Prefix      `json:"p,omitempty"`
		Skip string            `json:"-"`
	}
	docs := []KeyDoc{{Keys: []string{"a"}, Env: []string{"X_A"}, Required: "yes", Doc: "the a"}, {Keys: []string{"in.b", "m", "p"}, Required: "no", Doc: "b, m and p"}}
	if got, want := LeafKeys(reflect.TypeFor[cfg]()), []string{"a", "in.b", "m", "p"}; !slices.Equal(got, want) {
		t.Errorf("LeafKeys = %v, want %v", got, want)
	}
	want := "| key | environment (highest precedence first) | required | meaning and validation |\n|---|---|---|---|\n" +
		"| `a` | `X_A` | yes | the a |\n| `in.b`, `m`, `p` | — | no | b, m and p |\n"
	if got := KeyTable(docs); got != want {
		t.Errorf("KeyTable =\n%s\nwant\n%s", got, want)
	}
	if got := KeyTable(docs[1:]); !strings.HasPrefix(got, "| key | required |") {
		t.Errorf("no env column expected: %s", got)
	}
}

func TestReplaceSection(t *testing.T) {
	doc := "intro\n<!-- BEGIN GENERATED: a (go run ./hack/configdoc) -->\nold\n<!-- END GENERATED: a -->\nafter\n"
	got, err := ReplaceSection([]byte(doc), "a", "new\nrows\n")
	want := "intro\n<!-- BEGIN GENERATED: a (go run ./hack/configdoc) -->\nnew\nrows\n<!-- END GENERATED: a -->\nafter\n"
	if err != nil || string(got) != want {
		t.Errorf("ReplaceSection = %q, %v; want %q", got, err, want)
	}
	if _, err := ReplaceSection([]byte(doc), "b", "x"); err == nil || !strings.Contains(err.Error(), "BEGIN GENERATED: b") {
		t.Errorf("missing section: err = %v", err)
	}
	unclosed := "<!-- BEGIN GENERATED: a (go run ./hack/configdoc) -->\nold\n"
	if _, err := ReplaceSection([]byte(unclosed), "a", "x"); err == nil || !strings.Contains(err.Error(), "END GENERATED: a") {
		t.Errorf("unclosed section: err = %v", err)
	}
}

// A provider without a section gets one at the end; one with a section
// keeps it where it is.
func TestAppendSection(t *testing.T) {
	doc := "intro\n<!-- BEGIN GENERATED: a (go run ./hack/configdoc) -->\nold\n<!-- END GENERATED: a -->\nafter\n"
	if got := AppendSection([]byte(doc), "`a` keys", "a"); string(got) != doc {
		t.Errorf("AppendSection with the section present changed the doc: %q", got)
	}
	got := AppendSection([]byte(doc), "`b` keys", "b")
	want := doc + "\n## `b` keys\n\n<!-- BEGIN GENERATED: b (go run ./hack/configdoc) -->\n<!-- END GENERATED: b -->\n"
	if string(got) != want {
		t.Errorf("AppendSection = %q, want %q", got, want)
	}
	if filled, err := ReplaceSection(got, "b", "rows\n"); err != nil || !strings.HasSuffix(string(filled), "-->\nrows\n<!-- END GENERATED: b -->\n") {
		t.Errorf("the appended section is not fillable: %q, %v", filled, err)
	}
}
