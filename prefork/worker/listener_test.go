package worker_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/actd/actd/prefork/worker"
)

// roleEnv makes the test binary an actd worker: a net/http server on
// worker.Listener (TestMain).
const roleEnv = "WORKER_TEST_HTTP"

// idleTimeout is the worker's http.Server IdleTimeout.
const idleTimeout = time.Second

// Bounds on waiting; none is a speed assertion, each only stops a broken
// run from hanging.
const (
	bound     = 20 * time.Second
	pollEvery = 50 * time.Millisecond
)

func TestMain(m *testing.M) {
	if os.Getenv(roleEnv) != "" {
		os.Exit(httpWorker())
	}
	os.Exit(m.Run())
}

// httpWorker serves net/http, unchanged but for the listener, until the
// master drains it: / names the process, /echo returns the request body,
// /sleep?d=D answers after D, /stream writes two flushed parts.
func httpWorker() int {
	l, err := worker.Listener()
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "pid=%d path=%s\n", os.Getpid(), r.URL.Path)
	})
	mux.HandleFunc("/tls", func(w http.ResponseWriter, r *http.Request) { // tls_test.go
		if r.TLS == nil {
			fmt.Fprintf(w, "pid=%d plain\n", os.Getpid())
			return
		}
		fmt.Fprintf(w, "pid=%d tls=%x alpn=%s\n", os.Getpid(), r.TLS.Version, r.TLS.NegotiatedProtocol)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) { io.Copy(w, r.Body) })
	mux.HandleFunc("/sleep", func(w http.ResponseWriter, r *http.Request) {
		d, _ := time.ParseDuration(r.URL.Query().Get("d"))
		time.Sleep(d)
		fmt.Fprintf(w, "pid=%d slept=%v\n", os.Getpid(), d)
	})
	mux.HandleFunc("/panic", func(http.ResponseWriter, *http.Request) { panic("boom") })
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "part one\n")
		w.(http.Flusher).Flush()
		io.WriteString(w, "part two\n")
	})
	srv := &http.Server{Handler: worker.Requests(mux), IdleTimeout: idleTimeout}
	if err := srv.Serve(l); !errors.Is(err, net.ErrClosed) {
		fmt.Fprintln(os.Stderr, "worker: serve:", err)
		return 1
	}
	return 0
}

// TestListenerUnderActd runs net/http on worker.Listener under a real actd
// in dispatch and exclusive mode: plain, keep-alive, chunked, 100-continue
// and close-delimited exchanges; a request in hand shown by `actd status`;
// an idle keep-alive connection holding its child until the server's
// IdleTimeout; a drain that lets the request in hand finish. actd must log
// no complaint (no garbage, no child killed or dying).
func TestListenerUnderActd(t *testing.T) {
	actd := buildActd(t)
	for _, mode := range []string{"dispatch", "exclusive"} {
		t.Run(mode, func(t *testing.T) {
			p := startActd(t, actd, mode)
			for _, tc := range []struct {
				name string
				run  func(*testing.T, *actdPool)
			}{
				{"get", checkGet},
				{"keep-alive", checkKeepAlive},
				{"chunked body", checkChunked},
				{"expect 100-continue", checkContinue},
				{"HTTP/1.0 close-delimited", checkCloseDelimited},
				{"request in status", checkRequestShown},
				{"idle keep-alive holds the child", checkIdleKeepAlive},
				{"concurrent", checkConcurrent},
			} {
				t.Run(tc.name, func(t *testing.T) { tc.run(t, p) })
			}
			checkDrain(t, p)
		})
	}
}

func checkGet(t *testing.T, p *actdPool) {
	body := mustGet(t, noKeepAlive(), "http://"+p.addr+"/hello")
	if !strings.Contains(body, "path=/hello") {
		t.Errorf("GET /hello: got %q, want path=/hello", body)
	}
}

// checkKeepAlive: five requests over one connection, one child.
func checkKeepAlive(t *testing.T, p *actdPool) {
	client := &http.Client{Timeout: bound, Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	var bodies []string
	reused := 0
	for i := range 5 {
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
			if info.Reused {
				reused++
			}
		}}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace),
			"GET", fmt.Sprintf("http://%s/ka/%d", p.addr, i), nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		bodies = append(bodies, pidOf(string(b)))
	}
	if reused != 4 {
		t.Errorf("5 requests on a keep-alive client: got %d on a reused connection, want 4", reused)
	}
	for _, pid := range bodies[1:] {
		if pid != bodies[0] {
			t.Errorf("keep-alive answers: got pids %v, want one", bodies)
			break
		}
	}
}

// checkChunked: a body of unknown length goes chunked and comes back whole.
func checkChunked(t *testing.T, p *actdPool) {
	want := strings.Repeat("0123456789", 10000)
	req, _ := http.NewRequest("POST", "http://"+p.addr+"/echo", io.MultiReader(strings.NewReader(want)))
	req.ContentLength = -1
	got := mustDo(t, noKeepAlive(), req)
	if got != want {
		t.Errorf("chunked echo: got %d bytes, want %d", len(got), len(want))
	}
}

