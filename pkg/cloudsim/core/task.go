package core

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// TaskState is the state of an asynchronous task. The values are those of
// Tencent's DescribeTaskStatus (0 succeeded, 1 failed, 2 running), so that a
// dialect can answer them as they are.
type TaskState int

// Task states.
const (
	TaskSucceeded TaskState = 0
	TaskFailed    TaskState = 1
	TaskRunning   TaskState = 2
)

func (s TaskState) String() string {
	switch s {
	case TaskSucceeded:
		return "succeeded"
	case TaskFailed:
		return "failed"
	case TaskRunning:
		return "running"
	}
	return fmt.Sprintf("TaskState(%d)", int(s))
}

// DefaultTaskRetention is how long a finished task can still be looked up.
const DefaultTaskRetention = time.Hour

// Task is one asynchronous operation, as Tasks.Get reports it.
type Task struct {
	ID        string    // the dialect's task id (Tencent: the RequestId of the call)
	Aliases   []string  // other ids that find it (Tencent: the DealName of a create)
	Action    string    // the action that started it
	Resources []string  // the resources it holds until it ends
	Result    []string  // ids the task reports (Tencent: LoadBalancerIds)
	State     TaskState // running until it ends
	Message   string    // why it failed
	Started   time.Time
	Finished  time.Time // zero while running
}

// TaskSpec describes a task to start.
type TaskSpec struct {
	ID      string
	Aliases []string
	Action  string // also the key of task faults (Fault.FailTask)
	Result  []string
	// Latency is how long the task runs. 0 or negative: it ends before
	// Start returns.
	Latency time.Duration
	// Apply makes the task's change visible when the task ends. An error
	// fails the task with the error's text as its message. It runs without
	// any lock of Tasks held, and may take the dialect's own locks.
	Apply func() error
	// Abort, if set, runs instead of Apply when an injected fault fails the
	// task (for example to remove a resource created at the start).
	Abort func(message string)
}

// ErrBusy is returned (wrapped in a *BusyError) when a resource already has
// a task running.
var ErrBusy = errors.New("resource busy")

// BusyError says which resource is busy and with what.
type BusyError struct {
	Resource string
	Holder   string // the action of the task that holds it
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("%s is busy with a running %s task", e.Resource, e.Holder)
}

// Is makes errors.Is(err, ErrBusy) true.
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// Tasks runs asynchronous tasks with one task at a time per resource. A
// dialect reserves the resources a call will change, validates the call
// against its state, and then either releases the reservation (invalid call)
// or starts the task on it. Finished tasks stay visible for the retention
// time. Tasks are safe for concurrent use.
type Tasks struct {
	core      *Core
	retention time.Duration

	mu      sync.Mutex
	busy    map[string]string // resource -> holder (action)
	byID    map[string]*Task  // id and aliases -> task
	order   []*Task           // in start order, for retention
	pending map[*Task]*time.Timer
	closed  bool
	wg      sync.WaitGroup
}

// NewTasks returns a task runner whose task faults come from c. retention
// <= 0 means DefaultTaskRetention.
func NewTasks(c *Core, retention time.Duration) *Tasks {
	if retention <= 0 {
		retention = DefaultTaskRetention
	}
	return &Tasks{
		core:      c,
		retention: retention,
		busy:      map[string]string{},
		byID:      map[string]*Task{},
		pending:   map[*Task]*time.Timer{},
	}
}

// Reservation holds resources for one task that is about to start.
type Reservation struct {
	ts        *Tasks
	resources []string
	used      bool
}

// Reserve marks the resources busy on behalf of holder (an action name). If
// any of them is busy it reserves none and returns a *BusyError.
func (ts *Tasks) Reserve(holder string, resources ...string) (*Reservation, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, r := range resources {
		if h, busy := ts.busy[r]; busy {
			return nil, &BusyError{Resource: r, Holder: h}
		}
	}
	for _, r := range resources {
		ts.busy[r] = holder
	}
	return &Reservation{ts: ts, resources: slices.Clone(resources)}, nil
}

// Release gives the resources back without starting a task. It is a no-op
// once the reservation was used or released.
func (r *Reservation) Release() {
	if r == nil {
		return
	}
	r.ts.mu.Lock()
	defer r.ts.mu.Unlock()
	r.releaseLocked()
}

func (r *Reservation) releaseLocked() {
	if r.used {
		return
	}
	r.used = true
	for _, res := range r.resources {
		delete(r.ts.busy, res)
	}
}

// Busy reports whether a resource has a task running, and the action of
// that task.
func (ts *Tasks) Busy(resource string) (holder string, busy bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	holder, busy = ts.busy[resource]
	return holder, busy
}

