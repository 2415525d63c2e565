// Command e2eshards runs the e2e suite as several processes at once, each
// with its own control plane, cloudsim and CCMs (E2E_SHARD moves its
// loopback addresses apart: test/e2e/shard_test.go) and a share of the
// tests, and reports like one `go test -v` run.
//
// The suite mostly waits (for informers, load balancers, leases), so on a
// 2-core machine two shards take little more than half the wall time of
// one. Tests are dealt longest first to the shard with the least work
// (durations from the last recorded run, test/e2e/durations.txt), so the
// shards end close together.
//
//	go test -c -tags e2e -o bin/e2e.test ./test/e2e/
//	go run ./hack/e2eshards -binary bin/e2e.test -shards 4
package main

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// defaultWeight is the assumed duration of a test without a recorded one.
const defaultWeight = 20 * time.Second

func main() {
	binary := flag.String("binary", "bin/e2e.test", "the e2e test binary (go test -c -tags e2e ./test/e2e/)")
	dir := flag.String("dir", "test/e2e", "the e2e package's directory (the binary runs there, as go test runs it)")
	shards := flag.Int("shards", 4, "processes run at once (1: the suite as one process)")
	run := flag.String("run", "", "only tests whose name matches this regexp (as go test -run, top level only)")
	timeout := flag.Duration("timeout", 30*time.Minute, "each shard's -test.timeout")
	durations := flag.String("durations", "test/e2e/durations.txt", "recorded test durations (name seconds), for dealing the tests")
	record := flag.Bool("record", false, "write the durations of this run's passed tests to -durations")
	dryRun := flag.Bool("dry-run", false, "print the shards' tests and exit")
	first := flag.Int("first-shard", 0, "the first shard's number (E2E_SHARD): another suite running on the machine at the same time needs other numbers")
	flag.Parse()

	if err := runShards(*binary, *dir, *shards, *first, *run, *timeout, *durations, *record, *dryRun); err != nil {
		fmt.Fprintln(os.Stderr, "e2eshards:", err)
		os.Exit(1)
	}
}

func runShards(binary, dir string, n, first int, run string, timeout time.Duration, durationsFile string, record, dryRun bool) error {
	if n < 1 {
		return fmt.Errorf("-shards %d: want at least 1", n)
	}
	tests, err := listTests(dir)
	if err != nil {
		return err
	}
	if run != "" {
		re, err := regexp.Compile(run)
		if err != nil {
			return fmt.Errorf("-run %q: %w", run, err)
		}
		tests = slices.DeleteFunc(tests, func(name string) bool { return !re.MatchString(name) })
	}
	if len(tests) == 0 {
		return fmt.Errorf("no e2e test in %s matches %q", dir, run)
	}
	weights, err := readDurations(durationsFile)
	if err != nil {
		return err
	}
	plan := deal(tests, weights, n)
	if dryRun {
		for i, s := range plan {
			fmt.Printf("shard %d (about %s): %s\n", first+i, s.weight.Round(time.Second), strings.Join(s.tests, " "))
		}
		return nil
	}
	abs, err := filepath.Abs(binary)
	if err != nil {
		return err
	}
	logDir, err := os.MkdirTemp("", "ccm-e2e-shards-")
	if err != nil {
		return err
	}
	fmt.Printf("e2eshards: %d tests in %d shards; logs in %s\n", len(tests), len(plan), logDir)
	for i, s := range plan {
		fmt.Printf("e2eshards: shard %d: %d tests, about %s by the recorded durations\n", first+i, len(s.tests), s.weight.Round(time.Second))
	}

	results := make([]result, len(plan))
	var wg sync.WaitGroup
	var printMu sync.Mutex
	for i, s := range plan {
		wg.Go(func() {
			results[i] = runShard(abs, dir, first+i, s.tests, timeout, filepath.Join(logDir, fmt.Sprintf("shard-%d.log", i)))
			// Each shard's whole output as it ends, so that a failure
			// reads as in one go test run.
			printMu.Lock()
			defer printMu.Unlock()
			fmt.Printf("\n===== e2e shard %d (%s, %s) =====\n", first+i, results[i].status(), results[i].took.Round(time.Second))
			if out, err := os.ReadFile(results[i].log); err == nil {
				_, _ = os.Stdout.Write(out)
			}
		})
	}
	wg.Wait()

	failed := false
	fmt.Println("\ne2eshards: summary")
	for i, r := range results {
		fmt.Printf("  shard %d: %-4s %4d tests, %s", first+i, r.status(), len(plan[i].tests), r.took.Round(time.Second))
		if len(r.failedTests) > 0 {
			fmt.Printf(", failed: %s", strings.Join(r.failedTests, " "))
		}
		fmt.Println()
		failed = failed || r.err != nil
	}
	if record {
		if err := recordDurations(durationsFile, weights, results); err != nil {
			return err
		}
	}
	if failed {
		fmt.Println("FAIL\tgithub.com/ccmkit/ccm/test/e2e (sharded)")
		return fmt.Errorf("a shard failed")
	}
	fmt.Println("ok  \tgithub.com/ccmkit/ccm/test/e2e (sharded)")
	return nil
}

