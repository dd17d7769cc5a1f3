package accesslog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	sdjournal "github.com/coreos/go-systemd/v22/journal"
	"golang.org/x/sys/unix"

	"github.com/actd/actd/protocol"
)

// Logger writes access-log lines. A nil *Logger logs nothing. Its methods
// may be called from any goroutine.
type Logger struct {
	format  *Format
	fd      int    // the file's fd, or -1 for the journal or stderr
	journal bool   // send entries to the journal socket
	ident   string // SYSLOG_IDENTIFIER
	buf     sync.Pool
	batch   batch // a file's lines not yet written (buffer.go)
}

// FromEnv returns the logger the master's environment asks for: nil, nil
// when ACTD_ACCESS_LOG is absent or "off"; one writing to fd N for
// "fd:N"; one sending to the journal for "journal" (to stderr if the
// journal socket does not answer). The format is ACTD_ACCESS_LOG_FORMAT,
// else DefaultFormat. It returns an error for any other value of either.
func FromEnv() (*Logger, error) {
	return New(os.Getenv(protocol.EnvAccessLog), os.Getenv(protocol.EnvAccessLogFormat))
}

// New is FromEnv for the given values of ACTD_ACCESS_LOG (where) and
// ACTD_ACCESS_LOG_FORMAT (format, "" for the default).
func New(where, format string) (*Logger, error) {
	if where == "" || where == "off" {
		return nil, nil
	}
	if format == "" {
		format = DefaultFormat
	}
	f, err := Compile(format)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", protocol.EnvAccessLogFormat, err)
	}
	l := &Logger{format: f, fd: -1, ident: filepath.Base(os.Args[0])}
	switch {
	case where == "journal":
		l.journal = sdjournal.Enabled()
		if !l.journal {
			l.fd = 2
		}
	case strings.HasPrefix(where, "fd:"):
		n, err := strconv.Atoi(where[3:])
		if err != nil || n < 3 {
			return nil, fmt.Errorf("%s=%q: want journal or fd:N, N at least 3", protocol.EnvAccessLog, where)
		}
		unix.CloseOnExec(n) // a worker's own children do not inherit it
		l.fd = n
		register(l) // FlushAll writes its last batch (buffer.go)
	default:
		return nil, fmt.Errorf("%s=%q: want journal or fd:N", protocol.EnvAccessLog, where)
	}
	return l, nil
}

// Log writes e's line. It returns the error of the write or the send, if
// any; a nil Logger returns nil.
func (l *Logger) Log(e *Entry) error {
	if l == nil {
		return nil
	}
	if !l.journal && l.fd >= 3 {
		return l.buffer(e) // a file: lines in batches (buffer.go)
	}
	bp, _ := l.buf.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	defer l.buf.Put(bp)
	line := l.format.Append((*bp)[:0], e)
	*bp = line
	if l.journal {
		return sdjournal.Send(string(line), sdjournal.PriInfo, l.fields(e))
	}
	*bp = append(line, '\n')
	return writeLine(l.fd, *bp)
}

// fields are the journal fields of e beside MESSAGE and PRIORITY.
func (l *Logger) fields(e *Entry) map[string]string {
	return map[string]string{
		"SYSLOG_IDENTIFIER": l.ident,
		"HTTP_STATUS":       strconv.Itoa(e.Status),
		"HTTP_METHOD":       e.Method,
		"HTTP_PATH":         e.Path,
		"HTTP_BYTES":        strconv.FormatInt(e.Bytes, 10),
		"HTTP_DURATION_US":  strconv.FormatInt(e.Duration.Microseconds(), 10),
		"REMOTE_ADDR":       e.Host(),
	}
}

// writeLine writes b with one write(2) (O_APPEND keeps it whole), retrying
// only on EINTR. A short write is an error.
func writeLine(fd int, b []byte) error {
	for {
		n, err := unix.Write(fd, b)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return fmt.Errorf("access log: %w", err)
		case n < len(b):
			return fmt.Errorf("access log: wrote %d of %d bytes", n, len(b))
		}
		return nil
	}
}

// Headers returns the request headers l's format prints; nil for a nil l.
func (l *Logger) Headers() []string {
	if l == nil {
		return nil
	}
	return l.format.Headers()
}
