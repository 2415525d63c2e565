package clbops

import (
	"testing"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// A write's task is polled once when the first poll waits longer than the
// task runs, and at least twice (the first answer "running") when it polls
// at once: the wait is what saves the reads.
func TestWaitTaskFirstWaitSavesPolls(t *testing.T) {
	for _, tc := range []struct {
		name      string
		firstWait time.Duration
		wantOne   bool
	}{
		{"waits longer than the task", 150 * time.Millisecond, true},
		{"polls at once", time.Nanosecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCLBEnvWith(t, func(o *cloudsim.Options) { o.Tencent.TaskLatency = 40 * time.Millisecond })
			o := New(e.api, Config{VpcID: testVPC, Timing: Timing{
				TaskFirstWait: tc.firstWait, TaskPoll: time.Millisecond, TaskPollMax: time.Millisecond, TaskTimeout: 5 * time.Second,
				RetryBackoff: time.Millisecond, RetryBackoffMax: time.Millisecond, RetryTimeout: 5 * time.Second,
			}})
			mustEnsure(t, o, testSpec())
			writes, polls := len(e.writes()), e.count("DescribeTaskStatus")
			if writes == 0 {
				t.Fatal("no writes recorded")
			}
			if tc.wantOne && polls != writes {
				t.Errorf("%d DescribeTaskStatus for %d writes, want one per write: %v", polls, writes, e.actions())
			}
			if !tc.wantOne && polls <= writes {
				t.Errorf("%d DescribeTaskStatus for %d writes, want more (the first poll answers running): %v", polls, writes, e.actions())
			}
		})
	}
}
