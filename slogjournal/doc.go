// Package slogjournal logs through log/slog to the systemd journal, with
// structured fields that journalctl can filter on.
//
// Contract:
//
//   - [Handler] turns one slog record into one journal entry. PRIORITY comes
//     from the level; MESSAGE is the record's message followed by a short
//     key=value rendering of its attributes, so that a plain journalctl shows
//     everything; each attribute is also a field of its own, named by
//     [FieldName]: "event" → ACTD_EVENT, "slot" → ACTD_SLOT, "pid" →
//     ACTD_CHILD_PID (journald's own _PID is the sender), any other key →
//     ACTD_<KEY> upper-cased, with groups joined by "_". So
//     `journalctl ACTD_EVENT=hung ACTD_SLOT=3` finds what happened to
//     slot 3. The source position goes to CODE_FILE, CODE_LINE and CODE_FUNC
//     and the program name to SYSLOG_IDENTIFIER.
//   - [New] picks the handler for --log-format: "journal", "text" (slog's
//     text handler), or "auto": the journal when stderr is connected to it
//     (JOURNAL_STREAM matches, as under systemd), else text.
//
// Entries go to /run/systemd/journal/socket through go-systemd's journal
// package; the package keeps no state of its own beyond the handler.
package slogjournal