// checkContinue: the client waits for 100 Continue before it sends.
func checkContinue(t *testing.T, p *actdPool) {
	req, _ := http.NewRequest("POST", "http://"+p.addr+"/echo", strings.NewReader("after continue"))
	req.Header.Set("Expect", "100-continue")
	client := &http.Client{Timeout: bound, Transport: &http.Transport{DisableKeepAlives: true, ExpectContinueTimeout: bound}}
	if got := mustDo(t, client, req); got != "after continue" {
		t.Errorf("100-continue echo: got %q, want %q", got, "after continue")
	}
}

// checkCloseDelimited: an HTTP/1.0 answer of unknown length ends with the
// server's close, which it makes only once it has stopped reading.
func checkCloseDelimited(t *testing.T, p *actdPool) {
	c := dial(t, p)
	defer c.Close()
	io.WriteString(c, "GET /stream HTTP/1.0\r\nHost: x\r\n\r\n")
	b, err := io.ReadAll(c)
	if err != nil || !bytes.HasSuffix(b, []byte("part one\npart two\n")) || bytes.Contains(b, []byte("Content-Length")) {
		t.Errorf("HTTP/1.0 stream: got %q, %v; want both parts, no Content-Length, then the close", b, err)
	}
}

// checkRequestShown: a request in hand is shown beside its slot, and no
// longer once answered.
func checkRequestShown(t *testing.T, p *actdPool) {
	done := make(chan string)
	go func() {
		resp, err := noKeepAlive().Get("http://" + p.addr + "/sleep?d=1500ms&secret=1")
		if err != nil {
			done <- err.Error()
			return
		}
		resp.Body.Close()
		done <- resp.Status
	}()
	doc, err := p.waitStatus(func(d statusDoc) bool { return d.requests()["GET /sleep"] == "B" })
	if err != nil || doc.requests()["GET /sleep"] != "B" {
		t.Errorf("status while GET /sleep runs: got slots %+v, %v; want one busy with request \"GET /sleep\"", doc.Pool.Slots, err)
	}
	if status := <-done; status != "200 OK" {
		t.Fatalf("GET /sleep: got %s, want 200 OK", status)
	}
	doc, err = p.waitStatus(func(d statusDoc) bool { return len(d.requests()) == 0 })
	if err != nil || len(doc.requests()) != 0 {
		t.Errorf("status after GET /sleep: got slots %+v, %v; want no request shown", doc.Pool.Slots, err)
	}
}

// checkIdleKeepAlive: a kept-alive connection with no request keeps its
// child busy (showing no request) until the server's IdleTimeout closes it.
func checkIdleKeepAlive(t *testing.T, p *actdPool) {
	c := dial(t, p)
	defer c.Close()
	io.WriteString(c, "GET /idle HTTP/1.1\r\nHost: x\r\n\r\n")
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("keep-alive GET: %v", err)
	}
	pid := pidOf(mustRead(t, resp))
	doc, err := p.waitStatus(func(d statusDoc) bool { return d.state(pid) == "B" })
	if err != nil || doc.state(pid) != "B" || doc.requests()["GET /idle"] != "" {
		t.Errorf("status with the connection idle: got slots %+v, %v; want pid %s busy, no request shown", doc.Pool.Slots, err, pid)
	}
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(bound))
	if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("idle keep-alive connection: got %d bytes, %v; want the server's close", n, err)
	}
	if waited := time.Since(start); waited < idleTimeout/2 {
		t.Errorf("idle keep-alive connection closed after %v, want about IdleTimeout %v", waited, idleTimeout)
	}
	doc, err = p.waitStatus(func(d statusDoc) bool { return d.state(pid) == "I" })
	if err != nil || doc.state(pid) != "I" {
		t.Errorf("status after IdleTimeout: got slots %+v, %v; want pid %s idle", doc.Pool.Slots, err, pid)
	}
}

