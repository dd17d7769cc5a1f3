//go:build integration

package integration

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/actd/actd/internal/pooltest"
)

// Limits of every client loop: a loop never sends more than maxRequests per
// worker and never runs longer than maxLoadTime.
const (
	maxRequests = 20000
	maxLoadTime = 2 * time.Minute
)

// answerPattern is the built-in handler's answer.
var answerPattern = regexp.MustCompile(`slot=(\d+) pid=(\d+)`)

// Answer is what one request got: the serving child's PID in the box's PID
// namespace and when the answer arrived.
type Answer struct {
	PID int
	At  time.Time
}

// get sends one HTTP request on a new connection to addr and waits up to
// timeout for the built-in handler's answer. It returns the answer, or an
// error: ECONNREFUSED (errors.Is) when nothing listens, another error when the
// connection fails or the answer is not the built-in handler's.
func get(addr string, timeout time.Duration) (Answer, error) {
	return getVia(hostDial, addr, timeout)
}

// dialer opens a TCP connection to addr within timeout.
type dialer func(addr string, timeout time.Duration) (net.Conn, error)

// hostDial dials from the host's network namespace.
func hostDial(addr string, timeout time.Duration) (net.Conn, error) {
	return net.DialTimeout("tcp", addr, timeout)
}

// getVia is get over a connection that dial opens.
func getVia(dial dialer, addr string, timeout time.Duration) (Answer, error) {
	conn, err := dial(addr, timeout)
	if err != nil {
		return Answer{}, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: actd\r\nConnection: close\r\n\r\n"); err != nil {
		return Answer{}, fmt.Errorf("send request: %w", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return Answer{}, fmt.Errorf("read answer: %w", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return Answer{}, fmt.Errorf("read body: %w", err)
	}
	m := answerPattern.FindSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		return Answer{}, fmt.Errorf("got %s %q, want 200 and slot=K pid=P", resp.Status, body)
	}
	pid, _ := strconv.Atoi(string(m[2]))
	return Answer{PID: pid, At: time.Now()}, nil
}

// LoadResult counts what a client loop saw.
type LoadResult struct {
	Answers []Answer
	Refused int      // ECONNREFUSED
	Failed  int      // every other error
	Errors  []string // the first few errors, for the report
}

// String summarises r for a log line.
func (r LoadResult) String() string {
	return fmt.Sprintf("%d answered, %d refused, %d failed %q", len(r.Answers), r.Refused, r.Failed, r.Errors)
}

// PIDs returns the child PIDs that answered in [from, to).
func (r LoadResult) PIDs(from, to time.Time) map[int]bool {
	pids := make(map[int]bool)
	for _, a := range r.Answers {
		if !a.At.Before(from) && a.At.Before(to) {
			pids[a.PID] = true
		}
	}
	return pids
}

// Load is a running client loop: workers goroutines each sending one request
// at a time, pause apart, to one address.
type Load struct {
	stop chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	res  LoadResult
}

// StartLoad starts workers client loops against addr, each request allowed
// timeout to be answered. The loop ends at Stop, after maxRequests per worker
// or after maxLoadTime, whichever comes first; Stop must be called.
func StartLoad(addr string, workers int, pause, timeout time.Duration) *Load {
	l := &Load{stop: make(chan struct{})}
	deadline := time.Now().Add(maxLoadTime)
	for range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for n := 0; n < maxRequests && time.Now().Before(deadline); n++ {
				select {
				case <-l.stop:
					return
				default:
				}
				a, err := get(addr, timeout)
				l.record(a, err)
				time.Sleep(pause)
			}
		}()
	}
	return l
}

// record counts one request's outcome.
func (l *Load) record(a Answer, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err == nil:
		l.res.Answers = append(l.res.Answers, a)
	case errors.Is(err, syscall.ECONNREFUSED):
		l.res.Refused++
	default:
		l.res.Failed++
	}
	if err != nil && len(l.res.Errors) < 5 {
		l.res.Errors = append(l.res.Errors, err.Error())
	}
}

// Answered returns how many answers arrived so far.
func (l *Load) Answered() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.res.Answers)
}

// Stop ends the loop, waits for the requests in flight and returns the result.
func (l *Load) Stop() LoadResult {
	close(l.stop)
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.res
}

// waitAnswered waits until l has count more answers than it had, up to
// timeout; it fails t otherwise.
func waitAnswered(t *testing.T, l *Load, count int, timeout time.Duration) {
	t.Helper()
	want := l.Answered() + count
	for deadline := time.Now().Add(timeout); l.Answered() < want; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("client loop: got %d answers after %v, want %d", l.Answered(), timeout, want)
		}
	}
}

// freePort returns a TCP port on 127.0.0.1 kept free for t until a box's
// socket unit binds it (pooltest.FreePort): a port from bind to port 0,
// closed, could meanwhile be another test process's listener.
func freePort(t *testing.T) int {
	t.Helper()
	return pooltest.FreePort(t)
}
