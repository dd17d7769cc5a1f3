package worker

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/actd/actd/accesslog"
	"github.com/actd/actd/protocol"
)

// The net/http side of the operator settings, applied by Requests to each
// request: the access log (--access-log), the body limit
// (--max-request-body), the header field limit, and a handler's panic
// logged as one error entry (errorlog.go).

// accessLogFD returns the access-log file's fd the master passed
// (ACTD_ACCESS_LOG=fd:N), or -1 for none.
func accessLogFD() int {
	v, ok := strings.CutPrefix(os.Getenv(protocol.EnvAccessLog), "fd:")
	if !ok {
		return -1
	}
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return -1
	}
	return fd
}

// edge is what Requests applies, read once from the environment.
type edge struct {
	log     *accesslog.Logger // nil: off
	maxBody int64             // -1: none
}

// newEdge reads the environment. A malformed access-log setting is
// reported on stderr and leaves the log off.
func newEdge() *edge {
	l, err := accesslog.FromEnv()
	if err != nil {
		fmt.Fprintf(os.Stderr, "actd worker %d: access log off: %v\n", os.Getpid(), err)
	}
	return &edge{log: l, maxBody: MaxRequestBody()}
}

// serve runs h for r under the limits, and logs the request.
func (e *edge) serve(h http.Handler, w http.ResponseWriter, r *http.Request) {
	m := &meter{ResponseWriter: w, start: time.Now()}
	defer e.logged(m, r)
	defer recoverPanic(m, r) // errorlog.go
	if status := e.refuse(r); status != 0 {
		m.Header().Set("Connection", "close")
		http.Error(m, reason(status), status)
		return
	}
	if e.maxBody >= 0 && r.Body != nil && r.Body != http.NoBody {
		r.Body = &limitedBody{ReadCloser: http.MaxBytesReader(w, r.Body, e.maxBody), m: m}
	}
	h.ServeHTTP(m, r)
}

// refuse returns the status for a request refused before its handler
// runs: 431 for more header fields than MaxHeaderFields, 413 for a
// Content-Length over the body limit (none of the body read); else 0.
func (e *edge) refuse(r *http.Request) int {
	fields := 0
	if r.Host != "" {
		fields++ // net/http moves Host out of Header: it is a field line all the same
	}
	for _, v := range r.Header {
		fields += len(v)
	}
	switch {
	case fields > MaxHeaderFields:
		return http.StatusRequestHeaderFieldsTooLarge
	case e.maxBody >= 0 && r.ContentLength > e.maxBody:
		return http.StatusRequestEntityTooLarge
	}
	return 0
}

// logged counts r for the master (Tally, tally.go) and writes its
// access-log line.
func (e *edge) logged(m *meter, r *http.Request) {
	status := m.status
	if status == 0 {
		status = http.StatusOK // nothing written: net/http sends 200
	}
	took := time.Since(m.start)
	Tally(status, took)
	if e.log == nil {
		return
	}
	err := e.log.Log(&accesslog.Entry{
		Start: m.start, Duration: took, Remote: r.RemoteAddr,
		Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Proto: r.Proto,
		Status: status, Bytes: m.bytes, Header: r.Header.Get,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "actd worker %d: %v\n", os.Getpid(), err)
	}
}

// reason is the text of an error answer's body: RFC 9110's name for 413
// (net/http's status line keeps its older one), net/http's for the others.
func reason(status int) string {
	if status == http.StatusRequestEntityTooLarge {
		return "Content Too Large"
	}
	return http.StatusText(status)
}

// meter is the ResponseWriter a handler gets from Requests: it notes the
// status and the body bytes, and answers 413 in the handler's place once
// the body passed the limit before a response started.
type meter struct {
	http.ResponseWriter
	start  time.Time
	status int   // 0: no header written yet
	bytes  int64 // body bytes written
	over   bool  // the request body passed the limit
	muted  bool  // the handler's answer is replaced by 413
}

func (m *meter) WriteHeader(status int) {
	if m.status != 0 || status < 200 {
		if m.status == 0 {
			m.ResponseWriter.WriteHeader(status) // 1xx: not the answer yet
		}
		return
	}
	if m.over {
		m.tooLarge()
		return
	}
	m.status = status
	m.ResponseWriter.WriteHeader(status)
}

func (m *meter) Write(b []byte) (int, error) {
	if m.status == 0 {
		m.WriteHeader(http.StatusOK)
	}
	if m.muted {
		return len(b), nil
	}
	n, err := m.ResponseWriter.Write(b)
	m.bytes += int64(n)
	return n, err
}

// tooLarge answers 413 and closes the connection, for a body that passed
// the limit: what the handler writes after is dropped.
func (m *meter) tooLarge() {
	m.muted = true
	m.ResponseWriter.Header().Set("Connection", "close")
	m.status = http.StatusRequestEntityTooLarge
	body := reason(m.status) + "\n"
	m.ResponseWriter.Header().Set("Content-Type", "text/plain; charset=utf-8")
	m.ResponseWriter.WriteHeader(m.status)
	n, _ := io.WriteString(m.ResponseWriter, body)
	m.bytes += int64(n)
}

// Flush flushes the underlying writer, if it can.
func (m *meter) Flush() {
	if m.status == 0 {
		m.WriteHeader(http.StatusOK)
	}
	http.NewResponseController(m.ResponseWriter).Flush()
}

// Unwrap returns the underlying writer, for http.ResponseController.
func (m *meter) Unwrap() http.ResponseWriter { return m.ResponseWriter }

// Hijack hands the connection to the handler, as net/http's writer does
// (http.Hijacker). The access log then counts no status or bytes the
// handler writes on it.
func (m *meter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(m.ResponseWriter).Hijack()
}

// ReadFrom copies r to the response as Write would, keeping net/http's
// sendfile path for a file once the header is written, as
// http.ServeContent does (io.ReaderFrom). Before it, the copy goes through
// Write: r may be the request body, which may still pass the limit.
func (m *meter) ReadFrom(r io.Reader) (int64, error) {
	if m.status == 0 || m.muted {
		return io.Copy(writerOnly{m}, r)
	}
	n, err := io.Copy(m.ResponseWriter, r)
	m.bytes += n
	return n, err
}

// writerOnly hides a writer's other methods (ReadFrom) from io.Copy.
type writerOnly struct{ io.Writer }

// limitedBody is a request body under http.MaxBytesReader that tells the
// meter when it passed the limit.
type limitedBody struct {
	io.ReadCloser
	m *meter
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		b.m.over = true
		if b.m.status == 0 {
			b.m.tooLarge()
		}
	}
	return n, err
}
