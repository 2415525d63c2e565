package deploy

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// The SDKs whose client calls are scanned.
const (
	tencentSDK = "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/"
	ociSDK     = "github.com/oracle/oci-go-sdk/v65/"
)

// sdkCall is one call site of an SDK operation.
type sdkCall struct {
	Package string // the SDK package of the request type
	Op      string // the operation: DescribeInstances, ListInstances
	At      string // file:line
}

// scanSDKCalls type-checks every package of this module that the binary
// mainPkg links, and returns each call of a method that takes the SDK's
// request type of the same name (DescribeInstancesWithContext(ctx,
// *cvm.DescribeInstancesRequest), ListInstances(ctx, core.ListInstancesRequest)).
// Calls through our own interfaces count too: their methods take the SDK's
// request types, which is what ties a call to an API operation.
func scanSDKCalls(root, module, mainPkg string) ([]sdkCall, error) {
	// The flags of `make build`, so that the export data is the build
	// cache's from that build rather than a second compile of the module.
	cmd := exec.Command("go", "list", "-trimpath", "-deps", "-export", "-json=ImportPath,Dir,Export,GoFiles,Standard", mainPkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %v: %s", mainPkg, err, stderr.String())
	}
	type pkg struct {
		ImportPath, Dir, Export string
		GoFiles                 []string
	}
	exports := map[string]string{}
	var ours []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, err
		}
		exports[p.ImportPath] = p.Export
		if strings.HasPrefix(p.ImportPath, module+"/") {
			ours = append(ours, p)
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	var calls []sdkCall
	for _, p := range ours {
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				return nil, err
			}
			files = append(files, f)
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
		if _, err := (&types.Config{Importer: imp}).Check(p.ImportPath, fset, files, info); err != nil {
			return nil, fmt.Errorf("type-check %s: %w", p.ImportPath, err)
		}
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if c, ok := sdkCallOf(info.Uses[sel.Sel]); ok {
					pos := fset.Position(call.Pos())
					rel, _ := filepath.Rel(root, pos.Filename)
					c.At = fmt.Sprintf("%s:%d", rel, pos.Line)
					calls = append(calls, c)
				}
				return true
			})
		}
	}
	return calls, nil
}

// sdkCallOf: a method named Op or OpWithContext with a parameter of the
// SDK's OpRequest type (or a pointer to it).
// sdkShaped are request types the CCM declares itself in an SDK
// package's shape, because the Go module proxy serves no version of that
// package (internal/tencent/tcapi/tag.go), and the SDK package they stand for.
var sdkShaped = map[string]string{
	module + "/internal/tencent/tcapi.AttachResourcesTagRequest": tencentSDK + "tag/v20180813",
}

func sdkCallOf(obj types.Object) (sdkCall, bool) {
	fn, ok := obj.(*types.Func)
	if !ok {
		return sdkCall{}, false
	}
	sig, ok := fn.Type().(*types.Signature)
	if !ok || sig.Recv() == nil {
		return sdkCall{}, false
	}
	op := strings.TrimSuffix(fn.Name(), "WithContext")
	for v := range sig.Params().Variables() {
		t := v.Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		named, ok := t.(*types.Named)
		if !ok || named.Obj().Pkg() == nil || named.Obj().Name() != op+"Request" {
			continue
		}
		path := named.Obj().Pkg().Path()
		if sdk, ok := sdkShaped[path+"."+named.Obj().Name()]; ok {
			path = sdk
		}
		if strings.HasPrefix(path, tencentSDK) || strings.HasPrefix(path, ociSDK) {
			return sdkCall{Package: path, Op: op}, true
		}
	}
	return sdkCall{}, false
}

// sites lists where each key is called, for error messages.
func sites(calls []sdkCall, key func(sdkCall) string) map[string][]string {
	out := map[string][]string{}
	for _, c := range calls {
		k := key(c)
		if !slices.Contains(out[k], c.At) {
			out[k] = append(out[k], c.At)
		}
	}
	return out
}
