package slogjournal

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// timeZero is a record time that slog's text handler leaves out.
var timeZero time.Time

func TestPick(t *testing.T) {
	malformed := errors.New("bad JOURNAL_STREAM")
	tests := []struct {
		format      string
		onJournal   bool
		streamErr   error
		journalUp   bool
		want        string
		errContains string
	}{
		{format: "text", onJournal: true, journalUp: true, want: FormatText},
		{format: "journal", journalUp: true, want: FormatJournal},
		{format: "journal", journalUp: false, errContains: "does not answer"},
		{format: "auto", onJournal: true, journalUp: true, want: FormatJournal},
		{format: "auto", onJournal: true, journalUp: false, want: FormatText},
		{format: "auto", onJournal: false, journalUp: true, want: FormatText},
		{format: "auto", onJournal: true, streamErr: malformed, journalUp: true, want: FormatText},
		{format: "", onJournal: true, journalUp: true, want: FormatJournal},
		{format: "json", errContains: `log format "json": want auto, text or journal`},
		{format: "Text", errContains: `log format "Text": want auto, text or journal`},
	}
	for _, tt := range tests {
		name := tt.format + "/" + tt.want + tt.errContains
		t.Run(name, func(t *testing.T) {
			got, err := pick(tt.format,
				func() (bool, error) { return tt.onJournal, tt.streamErr },
				func() bool { return tt.journalUp })
			if tt.errContains != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errContains) {
					t.Fatalf("got %q, %v; want error containing %q", got, err, tt.errContains)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q, nil", got, err, tt.want)
			}
		})
	}
}

func TestNewText(t *testing.T) {
	for _, format := range []string{"text", "auto"} {
		t.Run(format, func(t *testing.T) {
			t.Setenv("JOURNAL_STREAM", "")
			os.Unsetenv("JOURNAL_STREAM")
			var buf bytes.Buffer
			log, err := New(&buf, format, nil)
			if err != nil {
				t.Fatalf("got error %v, want nil", err)
			}
			log.Debug("hidden")
			log.Info("child started", "slot", 3, "pid", 4242)
			got := buf.String()
			if !strings.Contains(got, `level=INFO msg="child started" slot=3 pid=4242`) || strings.Contains(got, "hidden") {
				t.Fatalf("got %q, want one slog text line at info", got)
			}
		})
	}
}

func TestNewUnknownFormat(t *testing.T) {
	log, err := New(&bytes.Buffer{}, "syslog", nil)
	if log != nil || err == nil || err.Error() != `log format "syslog": want auto, text or journal` {
		t.Fatalf("got %v, %v; want nil and an error naming auto, text and journal", log, err)
	}
}
