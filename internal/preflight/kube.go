package preflight

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	cloudapi "k8s.io/cloud-provider/api"
	"sigs.k8s.io/yaml"
)

// Permission is one verb on one resource that the CCM needs.
type Permission struct {
	Namespace     string // "" for cluster-wide (a ClusterRole)
	Group         string
	Resource      string // may name a subresource: "nodes/status"
	Name          string // a resourceNames entry, or ""
	Verb          string
	GrantedByRole string // the Role or ClusterRole that grants it in the manifest
}

func (p Permission) String() string {
	s := p.Verb + " " + p.Resource
	if p.Group != "" {
		s += "." + p.Group
	}
	if p.Name != "" {
		s += " " + p.Name
	}
	if p.Namespace != "" {
		s += " in " + p.Namespace
	}
	return s
}

// Permissions expands an RBAC manifest's Roles and ClusterRoles into one
// Permission per verb, resource and resource name. Bindings and other
// kinds are ignored: the check asks what the identity may do, not how.
func Permissions(manifest []byte) ([]Permission, error) {
	var out []Permission
	dec := utilyaml.NewDocumentDecoder(io.NopCloser(bytes.NewReader(manifest)))
	defer dec.Close()
	buf := make([]byte, len(manifest)+1)
	for {
		n, err := dec.Read(buf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read RBAC manifest: %w", err)
		}
		doc := buf[:n]
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("read RBAC manifest: %w", err)
		}
		var rules []rbacv1.PolicyRule
		var ns, role string
		switch meta.Kind {
		case "ClusterRole":
			var r rbacv1.ClusterRole
			if err := yaml.Unmarshal(doc, &r); err != nil {
				return nil, fmt.Errorf("read ClusterRole: %w", err)
			}
			rules, role = r.Rules, "ClusterRole "+r.Name
		case "Role":
			var r rbacv1.Role
			if err := yaml.Unmarshal(doc, &r); err != nil {
				return nil, fmt.Errorf("read Role: %w", err)
			}
			rules, ns, role = r.Rules, r.Namespace, "Role "+r.Namespace+"/"+r.Name
		default:
			continue
		}
		for _, rule := range rules {
			names := rule.ResourceNames
			if len(names) == 0 {
				names = []string{""}
			}
			for _, g := range rule.APIGroups {
				for _, res := range rule.Resources {
					for _, name := range names {
						for _, verb := range rule.Verbs {
							out = append(out, Permission{Namespace: ns, Group: g, Resource: res, Name: name, Verb: verb, GrantedByRole: role})
						}
					}
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("the RBAC manifest grants nothing")
	}
	return out, nil
}

// checkRBAC asks the API server, with one SelfSubjectAccessReview per
// permission, whether the identity may do what the shipped RBAC grants.
func checkRBAC(ctx context.Context, kube kubernetes.Interface, manifest []byte, rep *Report) {
	const check = "RBAC"
	perms, err := Permissions(manifest)
	if err != nil {
		rep.Fail(check, err.Error(), "this is a bug in the binary's embedded deploy/rbac.yaml")
		return
	}
	who := whoAmI(ctx, kube)
	var denied []string
	roles := map[string]bool{}
	for _, p := range perms {
		resource, sub, _ := strings.Cut(p.Resource, "/")
		review := &authzv1.SelfSubjectAccessReview{Spec: authzv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authzv1.ResourceAttributes{
				Namespace: p.Namespace, Group: p.Group, Resource: resource, Subresource: sub, Name: p.Name, Verb: p.Verb,
			},
		}}
		got, err := kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			rep.Fail(check, fmt.Sprintf("SelfSubjectAccessReview as %s: %v", who, err),
				"check that --kubeconfig reaches the cluster's API server")
			return
		}
		if !got.Status.Allowed {
			denied = append(denied, p.String())
			roles[p.GrantedByRole] = true
		}
	}
	if len(denied) > 0 {
		rep.Fail(check, fmt.Sprintf("%s may not: %s", who, strings.Join(denied, ", ")),
			fmt.Sprintf("apply deploy/rbac.yaml (or install the chart) and bind %s to %s", strings.Join(sortedKeys(roles), " and "), who))
		return
	}
	rep.Pass(check, fmt.Sprintf("%s holds all %d permissions of deploy/rbac.yaml", who, len(perms)))
}

// whoAmI names the identity the client acts as (SelfSubjectReview needs
// no RBAC); "this identity" when the server does not say.
func whoAmI(ctx context.Context, kube kubernetes.Interface) string {
	r, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || r.Status.UserInfo.Username == "" {
		return "this identity"
	}
	return r.Status.UserInfo.Username
}

type nodeList struct {
	items []corev1.Node
	err   error
}

func listNodes(ctx context.Context, kube kubernetes.Interface) nodeList {
	if kube == nil {
		return nodeList{}
	}
	l, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nodeList{err: err}
	}
	return nodeList{items: l.Items}
}

// checkNodes finds the nodes the CCM will never initialize: without a
// providerID and without the uninitialized taint (the kubelet does not run
// with --cloud-provider=external), or with another cloud's providerID.
func checkNodes(nodes nodeList, owns func(string) bool, provider string, rep *Report) {
	const check = "nodes"
	if nodes.err != nil {
		rep.Fail(check, fmt.Sprintf("list nodes: %v", nodes.err), "grant the CCM's RBAC (see the RBAC check) and retry")
		return
	}
	var waiting, initialized int
	var notExternal, foreign []string
	for _, n := range nodes.items {
		switch {
		case n.Spec.ProviderID != "" && owns(n.Spec.ProviderID):
			initialized++
		case n.Spec.ProviderID != "":
			foreign = append(foreign, fmt.Sprintf("%s (%s)", n.Name, n.Spec.ProviderID))
		case hasUninitializedTaint(n):
			waiting++
		default:
			notExternal = append(notExternal, n.Name)
		}
	}
	summary := fmt.Sprintf("%d nodes: %d with a providerID of %s, %d waiting for the CCM (uninitialized taint)",
		len(nodes.items), initialized, provider, waiting)
	switch {
	case len(foreign) > 0 && len(notExternal) > 0:
		rep.Fail(check, fmt.Sprintf("%s; another cloud's providerID: %s; no providerID and no uninitialized taint: %s",
			summary, list(foreign), list(notExternal)),
			"a node belongs to one cloud provider: remove those nodes or run their cloud's CCM; start every kubelet with --cloud-provider=external")
	case len(foreign) > 0:
		rep.Fail(check, fmt.Sprintf("%s; another cloud's providerID: %s", summary, list(foreign)),
			fmt.Sprintf("the %s CCM ignores nodes of another cloud: remove them from this cluster or run their cloud's CCM", provider))
	case len(notExternal) > 0:
		rep.Fail(check, fmt.Sprintf("%s; no providerID and no uninitialized taint (the CCM will never initialize them): %s",
			summary, list(notExternal)),
			"start their kubelets with --cloud-provider=external (it adds the node.cloudprovider.kubernetes.io/uninitialized taint), then re-register the nodes")
	case len(nodes.items) == 0:
		rep.Warn(check, "the cluster has no nodes yet", "nothing to fix; nodes joining with --cloud-provider=external will be initialized")
	default:
		rep.Pass(check, summary)
	}
}

func hasUninitializedTaint(n corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == cloudapi.TaintExternalCloudProvider {
			return true
		}
	}
	return false
}

// list shows at most five names, and how many more there are.
func list(names []string) string {
	sort.Strings(names)
	if len(names) <= 5 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:5], ", "), len(names)-5)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
