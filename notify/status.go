package notify

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// DefaultStatusPeriod is the StatusCoalescer period when none is given.
const DefaultStatusPeriod = time.Second

// StatusCoalescer sends status lines to systemd at a bounded rate.
//
// Callers call Set whenever their state changes, as often as they like; Run
// sends STATUS= at most once per period, always the latest line, and nothing
// when the line equals the last one sent. A line set after a quiet spell is
// sent at once; lines set within a period of the last send wait for the end
// of that period. Use one StatusCoalescer per Notifier.
type StatusCoalescer struct {
	n      *Notifier
	period time.Duration
	log    *slog.Logger
	wake   chan struct{} // holds a token when latest changed since Run last looked

	mu     sync.Mutex // guards latest
	latest string

	sendMu sync.Mutex // serialises sends, guards sent
	sent   string
}

// NewStatusCoalescer returns a StatusCoalescer that sends through n at most
// once per period (DefaultStatusPeriod if period is not positive), and logs
// send errors to log (dropped if log is nil).
func NewStatusCoalescer(n *Notifier, period time.Duration, log *slog.Logger) *StatusCoalescer {
	if period <= 0 {
		period = DefaultStatusPeriod
	}
	return &StatusCoalescer{n: n, period: period, log: log, wake: make(chan struct{}, 1)}
}

// Set records line as the current status. It never blocks on I/O and does
// not allocate; the line is sent later by Run or Flush.
func (c *StatusCoalescer) Set(line string) {
	c.mu.Lock()
	changed := line != c.latest
	c.latest = line
	c.mu.Unlock()
	if changed {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// Run sends the lines given to Set until ctx is done, then flushes.
//
// It returns the error of the final Flush: nil when the last line was sent,
// was already sent, or the Notifier does not send. Errors of earlier sends
// do not stop it; they are logged, and the line is tried again when the
// next line is set or at the final Flush.
func (c *StatusCoalescer) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return c.Flush()
		case <-c.wake:
		}
		if !c.sendLatest() {
			continue
		}
		hold := time.NewTimer(c.period)
		select {
		case <-ctx.Done():
			hold.Stop()
			return c.Flush()
		case <-hold.C:
		}
	}
}

// sendLatest flushes and logs an error; it reports whether it tried to send.
func (c *StatusCoalescer) sendLatest() bool {
	tried, err := c.flush()
	if err != nil && c.log != nil {
		c.log.Warn("status: send failed", "err", err)
	}
	return tried
}

// Flush sends the latest line now if it differs from the last line sent.
//
// It returns nil when the line was sent, was already sent, or the Notifier
// does not send, else the send error (the line then counts as unsent).
func (c *StatusCoalescer) Flush() error {
	_, err := c.flush()
	return err
}

// flush is Flush that also reports whether it tried to send.
func (c *StatusCoalescer) flush() (bool, error) {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	c.mu.Lock()
	line := c.latest
	c.mu.Unlock()
	if line == c.sent {
		return false, nil
	}
	if err := c.n.Status(line); err != nil {
		return true, err
	}
	c.sent = line
	return true, nil
}
