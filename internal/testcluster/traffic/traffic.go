// Package traffic sends a steady client load through load balancer VIPs and
// counts what a user would feel: failed requests and broken connections.
// The e2e suite runs it while nodes are replaced and while the CCM fails
// over (issue 15's traffic-under-churn measurement).
//
// Two kinds of clients run at once:
//   - short requests: one HTTP GET per new connection, at a fixed total
//     rate spread over the addresses, like many independent clients;
//   - long-lived connections: a few keep-alive connections per address,
//     each sending a GET every period, like a client pool.
//
// A long-lived connection that breaks is counted in ConnectionsReset and
// dialed again, and its request is retried once on the new connection, as
// HTTP clients do for an idempotent request on a keep-alive connection the
// server closed; only a retry that fails too counts as a failed request.
package traffic

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Load. Zero fields take the defaults.
type Options struct {
	// Addrs are the host:port addresses to send to (VIP:port).
	Addrs []string
	// Rate is the short requests per second across all addresses
	// (default 100).
	Rate int
	// LongLived is the number of keep-alive connections per address
	// (default 2; negative: none).
	LongLived int
	// Period is the time between requests on a long-lived connection
	// (default 200 ms).
	Period time.Duration
	// Timeout bounds each dial and request (default 2 s).
	Timeout time.Duration
}

// Counts is what a Load saw.
type Counts struct {
	Requests         int64  `json:"requests"`          // short and long-lived requests sent
	RequestsFailed   int64  `json:"requests_failed"`   // requests that got no 2xx answer
	ConnectionsReset int64  `json:"connections_reset"` // long-lived connections that broke
	LastError        string `json:"last_error,omitempty"`
}

func (c Counts) String() string {
	s := fmt.Sprintf("%d requests, %d failed, %d long-lived connections reset", c.Requests, c.RequestsFailed, c.ConnectionsReset)
	if c.LastError != "" {
		s += " (last error: " + c.LastError + ")"
	}
	return s
}

// Load is a running client load.
type Load struct {
	opts Options
	stop chan struct{}
	wg   sync.WaitGroup

	requests, failed, resets atomic.Int64
	lastErr                  atomic.Value // string
}

// Start starts the load; Stop ends it.
func Start(opts Options) *Load {
	if opts.Rate == 0 {
		opts.Rate = 100
	}
	if opts.LongLived == 0 {
		opts.LongLived = 2
	}
	if opts.Period == 0 {
		opts.Period = 200 * time.Millisecond
	}
	if opts.Timeout == 0 {
		opts.Timeout = 2 * time.Second
	}
	l := &Load{opts: opts, stop: make(chan struct{})}
	l.wg.Add(1)
	go l.shortRequests()
	for _, addr := range opts.Addrs {
		for range max(opts.LongLived, 0) {
			l.wg.Add(1)
			go l.longLived(addr)
		}
	}
	return l
}

// Counts reports what the load has seen so far.
func (l *Load) Counts() Counts {
	c := Counts{Requests: l.requests.Load(), RequestsFailed: l.failed.Load(), ConnectionsReset: l.resets.Load()}
	if s, ok := l.lastErr.Load().(string); ok {
		c.LastError = s
	}
	return c
}

// Stop ends the load, waits for the requests under way and returns the
// counts.
func (l *Load) Stop() Counts {
	close(l.stop)
	l.wg.Wait()
	return l.Counts()
}

func (l *Load) fail(err error) {
	l.failed.Add(1)
	l.lastErr.Store(err.Error())
}

// shortRequests sends Rate requests a second, round-robin over the
// addresses, each on its own connection.
func (l *Load) shortRequests() {
	defer l.wg.Done()
	if len(l.opts.Addrs) == 0 {
		return
	}
	client := &http.Client{Timeout: l.opts.Timeout, Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}
	tick := time.NewTicker(time.Second / time.Duration(l.opts.Rate))
	defer tick.Stop()
	var inflight sync.WaitGroup
	defer inflight.Wait()
	for i := 0; ; i++ {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		url := "http://" + l.opts.Addrs[i%len(l.opts.Addrs)] + "/"
		inflight.Add(1)
		go func() {
			defer inflight.Done()
			l.requests.Add(1)
			if err := get(client, url); err != nil {
				l.fail(err)
			}
		}()
	}
}

func get(c *http.Client, url string) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// longLived keeps one keep-alive connection to addr busy until Stop.
func (l *Load) longLived(addr string) {
	defer l.wg.Done()
	var c *Conn
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	tick := time.NewTicker(l.opts.Period)
	defer tick.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		l.requests.Add(1)
		var err error
		if c == nil {
			if c, err = Dial(addr, l.opts.Timeout); err != nil {
				c = nil
				l.fail(err)
				continue
			}
		}
		a, err := c.Get(l.opts.Timeout)
		if err != nil {
			// The connection broke: dial again and retry once.
			l.resets.Add(1)
			c.Close()
			if c, err = Dial(addr, l.opts.Timeout); err != nil {
				c = nil
				l.fail(err)
				continue
			}
			if a, err = c.Get(l.opts.Timeout); err != nil {
				c.Close()
				c = nil
				l.fail(err)
				continue
			}
		}
		if err := a.Err(); err != nil {
			l.fail(err)
		}
		if a.Close { // the server said it closes the connection
			c.Close()
			c = nil
		}
	}
}

// Conn is one keep-alive HTTP/1.1 connection, as a client pool holds.
type Conn struct {
	nc   net.Conn
	r    *bufio.Reader
	addr string
}

// Answer is the answer to one request on a Conn.
type Answer struct {
	Status int
	Body   string
	// Close: the server closes the connection after this answer.
	Close bool
	url   string
}

// Err is nil for a 2xx answer, else says what came back.
func (a Answer) Err() error {
	if a.Status/100 == 2 {
		return nil
	}
	return fmt.Errorf("GET %s: %d %s", a.url, a.Status, http.StatusText(a.Status))
}

// Dial opens a Conn to addr (host:port).
func Dial(addr string, timeout time.Duration) (*Conn, error) {
	nc, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	return &Conn{nc: nc, r: bufio.NewReader(nc), addr: addr}, nil
}

// Close closes the connection.
func (c *Conn) Close() { _ = c.nc.Close() }

// Get sends GET / on the connection. An error means the connection broke
// (no answer); an answer that is not 2xx is an Answer, with Err set.
func (c *Conn) Get(timeout time.Duration) (Answer, error) {
	_ = c.nc.SetDeadline(time.Now().Add(timeout))
	if _, err := fmt.Fprintf(c.nc, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", c.addr); err != nil {
		return Answer{}, err
	}
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		return Answer{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Answer{}, err
	}
	return Answer{Status: resp.StatusCode, Body: string(body), Close: resp.Close, url: "http://" + c.addr + "/"}, nil
}
