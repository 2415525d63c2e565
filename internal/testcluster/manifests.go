package testcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
)

// ApplyFile server-side applies every object in a multi-document YAML file,
// the way `kubectl apply --server-side` would.
func (c *Cluster) ApplyFile(ctx context.Context, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("apply %s: %w", path, err)
	}
	return c.ApplyYAML(ctx, path, data, false)
}

// ApplyYAML server-side applies the objects in data; with dryRun the
// apiserver validates and admits them (schema, defaults, admission) without
// persisting anything, like `kubectl apply --server-side --dry-run=server`.
// source names the input in errors.
func (c *Cluster) ApplyYAML(ctx context.Context, source string, data []byte, dryRun bool) error {
	path := source
	objs, err := decodeManifests(data)
	if err != nil {
		return fmt.Errorf("apply %s: %w", path, err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(c.Admin)
	if err != nil {
		return fmt.Errorf("apply %s: %w", path, err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(c.Admin)
	if err != nil {
		return fmt.Errorf("apply %s: %w", path, err)
	}
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		m, err := mapper.RESTMapping(schema.GroupKind{Group: gvk.Group, Kind: gvk.Kind}, gvk.Version)
		if err != nil {
			return fmt.Errorf("apply %s: %s %s: %w", path, gvk.Kind, obj.GetName(), err)
		}
		body, err := obj.MarshalJSON()
		if err != nil {
			return err
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == "namespace" {
			ns := obj.GetNamespace()
			if ns == "" {
				ns = "default"
			}
			ri = dyn.Resource(m.Resource).Namespace(ns)
		}
		force := true
		// Strict: an unknown or misspelled field is an error, not a warning.
		opts := metav1.PatchOptions{FieldManager: "ccmkit-testcluster", Force: &force, FieldValidation: "Strict"}
		if dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		if _, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, body, opts); err != nil {
			return fmt.Errorf("apply %s: %s %s: %w", path, gvk.Kind, obj.GetName(), err)
		}
	}
	return nil
}

func decodeManifests(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}