// Start starts a task holding r's resources until it ends. Whether an
// injected fault fails it is decided now. With no latency the task has
// ended when Start returns. It returns the task as it is after Start.
func (ts *Tasks) Start(r *Reservation, spec TaskSpec) Task {
	fault, fail := ts.core.TaskFault(spec.Action)
	now := ts.core.Now()
	t := &Task{
		ID:        spec.ID,
		Aliases:   slices.Clone(spec.Aliases),
		Action:    spec.Action,
		Resources: slices.Clone(r.resources),
		Result:    slices.Clone(spec.Result),
		State:     TaskRunning,
		Started:   now,
	}
	ts.mu.Lock()
	ts.gcLocked(now)
	ts.byID[t.ID] = t
	for _, a := range t.Aliases {
		ts.byID[a] = t
	}
	ts.order = append(ts.order, t)
	closed := ts.closed
	if !closed && spec.Latency > 0 {
		ts.wg.Add(1)
		ts.pending[t] = time.AfterFunc(spec.Latency, func() {
			defer ts.wg.Done()
			ts.mu.Lock()
			_, live := ts.pending[t]
			delete(ts.pending, t)
			ts.mu.Unlock()
			if live {
				ts.finish(r, t, spec, fault, fail)
			}
		})
		out := t.clone()
		ts.mu.Unlock()
		return out
	}
	ts.mu.Unlock()
	if closed {
		ts.end(r, t, TaskFailed, "cloudsim is shutting down")
	} else {
		ts.finish(r, t, spec, fault, fail)
	}
	return ts.snapshot(t)
}

// finish runs Apply (or Abort for an injected failure) and ends the task.
func (ts *Tasks) finish(r *Reservation, t *Task, spec TaskSpec, fault Fault, fail bool) {
	if fail {
		msg := fmt.Sprintf("cloudsim: injected task failure (%s) for action %s", fault.Code(), spec.Action)
		if spec.Abort != nil {
			spec.Abort(msg)
		}
		ts.end(r, t, TaskFailed, msg)
		return
	}
	if spec.Apply != nil {
		if err := spec.Apply(); err != nil {
			ts.end(r, t, TaskFailed, err.Error())
			return
		}
	}
	ts.end(r, t, TaskSucceeded, "")
}

// end records the outcome and frees the resources in one step, so that a
// client that sees the task ended can start the next one at once.
func (ts *Tasks) end(r *Reservation, t *Task, state TaskState, msg string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t.State, t.Message, t.Finished = state, msg, ts.core.Now()
	r.releaseLocked()
}

func (ts *Tasks) snapshot(t *Task) Task {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return t.clone()
}

func (t *Task) clone() Task {
	out := *t
	out.Aliases = slices.Clone(t.Aliases)
	out.Resources = slices.Clone(t.Resources)
	out.Result = slices.Clone(t.Result)
	return out
}

// Get finds a task by its id or an alias.
func (ts *Tasks) Get(id string) (Task, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.byID[id]
	if t == nil {
		return Task{}, false
	}
	return t.clone(), true
}

// Alias makes alias find the task id also (for example the RequestId of a
// call that was answered with an earlier task's result). It reports false
// if there is no such task.
func (ts *Tasks) Alias(id, alias string) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.byID[id]
	if t == nil {
		return false
	}
	t.Aliases = append(t.Aliases, alias)
	ts.byID[alias] = t
	return true
}

// gcLocked forgets tasks that ended more than the retention time ago. Tasks
// are scanned in start order and the scan stops at the first one that must
// stay, which bounds the work per call.
func (ts *Tasks) gcLocked(now time.Time) {
	n := 0
	for _, t := range ts.order {
		if t.State == TaskRunning || now.Sub(t.Finished) < ts.retention {
			break
		}
		if ts.byID[t.ID] == t {
			delete(ts.byID, t.ID)
		}
		for _, a := range t.Aliases {
			if ts.byID[a] == t {
				delete(ts.byID, a)
			}
		}
		n++
	}
	if n > 0 {
		ts.order = slices.Delete(ts.order, 0, n)
	}
}

// Close stops the tasks that are still running (they stay running forever
// and keep their resources) and waits for any that is ending right now.
// Tasks started after Close fail at once.
func (ts *Tasks) Close() {
	ts.mu.Lock()
	ts.closed = true
	for t, timer := range ts.pending {
		if timer.Stop() {
			ts.wg.Done()
		}
		delete(ts.pending, t)
	}
	ts.mu.Unlock()
	ts.wg.Wait()
}

// TaskFault reports whether the task of an action must fail, from the fault
// configured for the action (or else for AllActions) when it has FailTask
// set: with the fault's error rate, it returns the fault and true.
func (c *Core) TaskFault(action string) (Fault, bool) {
	c.faultMu.Lock()
	f, ok := c.lookupFaultLocked(action)
	c.faultMu.Unlock()
	if !ok || !f.FailTask {
		return Fault{}, false
	}
	if f.ErrorRate > 0 && rand.Float64() < f.ErrorRate && c.consumeFault(f) {
		return f, true
	}
	return Fault{}, false
}
