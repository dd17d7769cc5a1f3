package worker

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/actd/actd/protocol"
)

// tallyEvery is the least time between two Tally messages: requests are
// counted as they end, and sent together, never one message per request.
const tallyEvery = time.Second

// tallying is the child's recorder, for Tally: nil outside actd, in
// shared mode, and under a master of a revision before Tally's.
var tallying atomic.Pointer[tally]

// Tally counts one answered request, with its status and how long it took
// (from its first byte read to its answer written), for the master's
// metrics (--metrics-listen: actd_http_requests_total,
// actd_http_request_duration_seconds) and status page. Requests calls it
// for each request; a worker that serves HTTP without Requests (the
// built-in handler) calls it itself. It costs no system call: the counts
// go to the master in one message at most once a second (tallyEvery),
// and when Serve returns. It does nothing outside actd, in shared mode,
// or under a master of protocol revision 5 or earlier (ACTD_PROTOCOL).
// Tally may be called from any goroutine.
func Tally(status int, d time.Duration) {
	if t := tallying.Load(); t != nil {
		t.add(status, d)
	}
}

// tally is the counts not sent yet, and the timer that sends them.
type tally struct {
	ch    channel
	timer *time.Timer

	mu     sync.Mutex // the fields below
	counts protocol.Tallies
	empty  bool      // nothing counted since the last send
	armed  bool      // the timer is set
	sent   time.Time // when the last Tally went out
}

// startTally makes the child's recorder for channel ch, if the master
// takes Tally (ACTD_PROTOCOL); else Tally stays a no-op.
func startTally(ch channel) {
	if !tallyAllowed() {
		return
	}
	t := &tally{ch: ch, empty: true}
	t.timer = time.AfterFunc(time.Hour, t.fire)
	t.timer.Stop()
	tallying.Store(t)
}

// tallyAllowed reports whether the master speaks a revision with Tally.
func tallyAllowed() bool {
	v, err := strconv.Atoi(strings.TrimSpace(os.Getenv(protocol.EnvProtocol)))
	return err == nil && v >= protocol.Since(protocol.Tally)
}

// add counts one request; the first since a send sets the timer for
// tallyEvery after that send.
func (t *tally) add(status int, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.counts.Add(status, d)
	t.empty = false
	if !t.armed {
		t.armed = true
		t.timer.Reset(max(0, tallyEvery-time.Since(t.sent)))
	}
}

// fire, from the timer, sends what was counted.
func (t *tally) fire() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.armed = false
	t.sendLocked()
}

// sendLocked sends the counts, if any, without blocking (MSG_DONTWAIT): on
// a full channel they are dropped, as the protocol asks. It starts the
// next counts from zero either way.
func (t *tally) sendLocked() {
	if t.empty {
		return
	}
	var buf [protocol.MaxPacket]byte
	sysSend(int(t.ch), protocol.Message{Type: protocol.Tally, Tallies: &t.counts}.Encode(buf[:]))
	t.counts, t.empty, t.sent = protocol.Tallies{}, true, time.Now()
}

// flushTally sends what the child's recorder counted and has not sent,
// as the child stops serving: no timer is left to.
func flushTally() {
	t := tallying.Load()
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.timer.Stop()
	t.armed = false
	t.sendLocked()
}