// listTests returns the top-level tests of the package in dir: every
// func TestX(t *testing.T) in its _test.go files.
func listTests(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	var tests []string
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("list e2e tests: %w", err)
		}
		if !inBuild(file) {
			continue // another tag's file (e.g. the soak's): not in the binary
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if ok && fn.Recv == nil && isTestName(fn.Name.Name) && fn.Type.Params.NumFields() == 1 {
				tests = append(tests, fn.Name.Name)
			}
		}
	}
	sort.Strings(tests)
	return tests, nil
}

// buildTags are the tags the suite's binary is built with.
var buildTags = map[string]bool{"e2e": true}

// inBuild reports whether the file's //go:build line (if any, before the
// package clause) holds with buildTags.
func inBuild(file *ast.File) bool {
	for _, g := range file.Comments {
		if g.Pos() > file.Package {
			break
		}
		for _, c := range g.List {
			if constraint.IsGoBuild(c.Text) {
				expr, err := constraint.Parse(c.Text)
				return err == nil && expr.Eval(func(tag string) bool { return buildTags[tag] })
			}
		}
	}
	return true
}

func isTestName(name string) bool {
	rest, ok := strings.CutPrefix(name, "Test")
	return ok && name != "TestMain" && (rest == "" || rest[0] < 'a' || rest[0] > 'z')
}

// readDurations reads "TestName seconds" lines; a missing file is no
// durations.
func readDurations(path string) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		name, secs, ok := strings.Cut(text, " ")
		s, err := strconv.ParseFloat(strings.TrimSpace(secs), 64)
		if !ok || err != nil || s < 0 {
			return nil, fmt.Errorf("%s:%d: want \"TestName seconds\", got %q", path, line, text)
		}
		out[name] = time.Duration(s * float64(time.Second))
	}
	return out, sc.Err()
}

type shardPlan struct {
	tests  []string
	weight time.Duration
}

// deal hands the tests out longest first, each to the shard with the least
// work so far (the LPT rule: within 4/3 of the best split). Shards that
// would get nothing are left out.
func deal(tests []string, weights map[string]time.Duration, n int) []shardPlan {
	weight := func(name string) time.Duration {
		if w, ok := weights[name]; ok {
			return w
		}
		return defaultWeight
	}
	sorted := slices.Clone(tests)
	sort.SliceStable(sorted, func(i, j int) bool { return weight(sorted[i]) > weight(sorted[j]) })
	plan := make([]shardPlan, min(n, len(tests)))
	for _, name := range sorted {
		least := 0
		for i := range plan {
			if plan[i].weight < plan[least].weight {
				least = i
			}
		}
		plan[least].tests = append(plan[least].tests, name)
		plan[least].weight += weight(name)
	}
	for i := range plan {
		sort.Strings(plan[i].tests) // run in the order go test would
	}
	return plan
}

type result struct {
	log         string
	took        time.Duration
	err         error
	failedTests []string
	passed      map[string]time.Duration
}

func (r result) status() string {
	if r.err != nil {
		return "FAIL"
	}
	return "ok"
}

// runShard runs one shard's tests as one test process.
func runShard(binary, dir string, shard int, tests []string, timeout time.Duration, logPath string) result {
	r := result{log: logPath}
	logFile, err := os.Create(logPath)
	if err != nil {
		r.err = err
		return r
	}
	defer logFile.Close()
	cmd := exec.Command(binary, "-test.v", "-test.count=1", "-test.paniconexit0",
		"-test.timeout="+timeout.String(), "-test.run=^("+strings.Join(tests, "|")+")$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "E2E_SHARD="+strconv.Itoa(shard))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	start := time.Now()
	r.err = cmd.Run()
	r.took = time.Since(start)
	r.failedTests, r.passed = outcomes(logPath)
	if r.err == nil && len(r.failedTests) > 0 {
		r.err = fmt.Errorf("shard %d: tests failed", shard)
	}
	return r
}

var outcomeLine = regexp.MustCompile(`^--- (PASS|FAIL): (Test\w+) \(([0-9.]+)s\)`)

// outcomes reads the top-level test results from a go test -v log.
func outcomes(logPath string) (failed []string, passed map[string]time.Duration) {
	passed = map[string]time.Duration{}
	f, err := os.Open(logPath)
	if err != nil {
		return nil, passed
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := outcomeLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		if m[1] == "FAIL" {
			failed = append(failed, m[2])
			continue
		}
		s, _ := strconv.ParseFloat(m[3], 64)
		passed[m[2]] = time.Duration(s * float64(time.Second))
	}
	return failed, passed
}

// recordDurations writes the durations file: this run's passed tests, and
// the earlier durations of the others.
func recordDurations(path string, earlier map[string]time.Duration, results []result) error {
	all := map[string]time.Duration{}
	for k, v := range earlier {
		all[k] = v
	}
	for _, r := range results {
		for k, v := range r.passed {
			all[k] = v
		}
	}
	names := make([]string, 0, len(all))
	for k := range all {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("# Durations of the e2e tests in seconds, for dealing them to shards (hack/e2eshards).\n")
	b.WriteString("# Rewritten by `make e2e-durations`; a test missing here counts as 20 s.\n")
	for _, k := range names {
		fmt.Fprintf(&b, "%s %.1f\n", k, all[k].Seconds())
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
