//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// consoleTarget is one target row of the console page.
type consoleTarget struct {
	Listener string `json:"listener"`
	Address  string `json:"address"`
	Health   string `json:"health"`
	// Forwarded is the target's traffic counter: connections given to it.
	Forwarded string `json:"forwarded"`
}

// pageTargets reads the target rows the page shows for one load balancer.
const pageTargetsJS = `[...document.querySelectorAll('tr[data-lb=%q][data-target]')].map(r => ({
  listener: r.dataset.listener, address: r.dataset.target, health: r.cells[3].textContent,
  forwarded: r.cells[7].textContent}))`

// TestConsole loads cloudsim's console in headless Chromium (Debian's
// package; `make browser`, part of `make test`, installs it) while the CCM balances a Service over
// three nodes, removes one node, and checks that the targets the page
// shows follow the cloud's, with no console error on the page. The
// screenshot is written to the e2e logs directory.
func TestConsole(t *testing.T) {
	browser := chromiumPath(t)
	const sel = "console"
	nodes := []cloudsim.Instance{lbNode(t, sel), lbNode(t, sel), lbNode(t, sel)}
	spec := lbServiceSpec("console", sel, 8080)
	np := nodePort(spec, 8080)
	for i, n := range nodes {
		serve(t, n.PrivateIP, np, 200, fmt.Sprintf("node-%d", i+1))
	}
	svc := createService(t, spec)
	vip := waitIngress(t, svc, 60*time.Second)
	svc = getService(t, svc)
	lbs := clbsOf(svc.UID)
	if len(lbs) != 1 {
		t.Fatalf("CLBs tagged for the Service = %d, want 1", len(lbs))
	}
	lbID := lbs[0].ID
	waitCLB(t, lbID, "3 targets", 30*time.Second, func(lb tencent.CLBLoadBalancer) bool {
		l, ok := listenerNamed(lb, "TCP-8080")
		return ok && len(l.Targets) == 3
	})

	// The browser lives as long as the test (chromedp: no timeout on the
	// context of the first Run); each wait below has its own deadline.
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 1000),
		chromedp.UserDataDir(t.TempDir()), chromedp.ProxyServer("direct://"))...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()

	if _, err := chromedp.Run(bctx, chromedp.Title()); err != nil { // starts the browser
		t.Fatalf("start Chromium (%s): %v", browser, err)
	}
	// Every console error, uncaught exception and browser log error (a
	// failed load, a CSP violation, a script that does not parse) is a
	// failure.
	var mu sync.Mutex
	var pageErrors []string
	messages := chromedp.Console(bctx)
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for m, err := range messages {
			if err != nil {
				return // the browser ended
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				pageErrors = append(pageErrors, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line+1))
				mu.Unlock()
			}
		}
	}()

	url := suite.simURL + cloudsim.ConsolePath
	loadCtx, cancelLoad := context.WithTimeout(bctx, 30*time.Second)
	defer cancelLoad()
	if err := chromedp.Do(loadCtx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`body[data-polls]`))); err != nil {
		t.Fatalf("load %s in Chromium and see its first poll: %v; page errors: %v", url, err, errorsSoFar(&mu, &pageErrors))
	}
	banner, err := chromedp.Run(loadCtx, chromedp.Text(chromedp.ID(`listener`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(banner, "admin listener") {
		t.Errorf("the page does not say it is served on the admin listener: %q", banner)
	}

	// cloudTargets is what the cloud holds: the listener's targets as the
	// CLB API has them, with their health in the data plane.
	cloudTargets := func() []consoleTarget {
		lb, err := suite.sim.Tencent().CLB().LoadBalancer(lbID)
		if err != nil {
			t.Fatal(err)
		}
		dp, err := suite.sim.Tencent().CLB().DataPlane(lbID)
		if err != nil {
			t.Fatal(err)
		}
		health, forwarded := map[string]string{}, map[string]string{}
		for _, dl := range dp.Listeners {
			for _, dt := range dl.Targets {
				health[dl.ID+" "+dt.Address], forwarded[dl.ID+" "+dt.Address] = dt.Health, fmt.Sprint(dt.Forwarded)
			}
		}
		var out []consoleTarget
		for _, l := range lb.Listeners {
			for _, tg := range l.Targets {
				addr := fmt.Sprintf("%s:%d", tg.IP, tg.Port)
				k := l.ID + " " + addr
				out = append(out, consoleTarget{Listener: l.ID, Address: addr, Health: health[k], Forwarded: forwarded[k]})
			}
		}
		return sortTargets(out)
	}
	// waitPage waits until the page shows exactly the cloud's targets (and
	// their health) and cond holds for them.
	waitPage := func(what string, d time.Duration, cond func([]consoleTarget) bool) []consoleTarget {
		t.Helper()
		deadline := time.Now().Add(d)
		for {
			evalCtx, cancelEval := context.WithTimeout(bctx, 10*time.Second)
			shown, err := chromedp.Run(evalCtx, chromedp.Evaluate[[]consoleTarget](fmt.Sprintf(pageTargetsJS, lbID)))
			cancelEval()
			if err != nil {
				t.Fatalf("read the page's targets: %v", err)
			}
			shown = sortTargets(shown)
			want := cloudTargets()
			if slices.Equal(shown, want) && cond(shown) {
				return shown
			}
			if time.Now().After(deadline) {
				t.Fatalf("console: %s: not within %s; the page shows %+v, the cloud has %+v", what, d, shown, want)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	allHealthy := func(n int) func([]consoleTarget) bool {
		return func(ts []consoleTarget) bool {
			return len(ts) == n && !slices.ContainsFunc(ts, func(c consoleTarget) bool { return c.Health != "healthy" })
		}
	}
	waitPage("3 healthy targets", 30*time.Second, allHealthy(3))
	// Traffic through the VIP: the page's counters follow the data plane's.
	waitAnswers(t, fmt.Sprintf("http://%s:8080/", vip), 20*time.Second, "node-1", "node-2", "node-3")
	waitPage("3 targets that forwarded traffic", 10*time.Second, func(ts []consoleTarget) bool {
		return !slices.ContainsFunc(ts, func(c consoleTarget) bool { return c.Forwarded == "0" })
	})

	// A node removed from the cluster: the CCM deregisters it; the page
	// follows.
	gone := nodes[1]
	if err := suite.cluster.Client.CoreV1().Nodes().Delete(context.Background(), gone.PrivateIP, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCLB(t, lbID, "the removed node no longer a target", 30*time.Second, func(lb tencent.CLBLoadBalancer) bool {
		l, _ := listenerNamed(lb, "TCP-8080")
		return len(l.Targets) == 2
	})
	shown := waitPage("2 healthy targets after the node's removal", 30*time.Second, allHealthy(2))
	for _, s := range shown {
		if strings.HasPrefix(s.Address, gone.PrivateIP+":") {
			t.Errorf("the page still shows the removed node %s: %+v", gone.PrivateIP, shown)
		}
	}

	// Nothing drawn as a stray value ("[object ...]", "undefined", "NaN").
	text, err := chromedp.Run(actionCtx(bctx, t), chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"[object ", "undefined", "NaN"} {
		if i := strings.Index(text, bad); i >= 0 {
			t.Errorf("the page shows %q: ...%s...", bad, text[max(0, i-80):min(len(text), i+80)])
		}
	}

	shotCtx, cancelShot := context.WithTimeout(bctx, 30*time.Second)
	defer cancelShot()
	png, err := chromedp.Run(shotCtx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	shot := filepath.Join(suite.dir, "console.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("console screenshot: %s (%d bytes)", shot, len(png))

	cancelBrowser()
	<-collected
	mu.Lock()
	defer mu.Unlock()
	if len(pageErrors) > 0 {
		t.Errorf("the console page logged errors:\n%s", strings.Join(pageErrors, "\n"))
	}
}

// actionCtx bounds one browser action at 10 s.
func actionCtx(bctx context.Context, t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(bctx, 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func errorsSoFar(mu *sync.Mutex, errs *[]string) []string {
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(*errs)
}

func sortTargets(ts []consoleTarget) []consoleTarget {
	slices.SortFunc(ts, func(a, b consoleTarget) int {
		return strings.Compare(a.Listener+" "+a.Address, b.Listener+" "+b.Address)
	})
	return ts
}

// chromiumPath finds Debian's Chromium; `make browser` (part of `make test`) installs
// it (apt-get install chromium).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium on PATH: run `make browser` (it installs Debian's chromium package with apt-get)")
	return ""
}
