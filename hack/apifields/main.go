// Command apifields writes the table of request fields that the current
// Tencent Cloud API documents for each action cloudsim emulates:
// pkg/cloudsim/tencent/testdata/apifields.json. The unit test
// TestDocumentedFieldsAccepted sends every one of them, raw and signed, and
// fails when cloudsim refuses one by name (UnknownParameter) or by type, as
// the real API would not.
//
// The source is the official Node.js SDK (npm package tencentcloud-sdk-nodejs),
// whose models are generated from the same API definitions as the API
// reference and are released more often than the Go modules the module proxy
// here serves. Its request interfaces,
// tencentcloud/services/<service>/<version>/<service>_models.d.ts, name every
// parameter with its type. It is not part of `make test` (it needs npm):
//
//	mkdir -p /tmp/tcsdk && (cd /tmp/tcsdk && npm install tencentcloud-sdk-nodejs@4.1.313)
//	go run ./hack/apifields -sdk /tmp/tcsdk/node_modules/tencentcloud-sdk-nodejs
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// Table is the file's shape; the test reads the same.
type Table struct {
	Source  string                       `json:"source"`
	Actions map[string]map[string]string `json:"actions"` // "clb.CreateLoadBalancer" -> field path -> JSON kind
}

var (
	ifaceRe = regexp.MustCompile(`^export interface (\w+) \{$`)
	nullRe  = regexp.MustCompile(`^export type (\w+) = null;$`)
	fieldRe = regexp.MustCompile(`^    (\w+)\??: (.+);$`)
	arrayRe = regexp.MustCompile(`^Array<(.+)>$`)
)

// versions are the API versions cloudsim serves, by service.
var versions = map[string]string{
	"clb": tencent.CLBVersion, "cvm": tencent.CVMVersion, "tke": tencent.TKEVersion, "vpc": tencent.VPCVersion, "tag": tencent.TagVersion,
	"sts": tencent.STSVersion,
}

// iface is one interface of a models file: field -> TypeScript type.
type iface map[string]string

func main() {
	sdk := flag.String("sdk", "", "the tencentcloud-sdk-nodejs package directory")
	out := flag.String("out", "pkg/cloudsim/tencent/testdata/apifields.json", "the table to write")
	flag.Parse()
	if *sdk == "" {
		fmt.Fprintln(os.Stderr, "apifields: -sdk is required")
		os.Exit(2)
	}
	var pkg struct{ Version string }
	if err := readJSON(filepath.Join(*sdk, "package.json"), &pkg); err != nil {
		fail(err)
	}
	c := core.New(core.Config{Latency: core.ZeroLatency})
	cl, err := tencent.NewCloud(c, nil, tencent.CloudOptions{})
	if err != nil {
		fail(err)
	}
	defer cl.Close()
	t := Table{
		Source: fmt.Sprintf("tencentcloud-sdk-nodejs %s (npm), tencentcloud/services/<service>/<version>/<service>_models.d.ts: "+
			"each emulated action's request interface, every field path with its JSON kind (written by hack/apifields)", pkg.Version),
		Actions: map[string]map[string]string{},
	}
	for svc, actions := range cl.Actions() {
		models, err := parseModels(*sdk, svc, versions[svc])
		if err != nil {
			fail(err)
		}
		for _, a := range actions {
			req, ok := models[a+"Request"]
			if !ok {
				fail(fmt.Errorf("%s: no %sRequest in the SDK's models", svc, a))
			}
			fields := map[string]string{}
			walk(models, req, "", fields, 0)
			t.Actions[svc+"."+a] = fields
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(t); err != nil {
		fail(err)
	}
	if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		fail(err)
	}
	n := 0
	for _, f := range t.Actions {
		n += len(f)
	}
	fmt.Printf("apifields: %d actions, %d field paths -> %s\n", len(t.Actions), n, *out)
}

// parseModels reads a service's request and data interfaces; a request
// declared as `= null` has no fields.
func parseModels(sdk, svc, version string) (map[string]iface, error) {
	dir := "v" + strings.ReplaceAll(version, "-", "")
	files, _ := filepath.Glob(filepath.Join(sdk, "tencentcloud", "services", svc, dir, svc+"_models.d.ts"))
	if len(files) != 1 {
		return nil, fmt.Errorf("%s: want one models file, found %v", svc, files)
	}
	f, err := os.Open(files[0])
	if err != nil {
		return nil, err
	}
	defer f.Close()
	models := map[string]iface{}
	var cur iface
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := ifaceRe.FindStringSubmatch(line); m != nil {
			cur = iface{}
			models[m[1]] = cur
			continue
		}
		if m := nullRe.FindStringSubmatch(line); m != nil {
			models[m[1]] = iface{}
			continue
		}
		if line == "}" {
			cur = nil
			continue
		}
		if m := fieldRe.FindStringSubmatch(line); m != nil && cur != nil {
			cur[m[1]] = m[2]
		}
	}
	return models, sc.Err()
}

// walk records each field of in under prefix, and the fields of the
// interfaces it names, to a bounded depth (some types nest themselves).
func walk(models map[string]iface, in iface, prefix string, out map[string]string, depth int) {
	for _, name := range slices.Sorted(maps.Keys(in)) {
		typ, path := in[name], prefix+name
		elem, isArray := typ, false
		if m := arrayRe.FindStringSubmatch(typ); m != nil {
			elem, isArray = m[1], true
		}
		kind := scalarKind(elem)
		if kind == "" {
			kind = "object"
		}
		if isArray {
			out[path] = "array:" + kind
		} else {
			out[path] = kind
		}
		if sub, ok := models[elem]; ok && scalarKind(elem) == "" && depth < 3 {
			next := path + "."
			if isArray {
				next = path + "[]."
			}
			walk(models, sub, next, out, depth+1)
		}
	}
}

func scalarKind(ts string) string {
	switch strings.ReplaceAll(ts, " ", "") {
	case "string":
		return "string"
	case "number", "number|bigint":
		return "number"
	case "boolean":
		return "boolean"
	}
	return ""
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "apifields:", err)
	os.Exit(1)
}
