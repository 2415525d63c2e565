package traffic

import (
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// server is an HTTP server on a loopback port whose answers the test turns
// bad, and whose connections it can cut.
type server struct {
	srv  *http.Server
	addr string
	bad  atomic.Bool
}

func startServer(t *testing.T) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{addr: ln.Addr().String()}
	s.srv = &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if s.bad.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})}
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(func() { _ = s.srv.Close() })
	return s
}

func TestCounts(t *testing.T) {
	tests := []struct {
		name string
		// during runs while the load runs, after 300 ms.
		during    func(s *server)
		wantFails bool
		wantReset bool
	}{
		{name: "a healthy server: nothing fails", during: func(*server) {}},
		{name: "500s fail requests", during: func(s *server) { s.bad.Store(true) }, wantFails: true},
		// Idle keep-alive connections closed by the server: the clients
		// redial and retry, so no request fails.
		{name: "keep-alive connections closed: reset, retried", during: func(s *server) { s.srv.SetKeepAlivesEnabled(false) }, wantReset: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t)
			l := Start(Options{Addrs: []string{s.addr}, Rate: 200, LongLived: 2, Period: 20 * time.Millisecond})
			// Phases by requests made, not by wall time: a starved run (the
			// unit tests run at nice 19 beside the e2e suite) makes fewer
			// requests in a given time, and the counts must still hold.
			waitRequests(t, l, 60)
			tc.during(s)
			waitRequests(t, l, l.Counts().Requests+60)
			c := l.Stop()
			if (c.RequestsFailed > 0) != tc.wantFails {
				t.Errorf("counts %s: failures %v, want %v", c, c.RequestsFailed > 0, tc.wantFails)
			}
			if (c.ConnectionsReset > 0) != tc.wantReset {
				t.Errorf("counts %s: resets %v, want %v", c, c.ConnectionsReset > 0, tc.wantReset)
			}
		})
	}
}

// waitRequests waits until the load has made n requests (at 200/s plus 2
// connections at 50/s, 60 take 200 ms on a quiet machine).
func waitRequests(t *testing.T, l *Load, n int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for l.Counts().Requests < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests after 30 s, want %d: the load does not run", l.Counts().Requests, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
