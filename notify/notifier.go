package notify

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	sddaemon "github.com/coreos/go-systemd/v22/daemon"
	"golang.org/x/sys/unix"
)

// Notifier sends sd_notify messages to the service manager.
//
// The zero value writes each message as one datagram to the socket named by
// NOTIFY_SOCKET at the time of the call (a path, or "@name" for an abstract
// socket) and does nothing when NOTIFY_SOCKET is unset. A nil *Notifier does
// nothing. A Notifier is safe for concurrent use.
type Notifier struct {
	send func(state string) error
}

// WithSend returns a Notifier that hands every message to send instead of
// writing it to NOTIFY_SOCKET: for tests, or to log what would be sent.
func WithSend(send func(state string) error) *Notifier {
	return &Notifier{send: send}
}

// Enabled reports whether n sends anywhere: false for a nil Notifier and
// for the zero value when NOTIFY_SOCKET is unset.
func (n *Notifier) Enabled() bool {
	return n != nil && (n.send != nil || os.Getenv("NOTIFY_SOCKET") != "")
}

// Ready sends READY=1: start-up, or a reload, is finished.
// It returns nil when sent or when n does not send, else the send error.
func (n *Notifier) Ready() error {
	return n.notify("READY", sddaemon.SdNotifyReady)
}

// Reloading sends RELOADING=1 with MONOTONIC_USEC= (the CLOCK_MONOTONIC time
// systemd 253 and later expect); Ready must follow when the reload is done.
// It returns nil when sent or when n does not send, else the clock or send
// error.
func (n *Notifier) Reloading() error {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return fmt.Errorf("sd_notify RELOADING: clock_gettime: %w", err)
	}
	usec := ts.Nano() / int64(time.Microsecond)
	return n.notify("RELOADING", sddaemon.SdNotifyReloading+"\nMONOTONIC_USEC="+strconv.FormatInt(usec, 10))
}

// Stopping sends STOPPING=1: the service is shutting down.
// It returns nil when sent or when n does not send, else the send error.
func (n *Notifier) Stopping() error {
	return n.notify("STOPPING", sddaemon.SdNotifyStopping)
}

// Status sends STATUS=line, shown by systemctl status. Newlines in line
// become spaces, since each line of a message is one assignment.
// It returns nil when sent or when n does not send, else the send error.
func (n *Notifier) Status(line string) error {
	return n.notify("STATUS", "STATUS="+oneLine(line))
}

// ExtendTimeout sends EXTEND_TIMEOUT_USEC=: the current start, reload or stop
// needs d more from now before systemd's timeout applies.
// It returns an error without sending when d is not positive, nil when sent
// or when n does not send, else the send error.
func (n *Notifier) ExtendTimeout(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("sd_notify EXTEND_TIMEOUT_USEC: got %v, want a positive duration", d)
	}
	return n.notify("EXTEND_TIMEOUT_USEC", "EXTEND_TIMEOUT_USEC="+strconv.FormatInt(d.Microseconds(), 10))
}

// Errno sends STATUS=status (if status is not empty) and ERRNO=errno, for a
// fatal exit: systemctl status then shows why the service failed.
// It returns nil when sent or when n does not send, else the send error.
func (n *Notifier) Errno(errno int, status string) error {
	state := "ERRNO=" + strconv.Itoa(errno)
	if status != "" {
		state = "STATUS=" + oneLine(status) + "\n" + state
	}
	return n.notify("ERRNO", state)
}

// Watchdog sends WATCHDOG=1: the service is alive.
// It returns nil when sent or when n does not send, else the send error.
func (n *Notifier) Watchdog() error {
	return n.notify("WATCHDOG", sddaemon.SdNotifyWatchdog)
}

// WatchdogTrigger sends WATCHDOG=trigger: systemd acts as if the watchdog
// timed out now (WatchdogSignal=, then Restart=).
// It returns nil when sent or when n does not send, else the send error.
func (n *Notifier) WatchdogTrigger() error {
	return n.notify("WATCHDOG", "WATCHDOG=trigger")
}

// notify sends state and names verb in the error.
func (n *Notifier) notify(verb, state string) error {
	if n == nil {
		return nil
	}
	var err error
	if n.send != nil {
		err = n.send(state)
	} else {
		_, err = sddaemon.SdNotify(false, state)
	}
	if err != nil {
		return fmt.Errorf("sd_notify %s: %w", verb, err)
	}
	return nil
}

// oneLine replaces the newlines in s with spaces.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}
