package slogjournal

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	sdjournal "github.com/coreos/go-systemd/v22/journal"
)

// The log formats New accepts.
const (
	FormatAuto    = "auto"
	FormatText    = "text"
	FormatJournal = "journal"
)

// CheckFormat returns nil if format is one New accepts ("" counts as auto),
// else an error naming the allowed values.
func CheckFormat(format string) error {
	switch format {
	case "", FormatAuto, FormatText, FormatJournal:
		return nil
	}
	return fmt.Errorf("log format %q: want auto, text or journal", format)
}

// New returns a logger for format at level (slog.LevelInfo if nil):
//
//   - "journal": a [Handler] writing to the journal socket
//   - "text": slog's text handler writing to w (os.Stderr if w is nil)
//   - "auto" or "": the journal when stderr is connected to the journal
//     (JOURNAL_STREAM matches stderr, as systemd sets it) and the journal
//     socket answers, else text to w
//
// It returns an error naming the allowed values for any other format, and
// an error for "journal" when the journal socket does not answer.
func New(w io.Writer, format string, level slog.Leveler) (*slog.Logger, error) {
	picked, err := pick(format, sdjournal.StderrIsJournalStream, sdjournal.Enabled)
	if err != nil {
		return nil, err
	}
	if picked == FormatJournal {
		return slog.New(NewHandler(level)), nil
	}
	if w == nil {
		w = os.Stderr
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})), nil
}

// pick decides between FormatText and FormatJournal for format, given
// whether stderr is the journal and whether the journal socket answers.
// A malformed JOURNAL_STREAM counts as stderr not being the journal.
func pick(format string, stderrIsJournal func() (bool, error), journalUp func() bool) (string, error) {
	if err := CheckFormat(format); err != nil {
		return "", err
	}
	switch format {
	case FormatText:
		return FormatText, nil
	case FormatJournal:
		if !journalUp() {
			return "", errors.New("log format journal: the journal socket /run/systemd/journal/socket does not answer")
		}
		return FormatJournal, nil
	}
	if onJournal, err := stderrIsJournal(); err == nil && onJournal && journalUp() {
		return FormatJournal, nil
	}
	return FormatText, nil
}
