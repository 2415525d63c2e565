package core

import (
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestTasksOneAtATime(t *testing.T) {
	c := New(Config{})
	ts := NewTasks(c, 0)
	defer ts.Close()

	r, err := ts.Reserve("CreateListener", "lb-1", "lb-2")
	if err != nil {
		t.Fatal(err)
	}
	_, err = ts.Reserve("DeleteListener", "lb-2")
	var be *BusyError
	if !errors.Is(err, ErrBusy) || !errors.As(err, &be) || be.Resource != "lb-2" || be.Holder != "CreateListener" {
		t.Fatalf("reserving a busy resource: %v", err)
	}
	if h, busy := ts.Busy("lb-1"); !busy || h != "CreateListener" {
		t.Fatalf("Busy = %q %v", h, busy)
	}
	r.Release()
	r.Release() // idempotent
	if _, busy := ts.Busy("lb-1"); busy {
		t.Fatal("still busy after Release")
	}
	if _, err := ts.Reserve("x", "lb-2"); err != nil {
		t.Fatalf("after Release: %v", err)
	}
}

func TestTaskLifecycle(t *testing.T) {
	tests := []struct {
		name      string
		latency   time.Duration
		applyErr  error
		fault     *Fault
		wantState TaskState
		wantMsg   string
		applied   bool
		aborted   bool
	}{
		{name: "instant", wantState: TaskSucceeded, applied: true},
		{name: "delayed", latency: 30 * time.Millisecond, wantState: TaskSucceeded, applied: true},
		{name: "apply fails", applyErr: errors.New("listener gone"), wantState: TaskFailed, wantMsg: "listener gone", applied: true},
		{name: "injected failure", fault: &Fault{Action: "CreateListener", ErrorRate: 1, FailTask: true, ErrorCode: "FailedOperation"},
			wantState: TaskFailed, wantMsg: "FailedOperation", aborted: true},
		{name: "injected for all actions", fault: &Fault{Action: AllActions, ErrorRate: 1, FailTask: true},
			wantState: TaskFailed, wantMsg: "InternalError", aborted: true},
		{name: "error fault without failTask leaves tasks alone", fault: &Fault{Action: "CreateListener", ErrorRate: 1},
			wantState: TaskSucceeded, applied: true},
		{name: "another action's task fault", fault: &Fault{Action: "DeleteListener", ErrorRate: 1, FailTask: true},
			wantState: TaskSucceeded, applied: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Config{})
			if tt.fault != nil {
				c.SetFault(*tt.fault)
			}
			ts := NewTasks(c, 0)
			defer ts.Close()
			r, err := ts.Reserve("CreateListener", "lb-1")
			if err != nil {
				t.Fatal(err)
			}
			var applied, aborted atomic.Bool
			got := ts.Start(r, TaskSpec{
				ID: "req-1", Aliases: []string{"deal-1"}, Action: "CreateListener", Result: []string{"lb-1"}, Latency: tt.latency,
				Apply: func() error { applied.Store(true); return tt.applyErr },
				Abort: func(string) { aborted.Store(true) },
			})
			if tt.latency > 0 {
				if got.State != TaskRunning {
					t.Fatalf("state right after Start: %v", got.State)
				}
				if _, busy := ts.Busy("lb-1"); !busy {
					t.Fatal("the resource must stay busy while the task runs")
				}
				time.Sleep(tt.latency + 50*time.Millisecond)
			}
			for _, id := range []string{"req-1", "deal-1"} {
				task, ok := ts.Get(id)
				if !ok {
					t.Fatalf("task %s not found", id)
				}
				if task.State != tt.wantState || !strings.Contains(task.Message, tt.wantMsg) || task.Result[0] != "lb-1" || task.Finished.IsZero() {
					t.Fatalf("task %s = %+v, want state %v with %q", id, task, tt.wantState, tt.wantMsg)
				}
			}
			if applied.Load() != tt.applied || aborted.Load() != tt.aborted {
				t.Fatalf("applied %v aborted %v, want %v %v", applied.Load(), aborted.Load(), tt.applied, tt.aborted)
			}
			if _, busy := ts.Busy("lb-1"); busy {
				t.Fatal("the resource is still busy after the task ended")
			}
		})
	}
}

func TestTasksAliasRetentionAndClose(t *testing.T) {
	clk := &clock{now: time.Now()}
	c := New(Config{Clock: clk.Now})
	ts := NewTasks(c, time.Minute)
	r, _ := ts.Reserve("A", "x")
	ts.Start(r, TaskSpec{ID: "t1", Action: "A"})
	if !ts.Alias("t1", "retry-1") {
		t.Fatal("Alias of a known task")
	}
	if ts.Alias("nope", "retry-2") {
		t.Fatal("Alias of an unknown task")
	}
	if task, ok := ts.Get("retry-1"); !ok || task.ID != "t1" {
		t.Fatalf("Get by alias: %+v %v", task, ok)
	}
	clk.Advance(2 * time.Minute)
	r, _ = ts.Reserve("A", "y")
	ts.Start(r, TaskSpec{ID: "t2", Action: "A"}) // starting a task forgets old ones
	if _, ok := ts.Get("t1"); ok {
		t.Fatal("a task older than the retention is still found")
	}
	if _, ok := ts.Get("retry-1"); ok {
		t.Fatal("the alias of a forgotten task is still found")
	}

	// Close stops pending tasks: they never apply, and Close does not wait
	// for their latency.
	var applied atomic.Bool
	r, _ = ts.Reserve("A", "z")
	ts.Start(r, TaskSpec{ID: "t3", Action: "A", Latency: time.Hour, Apply: func() error { applied.Store(true); return nil }})
	done := make(chan struct{})
	go func() { ts.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waits for pending tasks")
	}
	if applied.Load() {
		t.Fatal("a pending task applied after Close")
	}
	r, _ = ts.Reserve("A", "w")
	if task := ts.Start(r, TaskSpec{ID: "t4", Action: "A"}); task.State != TaskFailed {
		t.Fatalf("a task started after Close: %+v", task)
	}
}

func TestFaultFailTask(t *testing.T) {
	tests := []struct {
		json    string
		wantErr string
	}{
		{`{"action":"CreateListener","errorRate":1,"failTask":true}`, ""},
		{`{"action":"CreateListener","errorRate":1,"failTask":true,"httpStatus":500}`, "cannot have an httpStatus"},
	}
	for _, tt := range tests {
		var f Fault
		if err := json.Unmarshal([]byte(tt.json), &f); err != nil {
			t.Fatal(err)
		}
		err := f.Validate()
		if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Fatalf("%s: Validate = %v, want %q", tt.json, err, tt.wantErr)
		}
		if tt.wantErr == "" {
			b, _ := json.Marshal(f)
			if !strings.Contains(string(b), `"failTask":true`) {
				t.Fatalf("marshaled %s", b)
			}
		}
	}
	// A task fault never fails the call itself.
	c := New(Config{})
	c.SetFault(Fault{Action: "CreateListener", ErrorRate: 1, FailTask: true})
	if f := c.Fault(t.Context(), "CreateListener"); f != nil {
		t.Fatalf("Fault() = %+v for a task fault", f)
	}
}
