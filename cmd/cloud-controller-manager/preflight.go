package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ccmkit/ccm/deploy"
	"github.com/ccmkit/ccm/internal/preflight"
)

// preflightRequested reports whether the command line asks for the
// preflight check (`cloud-controller-manager preflight ...`).
func preflightRequested(args []string) bool { return len(args) > 0 && args[0] == "preflight" }

const preflightUsage = `Usage: cloud-controller-manager preflight --cloud-provider=NAME --cloud-config=FILE [--kubeconfig=FILE] [--as=USER] [--cluster-cidr=CIDR]

Checks, reading only, what the CCM needs: credentials and clock, the VPC
(VCN) and subnets, the route table and the pod network, quotas, the CCM's
RBAC and the nodes. Prints one row per check with how to fix it, and exits
1 if any check failed. The CCM's own flags are accepted (in --flag=value
form) and the ones preflight does not use are ignored, so the Deployment's
arguments can be pasted as they are.

`

// runPreflight is the preflight subcommand; it returns the exit code.
func runPreflight(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("preflight", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, preflightUsage); fs.PrintDefaults() }
	fs.ParseErrorsAllowlist.UnknownFlags = true
	provider := fs.String("cloud-provider", "", "the provider the CCM runs with: "+fmt.Sprint(preflight.Providers()))
	cloudConfig := fs.String("cloud-config", "", "the cloud config file the CCM reads")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig with the CCM's identity (default: in-cluster, then $KUBECONFIG); without one the RBAC and node checks are skipped")
	as := fs.String("as", "", "check RBAC as this user by impersonation, e.g. system:serviceaccount:kube-system:cloud-controller-manager (needs impersonate rights)")
	cidr := fs.String("cluster-cidr", "", "the pod network (the CCM's --cluster-cidr)")
	timeout := fs.Duration("timeout", time.Minute, "bound on the whole check")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *provider == "" || *cloudConfig == "" {
		fmt.Fprintln(stderr, "preflight: --cloud-provider and --cloud-config are required")
		fs.Usage()
		return 2
	}
	opts := preflight.Options{Provider: *provider, CloudConfig: *cloudConfig, RBAC: deploy.RBAC}
	if *cidr != "" {
		p, err := preflight.ParsePrefix(*cidr)
		if err != nil {
			fmt.Fprintf(stderr, "preflight: --cluster-cidr %q: %v\n", *cidr, err)
			return 2
		}
		opts.ClusterCIDR = p
	}
	opts.Kube, opts.KubeSkipped = kubeClient(*kubeconfig, *as)

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	rep := preflight.Run(ctx, opts)
	if err := rep.Print(stdout); err != nil {
		fmt.Fprintln(stderr, "preflight:", err)
		return 1
	}
	if rep.Failed() {
		return 1
	}
	return 0
}

// kubeClient builds the client the Kubernetes checks use, or says why
// there is none.
func kubeClient(kubeconfig, as string) (kubernetes.Interface, string) {
	var cfg *rest.Config
	var err error
	switch {
	case kubeconfig != "":
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	case os.Getenv("KUBERNETES_SERVICE_HOST") != "":
		cfg, err = rest.InClusterConfig()
	case os.Getenv("KUBECONFIG") != "":
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), nil).ClientConfig()
	default:
		return nil, "no --kubeconfig, not in a cluster and no $KUBECONFIG: pass the CCM's kubeconfig to check RBAC and nodes"
	}
	if err != nil {
		return nil, fmt.Sprintf("cannot load the kubeconfig: %v", err)
	}
	cfg.Impersonate.UserName = as
	cfg.Timeout = 15 * time.Second
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Sprintf("cannot build a Kubernetes client: %v", err)
	}
	return client, ""
}
