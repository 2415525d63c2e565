package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccm/internal/lb/lbkit"
)

// adoptRequested reports whether the command line asks for the switch-over
// plan (`cloud-controller-manager adopt --dry-run ...`).
func adoptRequested(args []string) bool { return len(args) > 0 && args[0] == "adopt" }

const adoptUsage = `Usage: cloud-controller-manager adopt --dry-run --cloud-provider=NAME --cloud-config=FILE [--kubeconfig=FILE] [--cluster-name=NAME] [-o text|json]

Prints, reading only, what the CCM's first sync would do with every Service
of type LoadBalancer: the cloud load balancer it would find (ours, one an
incumbent CCM made and that it would take over, or one it cannot take over)
or that it would create one, and every cloud write the sync would make.
Run it after stopping the incumbent CCM and before starting this one (see
docs/migration.md). Exits 1 when a plan could not be made. The CCM's own
flags are accepted (in --flag=value form) and the ones adopt does not use
are ignored, so the Deployment's arguments can be pasted as they are.

`

// runAdopt is the adopt subcommand; it returns the exit code.
func runAdopt(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("adopt", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, adoptUsage); fs.PrintDefaults() }
	fs.ParseErrorsAllowlist.UnknownFlags = true
	dryRun := fs.Bool("dry-run", false, "only print the plan (required: the CCM itself takes load balancers over on its first sync)")
	provider := fs.String("cloud-provider", "", "the provider the CCM runs with")
	cloudConfig := fs.String("cloud-config", "", "the cloud config file the CCM reads")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig with the CCM's identity (default: in-cluster, then $KUBECONFIG)")
	clusterName := fs.String("cluster-name", "kubernetes", "the CCM's --cluster-name (it names new load balancers)")
	output := fs.StringP("output", "o", "text", "text or json")
	timeout := fs.Duration("timeout", 5*time.Minute, "bound on the whole plan")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch {
	case !*dryRun:
		fmt.Fprintln(stderr, "adopt: only --dry-run is supported: start the CCM to take the load balancers over")
		return 2
	case *provider == "" || *cloudConfig == "":
		fmt.Fprintln(stderr, "adopt: --cloud-provider and --cloud-config are required")
		fs.Usage()
		return 2
	case *output != "text" && *output != "json":
		fmt.Fprintf(stderr, "adopt: --output %q: want text or json\n", *output)
		return 2
	}
	kube, why := kubeClient(*kubeconfig, "")
	if kube == nil {
		fmt.Fprintln(stderr, "adopt:", why)
		return 2
	}
	cloud, err := cloudprovider.InitCloudProvider(*provider, *cloudConfig)
	if err != nil || cloud == nil {
		fmt.Fprintf(stderr, "adopt: cloud provider %q: %v\n", *provider, err)
		return 1
	}
	lb, ok := cloud.LoadBalancer()
	if !ok {
		fmt.Fprintf(stderr, "adopt: the %s provider manages no load balancers with this config\n", *provider)
		return 1
	}
	planner, ok := lb.(lbkit.PlanSource)
	if !ok {
		fmt.Fprintf(stderr, "adopt: the %s provider cannot plan load balancers\n", *provider)
		return 1
	}
	// The provider reads the Secrets some annotations name (TLS
	// certificates) with the same client.
	if u, ok := lb.(interface{ UseKubeClient(kubernetes.Interface) }); ok {
		u.UseKubeClient(kube)
	}

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	plans, err := planAll(ctx, kube, planner, *clusterName)
	if err != nil {
		fmt.Fprintln(stderr, "adopt:", err)
		return 1
	}
	if *output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(plans)
	} else {
		err = printPlans(stdout, plans)
	}
	if err != nil {
		fmt.Fprintln(stderr, "adopt:", err)
		return 1
	}
	return 0
}

// planAll plans every LoadBalancer Service, with the nodes the service
// controller would give it.
func planAll(ctx context.Context, kube kubernetes.Interface, planner lbkit.PlanSource, clusterName string) ([]lbkit.Plan, error) {
	svcs, err := kube.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Services: %w", err)
	}
	nodeList, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Nodes: %w", err)
	}
	nodes := serviceNodes(nodeList.Items)
	var plans []lbkit.Plan
	for i := range svcs.Items {
		svc := &svcs.Items[i]
		if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || svc.Spec.LoadBalancerClass != nil {
			continue // not ours to sync: the service controller skips them too
		}
		p, err := planner.PlanLoadBalancer(ctx, clusterName, svc, nodes)
		if err != nil {
			return nil, err
		}
		p.Service = types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
		plans = append(plans, p)
	}
	sort.Slice(plans, func(i, j int) bool { return plans[i].Service.String() < plans[j].Service.String() })
	return plans, nil
}

// serviceNodes are the nodes the upstream service controller hands a
// load balancer sync (k8s.io/cloud-provider controllers/service: not
// excluded by node.kubernetes.io/exclude-from-external-load-balancers, not
// tainted ToBeDeletedByClusterAutoscaler, and Ready).
func serviceNodes(all []corev1.Node) []*corev1.Node {
	var out []*corev1.Node
	for i := range all {
		n := &all[i]
		if v, ok := n.Labels[corev1.LabelNodeExcludeBalancers]; ok {
			if exclude, err := strconv.ParseBool(v); err != nil || exclude {
				continue
			}
		}
		if hasTaint(n, "ToBeDeletedByClusterAutoscaler") || !isReady(n) {
			continue
		}
		out = append(out, n)
	}
	return out
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

func isReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// printPlans writes the plans for a person: one block per Service, then
// the totals by verdict.
func printPlans(w io.Writer, plans []lbkit.Plan) error {
	counts := map[lbkit.Verdict]int{}
	var out []byte
	for _, p := range plans {
		counts[p.Verdict]++
		out = fmt.Appendf(out, "Service %s: %s", p.Service, p.Verdict)
		if p.LoadBalancer != "" {
			out = fmt.Appendf(out, " %s %s", p.Kind, p.LoadBalancer)
			if p.Name != "" {
				out = fmt.Appendf(out, " (%q)", p.Name)
			}
		}
		if p.Owner != "" {
			out = fmt.Appendf(out, ", made by %s", p.Owner)
		}
		out = append(out, '\n')
		if p.Reason != "" {
			out = fmt.Appendf(out, "  why: %s\n", p.Reason)
		}
		for _, w := range p.Warnings {
			out = fmt.Appendf(out, "  warning %s: %s\n", w.Reason, w.Message)
		}
		switch {
		case len(p.Writes) > 0:
			out = fmt.Appendf(out, "  first sync: %d cloud writes\n", len(p.Writes))
			for _, wr := range p.Writes {
				out = fmt.Appendf(out, "    %s\n", wr)
			}
		case p.Verdict != lbkit.VerdictRefuse:
			out = append(out, "  first sync: no cloud write\n"...)
		}
	}
	out = fmt.Appendf(out, "%d LoadBalancer Services: %d in sync, %d to update, %d to take over, %d to create, %d refused\n",
		len(plans), counts[lbkit.VerdictInSync], counts[lbkit.VerdictUpdate], counts[lbkit.VerdictTakeOver],
		counts[lbkit.VerdictCreate], counts[lbkit.VerdictRefuse])
	_, err := w.Write(out)
	return err
}
