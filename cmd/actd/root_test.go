package main

import (
	"os"
	"strings"
	"testing"
)

// TestRootWarning: root started by hand is warned that its children run as
// root; under systemd (INVOCATION_ID, or socket activation) or as another
// user, nothing.
func TestRootWarning(t *testing.T) {
	for _, tc := range []struct {
		name string
		euid int
		env  map[string]string
		want bool
	}{
		{"root by hand", 0, nil, true},
		{"root in a unit", 0, map[string]string{"INVOCATION_ID": "abc"}, false},
		{"root, socket activated", 0, map[string]string{"LISTEN_FDS": "1"}, false},
		{"a user by hand", 1000, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := rootWarning(tc.euid, func(k string) string { return tc.env[k] })
			if (got != "") != tc.want {
				t.Errorf("got %q, want a warning: %v", got, tc.want)
			}
			if tc.want && (!strings.Contains(got, "children run as root") || !strings.Contains(got, "User=")) {
				t.Errorf("got %q, want it to say the children run as root and what to do", got)
			}
		})
	}
}

// TestRootWarningLogged: a real actd started by hand as root logs the
// warning once at start.
func TestRootWarningLogged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the warning is for a master run as root")
	}
	t.Setenv("INVOCATION_ID", "")
	a := startActd(t, nil)
	if n := strings.Count(a.stderr.String(), "children run as root"); n != 1 {
		t.Errorf("got the warning %d times in %q, want once", n, a.stderr.String())
	}
}

// withoutRootWarning returns stderr without the line rootWarning prints
// first when the tests run as root outside systemd.
func withoutRootWarning(stderr string) string {
	if first, rest, ok := strings.Cut(stderr, "\n"); ok && strings.HasPrefix(first, "actd: warning: running as root") {
		return rest
	}
	return stderr
}
