package prefork

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/actd/actd/prefork/acceptfilter"
	"github.com/actd/actd/protocol"
)

var modeTables = []struct {
	name  string
	mode  protocol.Mode
	table *table
}{
	{"Dispatch", protocol.Dispatch, dispatchTable},
	{"Filter", protocol.Dispatch, filterTable},
	{"Exclusive", protocol.Exclusive, exclusiveTable},
	{"Shared", protocol.Shared, sharedTable},
}

// TestDocDiagram: doc.go draws each mode's table as diagram does.
func TestDocDiagram(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(src)
	for _, m := range modeTables {
		var want strings.Builder
		want.WriteString("// " + m.name + ":\n//\n")
		for _, line := range strings.SplitAfter(m.table.diagram(), "\n") {
			if line != "" {
				want.WriteString("//\t" + line)
			}
		}
		if !strings.Contains(doc, want.String()) {
			t.Errorf("doc.go does not draw the %s table as it is:\n%s", m.name, want.String())
		}
	}
}

// TestMessageTransitions sends every message a child may send to a slot in
// every state its mode can reach, through onMessage: the slot lands where
// the table says, or the message is garbage where the table has no
// transition, and the slot is then as it was.
func TestMessageTransitions(t *testing.T) {
	for _, m := range modeTables[:3] {
		reach := m.table.reachable()
		for from := range numStates {
			if !reach[from] || from == empty || from == exiting {
				continue // no back-channel to hear from
			}
			for _, typ := range []protocol.Type{protocol.Hello, protocol.Idle, protocol.Busy,
				protocol.Served, protocol.Pong, protocol.Request, protocol.Keep, protocol.Tally} {
				ev, _ := messageEvent(typ)
				t.Run(m.name+"/"+from.String()+"/"+typ.String(), func(t *testing.T) {
					p, _, _ := dispatchPool(t, 1)
					switch m.table {
					case exclusiveTable:
						p, _ = armPool(t, 1)
					case filterTable:
						p, _, _ = handoffPool(t, 1, acceptfilter.HTTP)
					}
					s := p.slots[0]
					s.state = from
					if from != idle {
						p.idle.remove(0)
					}
					if from == ordered && m.mode == protocol.Dispatch {
						p.listeners[0].orders = 1
					}
					fd := -1
					if typ.HasFD() {
						fd = connFD(t)
					}
					err := p.onMessageFD(s, protocol.Message{Type: typ, Value: 1}, fd)
					want, ok := m.table.next(from, ev)
					switch {
					case !ok && !errors.Is(err, protocol.ErrGarbage):
						t.Errorf("got %v, want garbage", err)
					case !ok && s.state != from:
						t.Errorf("garbage moved the slot to %v", s.state)
					case ok && err != nil:
						t.Errorf("got %v, want %v", err, want)
					case ok && s.state != want:
						t.Errorf("got state %v, want %v", s.state, want)
					}
				})
			}
		}
	}
}

// TestMasterTransitions: what the master does moves a slot as the tables
// say, and what it may not do is refused.
func TestMasterTransitions(t *testing.T) {
	tests := []struct {
		table    *table
		from     state
		ev       event
		want     state
		possible bool
	}{
		{dispatchTable, empty, evSpawn, starting, true},
		{sharedTable, empty, evSpawn, running, true},
		{dispatchTable, idle, evOrder, ordered, true},
		{dispatchTable, busy, evOrder, busy, false},
		{dispatchTable, idle, evHandoff, idle, false},
		{filterTable, idle, evHandoff, ordered, true},
		{filterTable, busy, evHandoff, busy, false},
		{filterTable, idle, evOrder, moving, true}, // a screening child: register
		{filterTable, ordered, evOrder, ordered, false},
		{exclusiveTable, standby, evOrder, ordered, true},
		{exclusiveTable, idle, evOrder, moving, true},
		{exclusiveTable, busy, evOrder, busy, false},
		{dispatchTable, busy, evClose, exiting, true},
		{exclusiveTable, movingBusy, evClose, exiting, true},
		{dispatchTable, exiting, evReap, empty, true},
		{sharedTable, running, evReap, empty, true},
		{sharedTable, running, evClose, running, false},
	}
	for _, tt := range tests {
		t.Run(tt.from.String()+"/"+tt.ev.String(), func(t *testing.T) {
			got, ok := tt.table.next(tt.from, tt.ev)
			if ok != tt.possible || ok && got != tt.want {
				t.Errorf("next(%v, %v) = %v, %v; want %v, %v", tt.from, tt.ev, got, ok, tt.want, tt.possible)
			}
		})
	}
}

