package slogjournal

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	sdjournal "github.com/coreos/go-systemd/v22/journal"
)

// sendFunc writes one entry; sdjournal.Send in production.
type sendFunc func(message string, priority sdjournal.Priority, vars map[string]string) error

// Handler is a slog.Handler that writes each record to the systemd journal
// as one entry with structured fields (see the package doc). It is safe for
// concurrent use.
type Handler struct {
	level  slog.Leveler
	send   sendFunc
	ident  string
	attrs  []field // from WithAttrs, already flattened
	prefix string  // open groups from WithGroup, dotted
}

// NewHandler returns a Handler that writes records at level or above
// (slog.LevelInfo if level is nil) to the journal socket.
func NewHandler(level slog.Leveler) *Handler {
	return newHandler(level, sdjournal.Send)
}

// newHandler is NewHandler with the journal's send replaced.
func newHandler(level slog.Leveler, send sendFunc) *Handler {
	if level == nil {
		level = slog.LevelInfo
	}
	return &Handler{level: level, send: send, ident: filepath.Base(os.Args[0])}
}

// Enabled reports whether level is at or above the handler's level.
func (h *Handler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= h.level.Level()
}

// Handle writes r as one journal entry.
// It returns nil when the entry was written, else the journal's error.
func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	fields := append([]field(nil), h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		fields = flatten(fields, h.prefix, a)
		return true
	})
	vars := journalFields(fields)
	vars["SYSLOG_IDENTIFIER"] = h.ident
	addSource(vars, r.PC)
	return h.send(message(r.Message, fields), priority(r.Level), vars)
}

// WithAttrs returns a Handler that adds attrs, inside the open groups, to
// every record.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h2 := *h
	h2.attrs = append([]field(nil), h.attrs...)
	for _, a := range attrs {
		h2.attrs = flatten(h2.attrs, h.prefix, a)
	}
	return &h2
}

// WithGroup returns a Handler that puts later attributes in group name;
// an empty name returns h.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.prefix = h.prefix + name + "."
	return &h2
}

// priority maps a slog level to a journal priority.
func priority(l slog.Level) sdjournal.Priority {
	switch {
	case l >= slog.LevelError+4:
		return sdjournal.PriCrit
	case l >= slog.LevelError:
		return sdjournal.PriErr
	case l >= slog.LevelWarn:
		return sdjournal.PriWarning
	case l > slog.LevelInfo:
		return sdjournal.PriNotice
	case l == slog.LevelInfo:
		return sdjournal.PriInfo
	}
	return sdjournal.PriDebug
}

// addSource sets CODE_FILE, CODE_LINE and CODE_FUNC from pc, if known.
func addSource(vars map[string]string, pc uintptr) {
	if pc == 0 {
		return
	}
	frame, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	if frame.File == "" {
		return
	}
	vars["CODE_FILE"] = frame.File
	vars["CODE_LINE"] = strconv.Itoa(frame.Line)
	vars["CODE_FUNC"] = frame.Function
}
