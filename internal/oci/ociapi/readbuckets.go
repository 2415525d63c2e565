package ociapi

import (
	"sync"

	"golang.org/x/time/rate"
)

// operationBuckets are the read buckets when reads are limited per
// operation: one token bucket per operation (method and path template, as
// operationOf names it), created on first use. The node listings walk the
// pages of ListInstances, ListVnicAttachments and ListPrivateIps side by
// side; one shared bucket would make them take turns, so that 5,000 nodes'
// 150 pages could not take less than 7.5 s at 20/s. The number of buckets
// is bounded by the operations the provider calls (a few dozen).
type operationBuckets struct {
	qps   rate.Limit
	burst int

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

func newOperationBuckets(qps float64, burst int) *operationBuckets {
	return &operationBuckets{qps: rate.Limit(qps), burst: burst, buckets: map[string]*rate.Limiter{}}
}

// get returns op's bucket, creating it full.
func (o *operationBuckets) get(op string) *rate.Limiter {
	o.mu.Lock()
	defer o.mu.Unlock()
	b := o.buckets[op]
	if b == nil {
		b = rate.NewLimiter(o.qps, o.burst)
		o.buckets[op] = b
	}
	return b
}
