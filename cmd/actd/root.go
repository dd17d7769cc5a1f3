package main

import (
	"fmt"
	"io"
)

// rootWarning returns the warning for a master started by hand as root
// (euid 0, and neither INVOCATION_ID nor LISTEN_FDS from systemd, read with
// getenv): its children run as root too, and actd has no option to drop
// privileges. It returns "" otherwise: under systemd the unit chose the
// user (the shipped units use DynamicUser=).
func rootWarning(euid int, getenv func(string) string) string {
	if euid != 0 || getenv("INVOCATION_ID") != "" || getenv("LISTEN_FDS") != "" {
		return ""
	}
	return "running as root outside systemd: the children run as root too; " +
		"start actd as the user the workers should run as (runuser -u USER -- actd ...), or from a unit with User= or DynamicUser="
}

// warnRoot writes rootWarning, if any, to w as one "actd: warning: …"
// line: a person at a terminal reads it, as they read actd's fatal errors;
// it is not a log event.
func warnRoot(w io.Writer, euid int, getenv func(string) string) {
	if msg := rootWarning(euid, getenv); msg != "" {
		fmt.Fprintln(w, "actd: warning:", msg)
	}
}