// checkConcurrent: 8 clients, 10 requests each, all answered.
func checkConcurrent(t *testing.T, p *actdPool) {
	var wg sync.WaitGroup
	errs := make(chan error, 80)
	for c := range 8 {
		wg.Go(func() {
			client := &http.Client{Timeout: bound, Transport: &http.Transport{}}
			defer client.CloseIdleConnections()
			for i := range 10 {
				resp, err := client.Get(fmt.Sprintf("http://%s/c/%d/%d", p.addr, c, i))
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent request: %v", err)
	}
}

// checkDrain: SIGTERM to actd while a request runs. The request is
// answered, actd exits 0, and its log has no complaint: the worker served
// the connection in hand, its Accept returned net.ErrClosed and it exited 0.
func checkDrain(t *testing.T, p *actdPool) {
	done := make(chan error, 1)
	go func() {
		_, err := get(noKeepAlive(), "http://"+p.addr+"/sleep?d=1s")
		done <- err
	}()
	if _, err := p.waitStatus(func(d statusDoc) bool { return d.requests()["GET /sleep"] == "B" }); err != nil {
		t.Fatal(err)
	}
	if err := p.stop(); err != nil {
		t.Errorf("SIGTERM: got %v, want exit status 0", err)
	}
	if err := <-done; err != nil {
		t.Errorf("request in hand at the drain: got %v, want an answer", err)
	}
	log, _ := os.ReadFile(p.log)
	for line := range strings.SplitSeq(string(log), "\n") {
		bad := strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR")
		if bad && !strings.Contains(line, "event=overload") { // a burst may find every child busy
			t.Errorf("actd log: got %s, want no complaint", line)
		}
	}
}

func noKeepAlive() *http.Client {
	return &http.Client{Timeout: bound, Transport: &http.Transport{DisableKeepAlives: true}}
}

func get(client *http.Client, url string) (string, error) {
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(b), err
}

func mustGet(t *testing.T, client *http.Client, url string) string {
	t.Helper()
	b, err := get(client, url)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustDo(t *testing.T, client *http.Client, req *http.Request) string {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	return mustRead(t, resp)
}

func mustRead(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("got %s, %v; want 200", resp.Status, err)
	}
	return string(b)
}

func dial(t *testing.T, p *actdPool) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", p.addr, bound)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(bound))
	return c
}

// pidOf returns the "pid=N" of an answer.
func pidOf(body string) string {
	_, rest, _ := strings.Cut(body, "pid=")
	pid, _, _ := strings.Cut(rest, " ")
	return pid
}

// buildActd builds cmd/actd into a temporary directory.
func buildActd(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not found: the test builds actd")
	}
	out := filepath.Join(t.TempDir(), "actd")
	if b, err := exec.Command("go", "build", "-o", out, "github.com/actd/actd/cmd/actd").CombinedOutput(); err != nil {
		t.Fatalf("go build actd: %v\n%s", err, b)
	}
	return out
}

// actdPool is one running `actd --listen ADDR -- TESTBINARY` with the test
// binary as an HTTP worker.
type actdPool struct {
	actd, addr, control, log string
	cmd                      *exec.Cmd
	exited                   chan error
}

// startActd starts actd in mode with two children and the flags extra, and
// waits until it is ready. Cleanup kills it if the test did not stop it,
// and prints its log if the test failed.
func startActd(t *testing.T, actd, mode string, extra ...string) *actdPool {
	t.Helper()
	return startActdWith(t, actd, mode, extra...)
}

// startActdWith is startActd with more flags for actd.
func startActdWith(t *testing.T, actd, mode string, flags ...string) *actdPool {
	t.Helper()
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &actdPool{actd: actd, addr: ln.Addr().String(), control: filepath.Join(dir, "ctl.sock"),
		log: filepath.Join(dir, "actd.log"), exited: make(chan error, 1)}
	ln.Close()
	args := append([]string{"--listen", p.addr, "--accept", mode, "--control-socket", p.control,
		"--log-format", "text", "--start-children", "2", "--min-spare", "1"}, flags...)
	p.cmd = exec.Command(actd, append(args, "--", os.Args[0])...)
	p.cmd.Env = append(os.Environ(), roleEnv+"=1")
	logf, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(p.log)
			t.Logf("actd log:\n%s", b)
		}
	})
	t.Cleanup(func() { p.cmd.Process.Kill() })
	if _, err := p.waitStatus(func(d statusDoc) bool { return d.Pool.Ready && d.Pool.Idle > 0 }); err != nil {
		t.Fatal(err)
	}
	return p
}

// statusDoc is the part of `actd status --json` the test reads.
type statusDoc struct {
	Pool struct {
		Ready bool `json:"ready"`
		Idle  int  `json:"idle"`
		Slots []struct {
			State   string `json:"state"`
			PID     int    `json:"pid"`
			Request string `json:"request"`
		} `json:"slots"`
	} `json:"pool"`
}

// requests maps each request shown to its slot's state.
func (d statusDoc) requests() map[string]string {
	m := map[string]string{}
	for _, s := range d.Pool.Slots {
		if s.Request != "" {
			m[s.Request] = s.State
		}
	}
	return m
}

// state returns the state of the slot of process pid, "" if none.
func (d statusDoc) state(pid string) string {
	for _, s := range d.Pool.Slots {
		if fmt.Sprint(s.PID) == pid {
			return s.State
		}
	}
	return ""
}

// waitStatus polls `actd status --json` until cond holds. It returns the
// last status, and an error if cond did not hold within bound.
func (p *actdPool) waitStatus(cond func(statusDoc) bool) (statusDoc, error) {
	deadline := time.Now().Add(bound)
	for {
		var doc statusDoc
		out, err := exec.Command(p.actd, "status", "--json", "--control-socket", p.control).Output()
		if err == nil {
			err = json.Unmarshal(out, &doc)
		}
		if err == nil && cond(doc) {
			return doc, nil
		}
		if time.Now().After(deadline) {
			return doc, fmt.Errorf("status: condition not met within %v (last error %v)", bound, err)
		}
		time.Sleep(pollEvery)
	}
}

// stop sends SIGTERM and returns actd's exit error.
func (p *actdPool) stop() error {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.exited:
		return err
	case <-time.After(bound):
		return fmt.Errorf("actd still runs %v after SIGTERM", bound)
	}
}
