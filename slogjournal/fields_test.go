package slogjournal

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	sdjournal "github.com/coreos/go-systemd/v22/journal"
)

func TestFieldName(t *testing.T) {
	tests := []struct {
		key  string
		want string
	}{
		{"event", "ACTD_EVENT"},
		{"slot", "ACTD_SLOT"},
		{"pid", "ACTD_CHILD_PID"},
		{"err", "ACTD_ERR"},
		{"listener", "ACTD_LISTENER"},
		{"exitCode", "ACTD_EXITCODE"},
		{"http.status", "ACTD_HTTP_STATUS"},
		{"child.pid", "ACTD_CHILD_PID"},
		{"busy-timeout", "ACTD_BUSY_TIMEOUT"},
		{"max_conn_per_child2", "ACTD_MAX_CONN_PER_CHILD2"},
		{"grüße", "ACTD_GR__E"},
		{"a b=c", "ACTD_A_B_C"},
		{"", "ACTD_"},
		{strings.Repeat("k", 100), "ACTD_" + strings.Repeat("K", 59)},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			if got := FieldName(tt.key); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFieldNamesAreValidForJournald(t *testing.T) {
	for _, key := range []string{"event", "x.y", "ü", "_lead", "9", "a\nb"} {
		name := FieldName(key)
		if len(name) > maxFieldName || name[0] == '_' || strings.Trim(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "" {
			t.Errorf("FieldName(%q): got %q, want only A-Z, 0-9 and _ not first, at most 64", key, name)
		}
	}
}

func TestFlattenAndMessage(t *testing.T) {
	when := time.Date(2026, 11, 22, 2, 4, 5, 6000, time.UTC)
	tests := []struct {
		name       string
		attrs      []slog.Attr
		wantMsg    string
		wantFields map[string]string
	}{
		{
			name:       "none",
			wantMsg:    "pool ready",
			wantFields: map[string]string{},
		},
		{
			name:       "well-known keys",
			attrs:      []slog.Attr{slog.String("event", "respawn"), slog.Int("slot", 3), slog.Int("pid", 4242)},
			wantMsg:    "pool ready event=respawn slot=3 pid=4242",
			wantFields: map[string]string{"ACTD_EVENT": "respawn", "ACTD_SLOT": "3", "ACTD_CHILD_PID": "4242"},
		},
		{
			name: "kinds",
			attrs: []slog.Attr{
				slog.Bool("ok", true), slog.Duration("took", 1500*time.Millisecond), slog.Float64("rate", 41.5),
				slog.Time("at", when), slog.Any("err", errors.New("exit status 1")), slog.Uint64("n", 7),
			},
			wantMsg: `pool ready ok=true took=1.5s rate=41.5 at=2026-11-22T02:04:05.000006Z err="exit status 1" n=7`,
			wantFields: map[string]string{
				"ACTD_OK": "true", "ACTD_TOOK": "1.5s", "ACTD_RATE": "41.5",
				"ACTD_AT": "2026-11-22T02:04:05.000006Z", "ACTD_ERR": "exit status 1", "ACTD_N": "7",
			},
		},
		{
			name:       "quoting",
			attrs:      []slog.Attr{slog.String("empty", ""), slog.String("eq", "a=b"), slog.String("nl", "a\nb"), slog.String("q", `"x"`)},
			wantMsg:    `pool ready empty="" eq="a=b" nl="a\nb" q="\"x\""`,
			wantFields: map[string]string{"ACTD_EMPTY": "", "ACTD_EQ": "a=b", "ACTD_NL": "a\nb", "ACTD_Q": `"x"`},
		},
		{
			name: "groups",
			attrs: []slog.Attr{
				slog.Group("http", slog.Int("status", 200), slog.Group("req", slog.String("path", "/"))),
				slog.Group("", slog.Int("inlined", 1)),
				slog.Group("empty"),
				slog.Int("", 5),
			},
			wantMsg:    "pool ready http.status=200 http.req.path=/ inlined=1",
			wantFields: map[string]string{"ACTD_HTTP_STATUS": "200", "ACTD_HTTP_REQ_PATH": "/", "ACTD_INLINED": "1"},
		},
		{
			name:       "a later key wins the field, both stay in the message",
			attrs:      []slog.Attr{slog.Int("slot", 1), slog.Int("slot", 2)},
			wantMsg:    "pool ready slot=1 slot=2",
			wantFields: map[string]string{"ACTD_SLOT": "2"},
		},
		{
			name:       "LogValuer is resolved",
			attrs:      []slog.Attr{slog.Any("state", stateValuer{})},
			wantMsg:    "pool ready state=idle",
			wantFields: map[string]string{"ACTD_STATE": "idle"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fields []field
			for _, a := range tt.attrs {
				fields = flatten(fields, "", a)
			}
			if got := message("pool ready", fields); got != tt.wantMsg {
				t.Errorf("got message %q, want %q", got, tt.wantMsg)
			}
			if got := journalFields(fields); fmt.Sprint(got) != fmt.Sprint(tt.wantFields) {
				t.Errorf("got fields %v, want %v", got, tt.wantFields)
			}
		})
	}
}

// stateValuer is a slog.LogValuer.
type stateValuer struct{}

func (stateValuer) LogValue() slog.Value { return slog.StringValue("idle") }

func TestPriority(t *testing.T) {
	tests := []struct {
		level slog.Level
		want  sdjournal.Priority
	}{
		{slog.LevelDebug - 4, sdjournal.PriDebug},
		{slog.LevelDebug, sdjournal.PriDebug},
		{slog.LevelInfo - 1, sdjournal.PriDebug},
		{slog.LevelInfo, sdjournal.PriInfo},
		{slog.LevelInfo + 2, sdjournal.PriNotice},
		{slog.LevelWarn, sdjournal.PriWarning},
		{slog.LevelError, sdjournal.PriErr},
		{slog.LevelError + 4, sdjournal.PriCrit},
	}
	for _, tt := range tests {
		t.Run(tt.level.String(), func(t *testing.T) {
			if got := priority(tt.level); got != tt.want {
				t.Fatalf("got %d, want %d", got, tt.want)
			}
		})
	}
}
