package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runActdOut runs the test binary as actd with args and returns its exit
// status, stdout and stderr.
func runActdOut(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), envAsActd+"=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run()
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// TestHelpAndVersion: help and the version go to stdout with status 0, so
// `actd --help | less` works; usage writes flags with two dashes and lists
// the subcommands.
func TestHelpAndVersion(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    []string
		notWant string
	}{
		{[]string{"--help"}, []string{"usage: actd", "--max-children N", "status [--json]", "check-config FILE", "version", "help"}, "\n  -max-children"},
		{[]string{"-h"}, []string{"usage: actd", "--busy-timeout D"}, ""},
		{[]string{"help"}, []string{"usage: actd", "--listen [NAME=]ADDR"}, ""},
		{[]string{"--listen", "127.0.0.1:0", "--help"}, []string{"usage: actd"}, ""},
		{[]string{"status", "--help"}, []string{"usage: actd status", "  --json"}, "\n  -json"},
		{[]string{"--version"}, []string{"actd " + version}, ""},
		{[]string{"version"}, []string{"actd " + version}, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runActdOut(t, tc.args...)
			if code != exitOK || stderr != "" {
				t.Errorf("got status %d and stderr %q, want 0 and nothing", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("got stdout %q, want %q in it", stdout, w)
				}
			}
			if tc.notWant != "" && strings.Contains(stdout, tc.notWant) {
				t.Errorf("got stdout %q, want no %q in it", stdout, tc.notWant)
			}
		})
	}
}

// TestUnknownCommand: a bare word that is no subcommand is refused with
// status 64 (and a suggestion for a typo), never run as a worker.
func TestUnknownCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"stauts"}, []string{`unknown command "stauts": did you mean status?`, "after --"}},
		{[]string{"check-confg", "x"}, []string{"did you mean check-config?"}},
		{[]string{"verison"}, []string{"did you mean version?"}},
		{[]string{"cat"}, []string{`unknown command "cat"`, "actd [flags] -- PROGRAM"}},
		{[]string{"\xffx"}, []string{`unknown command "\xffx"`}},
		{[]string{"--listen", "127.0.0.1:0", "cat"}, []string{"unknown command cat", "-- cat"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := runActdOut(t, tc.args...)
			if code != exitUsage {
				t.Errorf("got status %d, want %d; stderr %q", code, exitUsage, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("got stderr %q, want %q in it", stderr, w)
				}
			}
		})
	}
	if code, _, stderr := runActdOut(t, "cat"); strings.Contains(stderr, "did you mean") {
		t.Errorf("got %d, %q for a word far from every subcommand, want no suggestion", code, stderr)
	}
}

// TestMaxChildrenAlone: `--max-children 1` alone runs a pool: the default
// start-children is lowered to it.
func TestMaxChildrenAlone(t *testing.T) {
	a := startActd(t, nil, "--max-children", "1")
	if body, err := a.get(); err != nil {
		t.Fatalf("got %q, %v; want an answer", body, err)
	}
	if n := len(a.status(t).Snapshot.Slots); n != 1 {
		t.Errorf("got %d slots, want 1", n)
	}
}

// TestSocketActivationNoArguments: `actd` without arguments is a usage error
// by hand but runs the built-in handler under socket activation.
func TestSocketActivationNoArguments(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "web.sock")
	socketActivate(t, "-l", sock, "-E", envAsActd+"=1", os.Args[0])
	waitFor(t, "socket", 5*time.Second, func() bool { _, err := os.Stat(sock); return err == nil })
	if body, err := httpGet("unix", sock); err != nil || !strings.HasPrefix(body, "slot=") {
		t.Errorf("got %q, %v; want slot=…", body, err)
	}
}

// TestFatalErrorsAsLines: fatal errors come out as one "actd: …" line on
// stderr, not as a structured log line, and `actd status` without a pool
// names the socket once and says what to try.
func TestFatalErrorsAsLines(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	missing := filepath.Join(t.TempDir(), "none.sock")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"listen in use", []string{"--listen", busy.Addr().String(), "--log-format", "text"}, exitOSErr, []string{"actd: ", "address already in use"}},
		{"status without a pool", []string{"status", "--control-socket", missing}, exitFailure, []string{"actd status: " + missing + ": connect: no such file", "is actd running?"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runActdOut(t, tc.args...)
			if code != tc.code {
				t.Errorf("got status %d, want %d; stderr %q", code, tc.code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("got stderr %q, want %q in it", stderr, w)
				}
			}
			if strings.Contains(stderr, "level=ERROR") {
				t.Errorf("got stderr %q, want no structured log line", stderr)
			}
			if n := strings.Count(stderr, "none.sock"); tc.code == exitFailure && n != 1 {
				t.Errorf("got the socket path %d times in %q, want once", n, stderr)
			}
		})
	}
}

// TestReloadNotesListenChange: a reload that changes listen says it needs a
// restart (log and status note) and keeps serving the old socket.
func TestReloadNotesListenChange(t *testing.T) {
	dir := t.TempDir()
	conf, ctl := filepath.Join(dir, "pool.conf"), filepath.Join(dir, "ctl.sock")
	old := filepath.Join(dir, "a.sock")
	write := func(sock string) {
		if err := os.WriteFile(conf, []byte("listen = unix:"+sock+"\nmax-children = 4\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(old)
	a := &actd{dir: dir, sock: old, ctl: ctl, stderr: &syncBuffer{}}
	a.start(t, []string{os.Args[0], "--config", conf, "--control-socket", ctl, "--log-format", "text"}, nil)
	a.waitControl(t) // a SIGHUP this early is queued until the master serves, not fatal
	write(filepath.Join(dir, "b.sock"))
	a.signal(t, syscall.SIGHUP)
	const want = "listen changed: needs a restart"
	waitFor(t, "the note", 10*time.Second, func() bool { return strings.Contains(a.status(t).Note, want) })
	if !strings.Contains(a.stderr.String(), want) {
		t.Errorf("got log %q, want a line saying %q", a.stderr, want)
	}
	if body, err := a.get(); err != nil {
		t.Errorf("old socket after the reload: got %q, %v; want an answer", body, err)
	}
}

// TestSocketModeFlag: --socket-mode gives the --listen unix: socket file
// its mode, whatever actd's umask.
func TestSocketModeFlag(t *testing.T) {
	a := startActd(t, nil, "--socket-mode", "0666")
	info, err := os.Stat(a.sock)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != 0o666 {
		t.Errorf("got mode %v, want 0666 (-rw-rw-rw-)", got)
	}
	if body, err := a.get(); err != nil {
		t.Errorf("got %q, %v; want an answer", body, err)
	}
}
