// Package notify tells systemd how actd is doing, through sd_notify, and
// nothing else.
//
// Contract:
//
//   - [Notifier] sends the sd_notify verbs (READY=1, RELOADING=1, STOPPING=1,
//     STATUS=, EXTEND_TIMEOUT_USEC=, ERRNO=, WATCHDOG=1, WATCHDOG=trigger) as
//     one datagram each to NOTIFY_SOCKET, through go-systemd's daemon package.
//     When NOTIFY_SOCKET is unset, and on a nil *Notifier, every verb is a
//     no-op that returns nil.
//   - [StatusCoalescer] takes status lines as often as the caller likes and
//     sends at most one STATUS= per period, always the latest line, none when
//     the line did not change, and the last one on Flush or when Run ends.
//   - [Watchdog] sends WATCHDOG=1 every half watchdog interval while a health
//     check passes, and nothing while it fails, so that systemd's watchdog
//     fires when the service stops making progress.
//
// Only the main process may notify: Type=notify with WatchdogSec= forces
// NotifyAccess=main. Children of actd get an environment without
// NOTIFY_SOCKET, so a notify call in a child is a no-op.
//
// The package knows nothing of the pool: callers turn their own state into
// status lines and health answers.
package notify
