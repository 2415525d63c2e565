package cloudbase

import (
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Reads that lag writes (eventual consistency). A cloud's List and Describe
// answers may not show a resource created moments ago: AWS documents it for
// EC2 ("if you run a command to modify or describe the resource that you
// just created, its ID might not have propagated throughout the system"),
// OCI's API errors page says a 404 NotAuthorizedOrNotFound may be retried
// "with backoff", and oci-go-sdk retries it within an eventual-consistency
// window (common/eventual_consistency.go). Neither Tencent nor OCI bounds
// the lag for instances or load balancers, so the window is a setting
// (read_lag_window, readLagWindow) with a default that leaves room for
// minutes-long propagation at the cost of acting that much later on
// something young that is really gone.

// DefaultReadLagWindow and MaxReadLagWindow bound the setting.
const (
	DefaultReadLagWindow = time.Minute
	MaxReadLagWindow     = 10 * time.Minute
)

// YoungNodeError is the answer to "does this node's instance exist?" when
// a by-id read did not find the instance but the Node registered within
// the read lag window: the kubelet that registered it ran on that
// instance, so the instance existed then, and a read may simply not show
// it yet. Not "gone": the lifecycle controller asks again.
type YoungNodeError struct {
	Node, Instance, Read string
	Age, Window          time.Duration
}

func (e *YoungNodeError) Error() string {
	return fmt.Sprintf("node %q: %s did not find instance %s, but the node registered only %s ago, within the read lag window %s "+
		"(the cloud's reads may lag its writes; its kubelet ran on that instance); deciding again later",
		e.Node, e.Read, e.Instance, e.Age.Round(time.Second), e.Window)
}

// CheckAbsence is what InstanceExists says when a by-id read (read, e.g.
// "DescribeInstances") did not find the node's instance: nil ("gone") for
// a Node older than window, else a *YoungNodeError.
func CheckAbsence(node *v1.Node, instance, read string, window time.Duration, now time.Time) error {
	age := now.Sub(node.CreationTimestamp.Time)
	if window <= 0 || node.CreationTimestamp.IsZero() || age >= window {
		return nil
	}
	return &YoungNodeError{Node: node.Name, Instance: instance, Read: read, Age: age, Window: window}
}

// AnsweredIDs remembers when a create first answered each resource id, in
// this process. A resource a create answered (a new one, or a replay of
// its idempotency token: Tencent's ClientToken, OCI's opc-retry-token) may
// be missing from the reads for a while; missing then does not prove that
// it was deleted and its token spent, and creating with the next token
// would make a second resource. So the absence counts only once the id
// has been known longer than the read lag window. After a restart the
// window starts again: a deleted resource's token is then moved past one
// window later, never too early. The zero value is ready; it is safe for
// concurrent use.
type AnsweredIDs struct {
	mu sync.Mutex
	at map[string]time.Time
}

// Since returns how long ago a create first answered id (0 the first
// time). Ids known for much longer than window are forgotten.
func (a *AnsweredIDs) Since(id string, now time.Time, window time.Duration) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.at == nil {
		a.at = map[string]time.Time{}
	}
	first, ok := a.at[id]
	if !ok {
		for k, t := range a.at {
			if now.Sub(t) > window+time.Hour {
				delete(a.at, k)
			}
		}
		a.at[id] = now
		return 0
	}
	return now.Sub(first)
}

// SeenIDs remembers the instances a read has shown, in this process. Reads
// that lag writes hide what is new, never what was shown (cloudsim's
// model, core/lag.go): an instance a read showed and a later read does not
// find was deleted, whatever its Node's age, so CheckAbsence is only for
// an instance never seen. After a restart nothing is seen yet, and the
// window applies. The zero value is ready; it is safe for concurrent use.
type SeenIDs struct {
	mu sync.Mutex
	at map[string]time.Time
}

// seenMemory bounds how long an id is remembered.
const seenMemory = 24 * time.Hour

// Mark records that a read showed id.
func (s *SeenIDs) Mark(id string, now time.Time) {
	if id == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at == nil {
		s.at = map[string]time.Time{}
	}
	if _, ok := s.at[id]; !ok {
		for k, t := range s.at {
			if now.Sub(t) > seenMemory {
				delete(s.at, k)
			}
		}
	}
	s.at[id] = now
}

// Seen reports whether a read showed id.
func (s *SeenIDs) Seen(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.at[id]
	return ok
}
