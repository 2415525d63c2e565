package dataplane

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Health check defaults, Tencent's.
const (
	DefaultCheckInterval  = 5 * time.Second
	DefaultCheckTimeout   = 2 * time.Second
	DefaultCheckThreshold = 3
)

// requestProbe asks the health loop to probe the targets whose health is
// still unknown, without waiting for the next interval.
func (l *listener) requestProbe() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// checkParams returns the effective health check, or nil for none.
func (l *listener) checkParams() *HealthCheck {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.spec.HealthCheck == nil {
		return nil
	}
	hc := *l.spec.HealthCheck
	if hc.Interval <= 0 {
		hc.Interval = DefaultCheckInterval
	}
	if hc.Timeout <= 0 {
		hc.Timeout = DefaultCheckTimeout
	}
	if o := l.plane.cfg.HealthCheckInterval; o > 0 {
		hc.Interval = o
		hc.Timeout = min(hc.Timeout, o)
	}
	if hc.HealthyThreshold <= 0 {
		hc.HealthyThreshold = DefaultCheckThreshold
	}
	if hc.UnhealthyThreshold <= 0 {
		hc.UnhealthyThreshold = DefaultCheckThreshold
	}
	return &hc
}

// healthLoop probes every target once per interval, and targets of unknown
// health as soon as they appear.
func (l *listener) healthLoop() {
	defer l.wg.Done()
	for {
		hc := l.checkParams()
		var tick <-chan time.Time
		var timer *time.Timer
		if hc != nil {
			timer = time.NewTimer(hc.Interval)
			tick = timer.C
		}
		select {
		case <-l.ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case <-l.kick:
			if timer != nil {
				timer.Stop()
			}
			if hc != nil {
				l.probe(hc, true)
			}
		case <-tick:
			l.probe(hc, false)
		}
	}
}

// probe checks the targets concurrently, each bounded by the timeout, and
// applies the thresholds. A target's first result decides its unknown state
// at once; after that HealthyThreshold consecutive successes make it
// healthy and UnhealthyThreshold consecutive failures make it unhealthy.
func (l *listener) probe(hc *HealthCheck, onlyUnknown bool) {
	l.mu.Lock()
	var ts []*target
	for _, t := range l.targets {
		if !onlyUnknown || t.health == HealthUnknown {
			ts = append(ts, t)
		}
	}
	proto := l.proto
	l.mu.Unlock()
	if len(ts) == 0 {
		return
	}
	errs := make([]error, len(ts))
	var wg sync.WaitGroup
	for i, t := range ts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			addr := t.Addr
			if hc.Port > 0 {
				addr = netip.AddrPortFrom(addr.Addr(), uint16(hc.Port))
			}
			// A probe the firewall drops times out on a real network.
			if err := l.admitProbe(hc, proto, t, addr); err != nil {
				errs[i] = fmt.Errorf("probe of %s dropped by the firewall: %w", addr, err)
				return
			}
			ctx, cancel := context.WithTimeout(l.ctx, hc.Timeout)
			defer cancel()
			errs[i] = check(ctx, hc, proto, t.Addr)
		}()
	}
	wg.Wait()
	if l.ctx.Err() != nil {
		return
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, t := range ts {
		if !l.hasTargetLocked(t) || t.health == HealthOff {
			continue
		}
		before := t.health
		t.lastCheck = now
		if err := errs[i]; err != nil {
			t.okRun, t.failRun, t.lastErr = 0, t.failRun+1, err.Error()
			if t.health == HealthUnknown || (t.health == HealthHealthy && t.failRun >= hc.UnhealthyThreshold) {
				t.health = HealthUnhealthy
			}
		} else {
			t.okRun, t.failRun, t.lastErr = t.okRun+1, 0, ""
			if t.health == HealthUnknown || (t.health == HealthUnhealthy && t.okRun >= hc.HealthyThreshold) {
				t.health = HealthHealthy
			}
		}
		if t.health != before {
			l.plane.logf("dataplane: %s listener %s: target %s (%s) is now %s%s", l.lbID, l.id, t.ID, t.Addr, t.health, errSuffix(t.lastErr))
		}
	}
}

