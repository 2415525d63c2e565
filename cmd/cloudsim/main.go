// Command cloudsim runs the cloud API emulator: the Tencent Cloud API at
// POST /, the OCI API under /20160918/, /20170115/ and /20200501/, and the
// admin API under /admin/. See docs/cloudsim.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	// CA roots inside the binary: the image has no CA file, and a host's
	// system roots, where present, still take precedence.
	_ "golang.org/x/crypto/x509roots/fallback"

	"github.com/ccmkit/ccm/internal/buildinfo"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
	"github.com/ccmkit/ccm/pkg/cloudsim/oci"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "cloudsim:", err)
		os.Exit(2)
	}
}

// rateLimits is a repeatable --rate-limit Action=QPS flag.
type rateLimits map[string]float64

func (r rateLimits) String() string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%g", k, r[k])
	}
	return strings.Join(parts, ",")
}

func (r rateLimits) Set(s string) error {
	action, qps, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(action) == "" {
		return fmt.Errorf("want Action=QPS, got %q", s)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(qps), 64)
	if err != nil || v != v {
		return fmt.Errorf("QPS in %q is not a number", s)
	}
	r[strings.TrimSpace(action)] = v
	return nil
}

// parseCredentials parses "id:key[,id:key]". Errors never include a key.
func parseCredentials(s string) (map[string]string, error) {
	out := map[string]string{}
	for i, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		id, key, ok := strings.Cut(pair, ":")
		id, key = strings.TrimSpace(id), strings.TrimSpace(key)
		if !ok || id == "" || key == "" {
			return nil, fmt.Errorf("credential %d is not of the form SecretId:SecretKey", i+1)
		}
		out[id] = key
	}
	return out, nil
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cloudsim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8080", "address to listen on; the admin API is unauthenticated, so keep it on loopback")
	seed := fs.String("seed", "", "YAML or JSON seed file: {\"instances\": [...]}")
	sgSeed := fs.String("security-groups", "", "YAML or JSON Tencent security group seed: {\"securityGroups\": [...]}, loaded before --seed")
	creds := fs.String("credentials", "", "accepted Tencent credentials, SecretId:SecretKey[,SecretId:SecretKey] (default $CLOUDSIM_CREDENTIALS)")
	region := fs.String("region", "ap-guangzhou", "default region")
	linger := fs.Duration("terminated-linger", 2*time.Second, "how long a TERMINATING instance stays visible (negative: forever)")
	verbosity := fs.Int("v", 1, "log verbosity: 0 quiet, 1 one line per API call, 2 also error messages")
	limits := rateLimits{}
	fs.Var(limits, "rate-limit", "per-action rate limit override, Action=QPS (repeatable; QPS <= 0 disables)")
	taskLatency := fs.Duration("task-latency", tencent.DefaultTaskLatency, "how long each asynchronous CLB task runs (0: done before the call returns)")
	quotaOpen := fs.Int("clb-quota-open", tencent.DefaultCLBQuota, "OPEN (public) load balancers allowed per region")
	quotaInternal := fs.Int("clb-quota-internal", tencent.DefaultCLBQuota, "INTERNAL load balancers allowed per region")
	targetQuota := fs.Int("clb-target-quota", tencent.DefaultTargetQuota, "targets per CLB listener (TOTAL_TARGET_BIND_QUOTA; a ticket raises it on Tencent Cloud)")
	deleteLimit := fs.Int("clb-delete-frequency-limit", tencent.DefaultDeleteFrequencyLimit, "DeleteLoadBalancer refuses (FailedOperation.FrequencyCheckRisk) the deletion that makes this many load balancers deleted in a region within --clb-delete-frequency-window")
	deleteWindow := fs.Duration("clb-delete-frequency-window", tencent.DefaultDeleteFrequencyWindow, "the sliding window of --clb-delete-frequency-limit")
	nullHC := fs.Bool("clb-null-health-check-fields", false, "DescribeListeners answers null for every health check field the SDK says may be null, whatever the check type")
	vipRange := fs.String("vip-range", dataplane.DefaultVIPRange, "pool of load balancer VIPs, A-B or a CIDR prefix; must be bindable (Linux routes 127/8 to lo)")
	hcInterval := fs.Duration("health-check-interval", 0, "if > 0, replaces every listener's health check interval (for tests)")
	noDataPlane := fs.Bool("no-dataplane", false, "allocate VIPs but open no listener sockets")
	ociRegion := fs.String("oci-region", oci.DefaultRegion, "OCI region played by the OCI API")
	keys := ociKeys{}
	fs.Var(keys, "oci-key", "accepted OCI API key, <tenancy OCID>/<user OCID>/<fingerprint>=PUBLIC_KEY_PEM_FILE (repeatable)")
	ociNetwork := fs.String("oci-network", "", "YAML or JSON OCI network seed: compartments, availabilityDomains, vcns, subnets, securityLists")
	lbPerSet := fs.Int("oci-lb-backends-per-set", oci.DefaultLBLimits.BackendsPerSet, "backends per OCI load balancer backend set")
	lbBackends := fs.Int("oci-lb-backends", oci.DefaultLBLimits.Backends, "backends per OCI load balancer, across its backend sets")
	nlbPerSet := fs.Int("oci-nlb-backends-per-set", oci.DefaultNLBLimits.BackendsPerSet, "backends per OCI network load balancer backend set")
	nlbBackends := fs.Int("oci-nlb-backends", oci.DefaultNLBLimits.Backends, "backends per OCI network load balancer, across its backend sets")
	fixedShapes := fs.Bool("oci-fixed-shapes", false, "play an OCI tenancy created before May 2023, which may still create the fixed LB shapes (10Mbps, 100Mbps, 400Mbps, 8000Mbps); by default only flexible")
	retention := fs.Duration("oci-terminated-retention", oci.DefaultTerminatedRetention, "how long a terminated OCI instance stays visible as TERMINATED (0: it disappears with --terminated-linger, then GetInstance answers 404)")
	wrLatency := fs.Duration("oci-work-request-latency", oci.DefaultWorkRequestLatency, "how long each OCI load balancer work request runs (0: done before the call returns)")
	latencyFlag := fs.String("latency", "default", "how long each API call takes to answer: default (realistic, per cloud: see docs/cloudsim.md#latency), zero, or read=<median>/<p99>,write=<median>/<p99> (e.g. read=40ms/200ms,write=80ms/400ms)")
	showVersion := fs.Bool("version", false, "print the version, commit and SDK versions, and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if *showVersion {
		_, err := fmt.Fprint(stdout, buildinfo.Get())
		return err
	}
	logger := log.New(stderr, "cloudsim ", log.LstdFlags|log.Lmicroseconds)

	credSrc := "--credentials"
	if *creds == "" {
		*creds, credSrc = getenv("CLOUDSIM_CREDENTIALS"), "CLOUDSIM_CREDENTIALS"
	}
	credentials, err := parseCredentials(*creds)
	if err != nil {
		return fmt.Errorf("%s: %w", credSrc, err)
	}
	if *linger == 0 {
		return errors.New("--terminated-linger must not be 0 (use a negative value to keep TERMINATING instances forever)")
	}
	if err := cloudsim.CheckVIPRange(*vipRange); err != nil {
		return fmt.Errorf("--vip-range: %w", err)
	}
	if *quotaOpen < 1 || *quotaInternal < 1 || *targetQuota < 1 {
		return errors.New("--clb-quota-open, --clb-quota-internal and --clb-target-quota must be at least 1")
	}
	if min(*lbPerSet, *lbBackends, *nlbPerSet, *nlbBackends) < 1 {
		return errors.New("--oci-lb-backends-per-set, --oci-lb-backends, --oci-nlb-backends-per-set and --oci-nlb-backends must be at least 1")
	}
	if *deleteLimit < 1 || *deleteWindow <= 0 {
		return errors.New("--clb-delete-frequency-limit must be at least 1 and --clb-delete-frequency-window positive")
	}
	latency, err := cloudsim.ParseLatency(*latencyFlag)
	if err != nil {
		return fmt.Errorf("--latency: %w", err)
	}
	if *taskLatency == 0 {
		*taskLatency = -1 // Options: negative means instant, 0 the default
	}
	if *wrLatency == 0 {
		*wrLatency = -1
	}
	if *retention == 0 {
		*retention = -1 // Options: negative means none, 0 the default
	}
	var groups []cloudsim.SecurityGroup
	if *sgSeed != "" {
		if groups, err = cloudsim.LoadSecurityGroups(*sgSeed); err != nil {
			return fmt.Errorf("--security-groups: %w", err)
		}
	}
	var network cloudsim.OCINetworkSeed
	if *ociNetwork != "" {
		if network, err = loadOCINetwork(*ociNetwork); err != nil {
			return err
		}
	}

	opts := cloudsim.Options{
		Region:           *region,
		Credentials:      credentials,
		RateLimits:       limits,
		TerminatedLinger: *linger,
		Latency:          latency,

		TaskLatency:         *taskLatency,
		CLBQuotaOpen:        *quotaOpen,
		CLBQuotaInternal:    *quotaInternal,
		CLBTargetQuota:      *targetQuota,
		VIPRange:            *vipRange,
		HealthCheckInterval: *hcInterval,
		DisableDataPlane:    *noDataPlane,

		CLBDeleteFrequencyLimit:  *deleteLimit,
		CLBDeleteFrequencyWindow: *deleteWindow,
		CLBNullHealthCheckFields: *nullHC,

		OCIRegion:             *ociRegion,
		OCIKeys:               keys,
		OCINetwork:            network,
		OCIWorkRequestLatency: *wrLatency,
		OCILBLimits:           cloudsim.OCIBalancerLimits{BackendsPerSet: *lbPerSet, Backends: *lbBackends},
		OCINLBLimits:          cloudsim.OCIBalancerLimits{BackendsPerSet: *nlbPerSet, Backends: *nlbBackends},

		OCIFixedShapes:         *fixedShapes,
		OCITerminatedRetention: *retention,
	}
	if err := cloudsim.CheckOCIOptions(opts); err != nil {
		return err
	}
	if *verbosity > 0 {
		opts.DataPlaneLog = logger.Printf
		v := *verbosity
		opts.OnCall = func(c cloudsim.Call) {
			svc := c.Service
			if svc == "" {
				svc = "?"
			}
			line := fmt.Sprintf("call %s %s/%s region=%s secretId=%s code=%s took=%s requestId=%s",
				c.Dialect, svc, c.Action, c.Region, c.Principal, c.Code, c.Duration.Round(time.Microsecond), c.RequestID)
			if v >= 2 && c.Message != "" {
				line += fmt.Sprintf(" message=%q", c.Message)
			}
			logger.Print(line)
		}
	}
	sim := cloudsim.New(opts)
	for _, sg := range groups {
		if _, err := sim.CreateSecurityGroup(sg); err != nil {
			sim.Close()
			return fmt.Errorf("--security-groups %s: %w", *sgSeed, err)
		}
	}

	if *seed != "" {
		in, err := cloudsim.LoadSeed(*seed)
		if err != nil {
			return err
		}
		out, err := sim.AddInstances(in...)
		if err != nil {
			return fmt.Errorf("seed %s: %w", *seed, err)
		}
		logger.Printf("seeded %d instances from %s", len(out), *seed)
	}

	if host, _, err := net.SplitHostPort(*listen); err == nil {
		if ip := net.ParseIP(host); (ip == nil && host != "localhost") || (ip != nil && !ip.IsLoopback()) {
			logger.Printf("WARNING: listening on %s: the admin API is unauthenticated; bind to a loopback address", *listen)
		}
	}
	ids := make([]string, 0, len(credentials))
	for id := range credentials {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if len(ids) == 0 {
		logger.Printf("WARNING: no credentials configured (--credentials or CLOUDSIM_CREDENTIALS): every API call will fail with AuthFailure.SecretIdNotFound")
	} else {
		logger.Printf("accepting SecretIds: %s", strings.Join(ids, ", "))
	}
	if len(limits) > 0 {
		logger.Printf("rate limit overrides: %s", limits)
	}
	if len(keys) == 0 {
		logger.Printf("no OCI API keys configured (--oci-key or POST /admin/oci/keys): OCI calls fail with NotAuthenticated")
	} else {
		logger.Printf("accepting OCI keyIds: %s", keys)
	}

	url, err := sim.Start(*listen)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "cloudsim listening on %s (region %s)\n", url, *region)

	<-ctx.Done()
	logger.Printf("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return sim.Shutdown(shutdownCtx)
}
