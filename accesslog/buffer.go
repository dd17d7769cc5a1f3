package accesslog

import (
	"sync"
	"time"
)

// Lines bound for a file ("fd:N") are written in batches: whole lines,
// each batch with one write(2) (O_APPEND keeps it whole among the other
// children's), once it holds bufferSize bytes or its oldest line is
// flushEvery old, and when the worker stops (FlushAll). One write per line
// cost a keep-alive pool about a fifth of its requests/s
// (go run ./bench -issue25); nginx's access_log buffer= and flush= do the
// same. A child killed by SIGKILL loses at most its last second of lines.
const (
	bufferSize = 8 << 10
	flushEvery = time.Second
)

// batch is a file logger's lines not yet written.
type batch struct {
	mu    sync.Mutex
	b     []byte
	timer *time.Timer // flushes flushEvery after the first line of a batch
	armed bool
}

// loggers are the file loggers FlushAll flushes.
var loggers struct {
	mu  sync.Mutex
	all []*Logger
}

// register adds l to the loggers FlushAll flushes.
func register(l *Logger) {
	loggers.mu.Lock()
	loggers.all = append(loggers.all, l)
	loggers.mu.Unlock()
}

// buffer appends e's line to l's batch and writes the batch if it is
// full. It returns the error of that write, if any.
func (l *Logger) buffer(e *Entry) error {
	l.batch.mu.Lock()
	defer l.batch.mu.Unlock()
	l.batch.b = append(l.format.Append(l.batch.b, e), '\n')
	if len(l.batch.b) >= bufferSize {
		return l.flushLocked()
	}
	if !l.batch.armed {
		l.batch.armed = true
		if l.batch.timer == nil {
			l.batch.timer = time.AfterFunc(flushEvery, func() { l.Flush() })
		} else {
			l.batch.timer.Reset(flushEvery)
		}
	}
	return nil
}

// Flush writes l's batch, if any, and returns the write's error. A nil
// Logger, or one that does not write to a file, has nothing to flush.
func (l *Logger) Flush() error {
	if l == nil || l.journal || l.fd < 3 {
		return nil
	}
	l.batch.mu.Lock()
	defer l.batch.mu.Unlock()
	return l.flushLocked()
}

func (l *Logger) flushLocked() error {
	if l.batch.armed {
		l.batch.timer.Stop()
		l.batch.armed = false
	}
	if len(l.batch.b) == 0 {
		return nil
	}
	err := writeLine(l.fd, l.batch.b)
	l.batch.b = l.batch.b[:0]
	return err
}

// FlushAll writes every file logger's batch: a worker calls it when it
// stops serving (prefork/worker does, when Serve returns).
func FlushAll() error {
	loggers.mu.Lock()
	all := loggers.all
	loggers.mu.Unlock()
	var first error
	for _, l := range all {
		if err := l.Flush(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