func errSuffix(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

// check runs one probe of a target.
func check(ctx context.Context, hc *HealthCheck, proto string, addr netip.AddrPort) error {
	if hc.Port > 0 {
		addr = netip.AddrPortFrom(addr.Addr(), uint16(hc.Port))
	}
	switch hc.Type {
	case CheckPing:
		return nil
	case CheckHTTP:
		return checkHTTP(ctx, hc, addr)
	case CheckCustom:
		if proto == UDP {
			return checkUDP(ctx, hc, addr)
		}
		return checkTCPExchange(ctx, hc, addr)
	default:
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr.String())
		if err != nil {
			return fmt.Errorf("TCP check of %s: %w", addr, err)
		}
		return c.Close()
	}
}

func checkHTTP(ctx context.Context, hc *HealthCheck, addr netip.AddrPort) error {
	method := strings.ToUpper(hc.HTTPMethod)
	if method == "" {
		method = http.MethodHead
	}
	path := hc.HTTPPath
	if path == "" {
		path = "/"
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr.String()+path, nil)
	if err != nil {
		return fmt.Errorf("HTTP check of %s: %w", addr, err)
	}
	if hc.HTTPHost != "" {
		req.Host = hc.HTTPHost
	}
	client := &http.Client{
		Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a redirect is an answer, judged by its code
		},
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("HTTP check of %s%s: %w", addr, path, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	mask := hc.HTTPCodes
	if mask == 0 {
		mask = 2
	}
	class := resp.StatusCode / 100
	if class < 1 || class > 5 || mask&(1<<(class-1)) == 0 {
		return fmt.Errorf("HTTP check of %s%s: status %d is not an accepted code (mask %d)", addr, path, resp.StatusCode, mask)
	}
	return nil
}

// checkTCPExchange connects, sends Send and reads until Expect appears.
func checkTCPExchange(ctx context.Context, hc *HealthCheck, addr netip.AddrPort) error {
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr.String())
	if err != nil {
		return fmt.Errorf("custom TCP check of %s: %w", addr, err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	// A listener that stops cancels ctx; end the exchange at once.
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	defer stop()
	if len(hc.Send) > 0 {
		if _, err := c.Write(hc.Send); err != nil {
			return fmt.Errorf("custom TCP check of %s: sending: %w", addr, err)
		}
	}
	if len(hc.Expect) == 0 {
		return nil
	}
	var got []byte
	buf := make([]byte, 4096)
	for len(got) < 64<<10 {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if bytes.Contains(got, hc.Expect) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("custom TCP check of %s: answer %s does not contain %s: %v", addr, strconv.Quote(string(got)), strconv.Quote(string(hc.Expect)), err)
		}
	}
	return fmt.Errorf("custom TCP check of %s: no %s in the first 64 KiB", addr, strconv.Quote(string(hc.Expect)))
}

// checkUDP sends Send in one datagram and expects an answer that contains
// Expect.
func checkUDP(ctx context.Context, hc *HealthCheck, addr netip.AddrPort) error {
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(addr))
	if err != nil {
		return fmt.Errorf("custom UDP check of %s: %w", addr, err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	defer stop()
	if _, err := c.Write(hc.Send); err != nil {
		return fmt.Errorf("custom UDP check of %s: sending: %w", addr, err)
	}
	buf := make([]byte, 64<<10)
	n, err := c.Read(buf)
	if err != nil {
		return fmt.Errorf("custom UDP check of %s: no answer: %w", addr, err)
	}
	if !bytes.Contains(buf[:n], hc.Expect) {
		return fmt.Errorf("custom UDP check of %s: answer %s does not contain %s", addr, strconv.Quote(string(buf[:n])), strconv.Quote(string(hc.Expect)))
	}
	return nil
}
