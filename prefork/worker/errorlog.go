package worker

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"

	sdjournal "github.com/coreos/go-systemd/v22/journal"
)

// recoverPanic, deferred by Requests, turns a handler's panic into one
// error-log entry (logPanic) and, if no response started, a 500 and the
// connection's close; a response already started is cut as net/http cuts
// it for a panic (http.ErrAbortHandler), without net/http's multi-line
// log. http.ErrAbortHandler itself passes through untouched.
func recoverPanic(m *meter, r *http.Request) {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler {
		panic(v)
	}
	logPanic(r, v, debug.Stack())
	if m.status != 0 {
		panic(http.ErrAbortHandler)
	}
	m.Header().Set("Connection", "close")
	http.Error(m, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
}

// logPanic writes one entry at priority err (3) naming the request by its
// method and path (never its query string: it may carry secrets) with the
// panic's value and stack: to the journal's native protocol when its
// socket answers, else to stderr with one write, each line prefixed "<3>"
// (so that SyslogLevelPrefix= reads its priority).
func logPanic(r *http.Request, v any, stack []byte) {
	msg := fmt.Sprintf("panic serving %s %s: %v\n%s", r.Method, r.URL.Path, v, stack)
	if sdjournal.Enabled() {
		err := sdjournal.Send(msg, sdjournal.PriErr, map[string]string{
			"SYSLOG_IDENTIFIER": filepath.Base(os.Args[0]),
			"HTTP_METHOD":       r.Method,
			"HTTP_PATH":         r.URL.Path,
			"REMOTE_ADDR":       r.RemoteAddr,
		})
		if err == nil {
			return
		}
	}
	os.Stderr.WriteString(prefixLines("<3>", msg))
}

// prefixLines returns s with prefix before each line.
func prefixLines(prefix, s string) string {
	out := make([]byte, 0, len(s)+len(prefix)*64)
	start := true
	for i := 0; i < len(s); i++ {
		if start {
			out = append(out, prefix...)
		}
		out = append(out, s[i])
		start = s[i] == '\n'
	}
	if !start {
		out = append(out, '\n')
	}
	return string(out)
}