// TestTablesReachEveryState: no state is dead in every table.
func TestTablesReachEveryState(t *testing.T) {
	var any [numStates]bool
	for _, m := range modeTables {
		for s, ok := range m.table.reachable() {
			any[s] = any[s] || ok
		}
	}
	for s, ok := range any {
		if !ok {
			t.Errorf("state %v is reached in no mode", state(s))
		}
	}
}

// TestRequestReport: a busy child's R shows in the snapshot until its next
// B or I; from an idle child it is garbage.
func TestRequestReport(t *testing.T) {
	p, _, _ := dispatchPool(t, 1)
	s := p.slots[0]
	if err := p.onMessage(s, protocol.Message{Type: protocol.Request, Text: "GET /"}); !errors.Is(err, protocol.ErrGarbage) {
		t.Errorf("R from an idle child: got %v, want garbage", err)
	}
	s.state = busy
	p.idle.remove(0)
	for _, tc := range []struct {
		m    protocol.Message
		want string
	}{
		{protocol.Message{Type: protocol.Request, Text: "GET /slow?x=1"}, "GET /slow?x=1"},
		{protocol.Message{Type: protocol.Served, Value: 1}, "GET /slow?x=1"},
		{protocol.Message{Type: protocol.Busy}, ""},
		{protocol.Message{Type: protocol.Request, Text: "POST /form"}, "POST /form"},
		{protocol.Message{Type: protocol.Idle}, ""},
	} {
		if err := p.onMessage(s, tc.m); err != nil {
			t.Fatalf("%v: %v", tc.m.Type, err)
		}
		snap := p.snapshot()
		if got := snap.Slots[0].Request; got != tc.want {
			t.Errorf("after %v: request %q, want %q", tc.m.Type, got, tc.want)
		}
	}
}

// TestSlowRequest: a busy spell longer than --slow-request is logged once,
// with the request the child reported; a new spell is logged again, and a
// spell within the limit or with the option off is not.
func TestSlowRequest(t *testing.T) {
	for _, tc := range []struct {
		name      string
		limit     time.Duration
		busyFor   []time.Duration // one tick each, same spell
		wantLines int
	}{
		{"off", 0, []time.Duration{time.Hour}, 0},
		{"within", time.Second, []time.Duration{500 * time.Millisecond}, 0},
		{"over once", time.Second, []time.Duration{2 * time.Second, 3 * time.Second, 4 * time.Second}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, _ := dispatchPool(t, 1)
			var buf bytes.Buffer
			p.log = slog.New(slog.NewTextHandler(&buf, nil))
			p.cfg.SlowRequest = tc.limit
			s := p.slots[0]
			s.state, s.request, s.since = busy, "GET /report?year=2026", time.Now()
			for _, d := range tc.busyFor {
				p.now = s.since.Add(d)
				p.checkSlot(s, p.cfg.deadlines(p.cfg.PingInterval))
			}
			lines := strings.Count(buf.String(), "event=slow")
			if lines != tc.wantLines || uint64(lines) != p.stats.Slow {
				t.Fatalf("got %d slow lines (stats %d), want %d; log:\n%s", lines, p.stats.Slow, tc.wantLines, buf.String())
			}
			if lines > 0 && !strings.Contains(buf.String(), `request="GET /report?year=2026"`) {
				t.Errorf("slow line does not name the request:\n%s", buf.String())
			}
		})
	}
}

// TestSlowRequestEachSpell: a child slow on two connections in a row is
// logged for each.
func TestSlowRequestEachSpell(t *testing.T) {
	p, _, _ := dispatchPool(t, 1)
	var buf bytes.Buffer
	p.log = slog.New(slog.NewTextHandler(&buf, nil))
	p.cfg.SlowRequest = time.Second
	s := p.slots[0]
	start := time.Now()
	for i := range 2 {
		s.state, s.since = busy, start.Add(time.Duration(i)*time.Minute)
		p.now = s.since.Add(2 * time.Second)
		p.checkSlot(s, p.cfg.deadlines(p.cfg.PingInterval))
	}
	if got := strings.Count(buf.String(), "event=slow"); got != 2 {
		t.Errorf("got %d slow lines for two slow connections, want 2; log:\n%s", got, buf.String())
	}
}
