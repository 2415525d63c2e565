// Command cloudsim runs the cloud API emulator: the Tencent Cloud API at
// POST /, the OCI API under /20160918/, /20170115/ and /20200501/, and the
// admin API under /admin/. Its flags, but for --listen, --seed, -v and
// --version, come from cloudsim.Options.AddFlags: the shared ones and each
// registered dialect's. See docs/cloudsim.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	// CA roots inside the binary: the image has no CA file, and a host's
	// system roots, where present, still take precedence.
	_ "golang.org/x/crypto/x509roots/fallback"

	"github.com/ccmkit/ccm/internal/buildinfo"
	"github.com/ccmkit/ccm/pkg/cloudsim"
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

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cloudsim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8080", "address to listen on; the admin API is unauthenticated, so keep it on loopback")
	seed := fs.String("seed", "", "YAML or JSON seed file: {\"instances\": [...]}")
	verbosity := fs.Int("v", 1, "log verbosity: 0 quiet, 1 one line per API call, 2 also error messages")
	showVersion := fs.Bool("version", false, "print the version, commit and SDK versions, and exit")
	tunnelCA := fs.String("tunnel-ca", "", "write the CA certificate (PEM) of the TLS tunnels to the real API hostnames to this file, for clients to trust (also at GET /admin/tunnel-ca.pem)")
	var opts cloudsim.Options
	finish := opts.AddFlags(fs) // the shared flags and every dialect's
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
	if err := finish(getenv); err != nil {
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
	sim, err := cloudsim.Build(opts)
	if err != nil {
		return err
	}
	if *tunnelCA != "" {
		if err := os.WriteFile(*tunnelCA, sim.TunnelCA(), 0o644); err != nil {
			_ = sim.Close()
			return fmt.Errorf("--tunnel-ca: %w", err)
		}
		logger.Printf("wrote the tunnels' CA certificate to %s", *tunnelCA)
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
	ids := slices.Sorted(maps.Keys(opts.Tencent.Credentials))
	if len(ids) == 0 {
		logger.Printf("WARNING: no credentials configured (--credentials or CLOUDSIM_CREDENTIALS): every API call will fail with AuthFailure.SecretIdNotFound")
	} else {
		logger.Printf("accepting SecretIds: %s", strings.Join(ids, ", "))
	}
	if len(opts.RateLimits) > 0 {
		logger.Printf("rate limit overrides: %s", cloudsim.RateLimitFlag(opts.RateLimits))
	}
	if len(opts.OCI.Keys) == 0 {
		logger.Printf("no OCI API keys configured (--oci-key or POST /admin/oci/keys): OCI calls fail with NotAuthenticated")
	} else {
		logger.Printf("accepting OCI keyIds: %s", strings.Join(slices.Sorted(maps.Keys(opts.OCI.Keys)), ","))
	}

	url, err := sim.Start(*listen)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "cloudsim listening on %s (region %s)\n", url, opts.Region)
	logger.Printf("console (read-only, on this admin listener): %s%s", url, cloudsim.ConsolePath)

	<-ctx.Done()
	logger.Printf("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return sim.Shutdown(shutdownCtx)
}
