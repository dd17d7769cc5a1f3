package notify

import (
	"fmt"
	"sync"
	"time"
)

// sent is one message as the recorder saw it, with the fake time since the
// bubble started.
type sent struct {
	at    time.Duration
	state string
}

func (s sent) String() string { return fmt.Sprintf("%v %q", s.at, s.state) }

// recorder is a Notifier send func that remembers what was sent and when.
// failFirst makes the first that many sends fail.
type recorder struct {
	start     time.Time
	failFirst int

	mu    sync.Mutex
	calls int
	sends []sent
}

// newRecorder starts the clock of the recorder now (inside the bubble).
func newRecorder() *recorder { return &recorder{start: time.Now()} }

// send records state, or fails if this is one of the first failFirst calls.
func (r *recorder) send(state string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.calls <= r.failFirst {
		return fmt.Errorf("send %d refused", r.calls)
	}
	r.sends = append(r.sends, sent{at: time.Since(r.start), state: state})
	return nil
}

// got returns what was sent so far.
func (r *recorder) got() []sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sent(nil), r.sends...)
}

// sameSends reports whether a and b are equal.
func sameSends(a, b []sent) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}
