package preflight

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Status is the outcome of one check.
type Status string

const (
	// Pass: the check found nothing wrong.
	Pass Status = "ok"
	// Warn: the CCM will run, but not as the operator probably expects
	// (e.g. more nodes than a listener can bind, so subsetting applies).
	Warn Status = "warn"
	// Fail: the CCM will not work until this is fixed. Any Fail makes
	// preflight exit non-zero.
	Fail Status = "FAIL"
	// Skip: the check could not run (an earlier check failed, or its input
	// is not configured); Detail says why.
	Skip Status = "skip"
)

// Result is one row of the report.
type Result struct {
	Check  string // what was checked, e.g. "credentials", "route table"
	Status Status
	Detail string // what was found
	Fix    string // how to fix it; empty for Pass
}

// Report collects results in the order the checks ran.
type Report struct {
	Results []Result
}

// Add appends one result.
func (r *Report) Add(res Result) { r.Results = append(r.Results, res) }

// Pass, Warn, Fail and Skip append a result of that status.
func (r *Report) Pass(check, detail string)      { r.Add(Result{check, Pass, detail, ""}) }
func (r *Report) Warn(check, detail, fix string) { r.Add(Result{check, Warn, detail, fix}) }
func (r *Report) Fail(check, detail, fix string) { r.Add(Result{check, Fail, detail, fix}) }
func (r *Report) Skip(check, detail string)      { r.Add(Result{check, Skip, detail, ""}) }

// Failed reports whether any check failed.
func (r *Report) Failed() bool {
	for _, res := range r.Results {
		if res.Status == Fail {
			return true
		}
	}
	return false
}

// Find returns the first result of the named check.
func (r *Report) Find(check string) (Result, bool) {
	for _, res := range r.Results {
		if res.Check == check {
			return res, true
		}
	}
	return Result{}, false
}

// Print writes the report as a table (check, result, detail, how to fix)
// and a one-line verdict.
func (r *Report) Print(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tRESULT\tDETAIL\tHOW TO FIX")
	for _, res := range r.Results {
		fix := res.Fix
		if fix == "" {
			fix = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", res.Check, res.Status, oneLine(res.Detail), oneLine(fix))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	counts := map[Status]int{}
	for _, res := range r.Results {
		counts[res.Status]++
	}
	verdict := "preflight passed"
	if r.Failed() {
		verdict = "preflight FAILED"
	}
	_, err := fmt.Fprintf(w, "\n%s: %d ok, %d warn, %d failed, %d skipped\n",
		verdict, counts[Pass], counts[Warn], counts[Fail], counts[Skip])
	return err
}

// oneLine keeps a table cell on one line: API messages may hold newlines.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
