package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/actd/actd/config"
)

// runActd runs the test binary as actd with args and returns its exit status
// and stderr. An actd that runs a pool instead of refusing args is killed
// after a minute (a bound, not a speed) and fails the test.
func runActd(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), envAsActd+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Run()
	if ctx.Err() != nil {
		t.Errorf("actd %q still ran after %v, killed", args, time.Minute)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// TestBadInputExitStatus: every bad flag or config exits 78 (64 for a
// malformed command line) and names the flag or key.
func TestBadInputExitStatus(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badKey := write("badkey.conf", "# pool\nmax-children = 8\nmax-childs = 9\n")
	badValue := write("badvalue.conf", "listen = 127.0.0.1:0\n\nmin-spare = 99\n")
	long := write("long.conf", "listen = 127.0.0.1:0\nworker = /bin/cat "+strings.Repeat("x", 10<<20)+"\n")
	dup := write("dup.conf", "listen = 127.0.0.1:0\nmax-children = 4\nlisten = unix:/tmp/x.sock\nmax-children = 8\n")
	notProgram := write("hostname.conf", "listen = 127.0.0.1:0\nworker = /etc/hostname\n")
	rawKey := write("raw.conf", "max-\xff\xfe = 3\n")
	emptyDir := filepath.Join(dir, "empty")
	if err := os.Mkdir(emptyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := os.Stat(emptyDir); err != nil {
			t.Errorf("the empty directory given as --control-socket: %v, want it left alone", err)
		}
	}()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"max-children zero", []string{"--listen", "127.0.0.1:0", "--max-children", "0"}, exitConfig, []string{"max-children", "between 1 and 4096"}},
		{"max-children huge", []string{"--listen", "127.0.0.1:0", "--max-children", "5000"}, exitConfig, []string{"max-children", "4096"}},
		{"min-spare above max", []string{"--listen", "127.0.0.1:0", "--min-spare", "40"}, exitConfig, []string{"min-spare"}},
		{"max-spare below min-spare", []string{"--listen", "127.0.0.1:0", "--min-spare", "3", "--max-spare", "2"}, exitConfig, []string{"max-spare"}},
		{"accept mode", []string{"--listen", "127.0.0.1:0", "--accept", "roundrobin"}, exitConfig, []string{"accept", "dispatch, exclusive or shared"}},
		{"listen address", []string{"--listen", "nowhere"}, exitConfig, []string{"listen"}},
		{"scale period", []string{"--listen", "127.0.0.1:0", "--scale-period", "1ms"}, exitConfig, []string{"scale-period", "10ms"}},
		{"handler", []string{"--listen", "127.0.0.1:0", "--handler", "ftp"}, exitConfig, []string{"handler", "http"}},
		{"log format", []string{"--listen", "127.0.0.1:0", "--log-format", "xml"}, exitConfig, []string{"log-format"}},
		{"exec and command", []string{"--listen", "127.0.0.1:0", "--exec", "cat", "--", "cat"}, exitConfig, []string{"exec"}},
		{"recycling in shared mode", []string{"--listen", "127.0.0.1:0", "--accept", "shared", "--max-conn-per-child", "5", "--", "cat"}, exitConfig, []string{"max-conn-per-child"}},
		{"missing worker", []string{"--listen", "127.0.0.1:0", "--", "/nonexistent/worker"}, exitConfig, []string{"worker", "/nonexistent/worker"}},
		{"worker as a path, first", []string{"/nonexistent/worker", "--x"}, exitConfig, []string{`worker: "/nonexistent/worker": no such file`}},
		{"worker as a path, after flags", []string{"--listen", "127.0.0.1:0", "./nonexistent/worker"}, exitConfig, []string{`worker: "./nonexistent/worker": no such file`}},
		{"missing exec", []string{"--listen", "127.0.0.1:0", "--exec", "no-such-program-here"}, exitConfig, []string{"exec", "no-such-program-here"}},
		{"shared without command", []string{"--listen", "127.0.0.1:0", "--accept", "shared"}, exitConfig, []string{"accept", "COMMAND"}},
		{"no socket", []string{"--max-children", "4"}, exitConfig, []string{"listen", "LISTEN_FDS"}},
		{"no arguments", nil, exitUsage, []string{"nothing to run", "usage: actd", "--listen [NAME=]ADDR"}},
		{"start-children above an explicit max", []string{"--listen", "127.0.0.1:0", "--max-children", "1", "--start-children", "2"}, exitConfig, []string{"start-children", "--max-children (1)"}},
		{"duration syntax", []string{"--listen", "127.0.0.1:0", "--ping-interval", "soon"}, exitConfig, []string{"ping-interval"}},
		{"unknown flag", []string{"--max-kids", "3"}, exitUsage, []string{"max-kids", "usage"}},
		{"config unknown key", []string{"--config", badKey}, exitConfig, []string{"badkey.conf:3", "max-childs", "unknown key"}},
		{"config bad value", []string{"--config", badValue}, exitConfig, []string{"badvalue.conf:3", "min-spare"}},
		{"config missing", []string{"--config", filepath.Join(dir, "nope.conf")}, exitConfig, []string{"config", "no such file"}},
		{"check-config bad", []string{"check-config", badKey}, exitConfig, []string{"max-childs"}},
		{"config line of 10 MB", []string{"--config", long}, exitConfig, []string{"long.conf:2: worker: line longer than 64 KiB"}},
		{"int out of range", []string{"--listen", "127.0.0.1:0", "--max-children", "99999999999999999999"}, exitConfig, []string{"max-children: 99999999999999999999: must be between 1 and 4096"}},
		{"duration word", []string{"--listen", "127.0.0.1:0", "--busy-timeout", "abc"}, exitConfig, []string{`busy-timeout: "abc": want a duration like 5s`}},
		{"duplicate key", []string{"--config", dup}, exitConfig, []string{"dup.conf:4: max-children: set twice, first at line 2"}},
		{"check-config duplicate key", []string{"check-config", dup}, exitConfig, []string{"dup.conf:4: max-children"}},
		{"non-UTF-8 key quoted", []string{"check-config", rawKey}, exitConfig, []string{`"max-\xff\xfe": unknown key`}},
		{"check-config worker not a program", []string{"check-config", notProgram}, exitConfig, []string{`hostname.conf:2: worker: "/etc/hostname": not a`}},
		{"control socket a directory", []string{"--listen", "127.0.0.1:0", "--control-socket", emptyDir}, exitConfig, []string{"control-socket: " + emptyDir + " is a directory", "actd.sock"}},
		{"control socket a file", []string{"--listen", "127.0.0.1:0", "--control-socket", notProgram}, exitConfig, []string{"control-socket: " + notProgram + " exists and is not a socket"}},
		{"listen twice", []string{"--listen", "127.0.0.1:7", "--listen", "127.0.0.1:7"}, exitConfig, []string{"listen: 127.0.0.1:7 given twice: give each address once"}},
		{"listen twice, named", []string{"--listen", "unix:/tmp/x.sock", "--listen", "b=unix:/tmp/x.sock"}, exitConfig, []string{"listen: unix:/tmp/x.sock given twice", `"b=unix:/tmp/x.sock"`}},
		{"config a directory", []string{"--config", emptyDir}, exitConfig, []string{"config: " + emptyDir + " is a directory", "key = value"}},
		{"check-config a directory", []string{"check-config", emptyDir}, exitConfig, []string{"config: " + emptyDir + " is a directory"}},
		{"short -v", []string{"-v"}, exitUsage, []string{"unknown flag -v", "actd --version", "usage"}},
		{"--version after flags", []string{"--listen", "127.0.0.1:0", "--version"}, exitUsage, []string{"unknown flag --version", "actd --version (alone)"}},
		{"flag typo", []string{"--max-childen", "3"}, exitUsage, []string{"unknown flag --max-childen: did you mean --max-children?"}},
		{"status unknown flag", []string{"status", "--bogus"}, exitUsage, []string{"actd status: unknown flag --bogus", "usage: actd status [--json]", "  --control-socket PATH"}},
		{"status flag typo", []string{"status", "--jsn"}, exitUsage, []string{"did you mean --json?", "usage: actd status"}},
		{"socket mode", []string{"--listen", "127.0.0.1:0", "--socket-mode", "rw-rw----"}, exitConfig, []string{`socket-mode: "rw-rw----": want permission bits in octal`}},
		{"reload unknown flag", []string{"reload", "--bogus"}, exitUsage, []string{"actd reload: unknown flag --bogus", "usage: actd reload [--control-socket PATH] [NAME]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := runActd(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if strings.Contains(stderr, "flag provided but not defined") {
				t.Errorf("stderr %q: want no raw flag package text", stderr)
			}
		})
	}
}

func TestCheckConfigGood(t *testing.T) {
	p := filepath.Join(t.TempDir(), "good.conf")
	os.WriteFile(p, []byte("listen = 127.0.0.1:0\nmax-children = 8\nworker = /bin/cat \"-u\"\n"), 0o600)
	if code, stderr := runActd(t, "check-config", p); code != 0 {
		t.Errorf("check-config good file: exit %d, stderr %q", code, stderr)
	}
}

// TestControlSocketNeverRemoved: at start actd removes only a stale socket
// at the control socket's path (the default one under RUNTIME_DIRECTORY
// too, which the configuration check does not see): a directory, even an
// empty one, or a file there stops it with a configuration error (exit 78)
// and stays.
func TestControlSocketNeverRemoved(t *testing.T) {
	dir := t.TempDir()
	empty, file := filepath.Join(dir, "empty"), filepath.Join(dir, "file")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{empty, "is a directory"},
		{file, "exists and is not a socket"},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			ln, err := listenControl(tc.path)
			if err == nil {
				ln.Close()
			}
			var ce *config.Error
			if !errors.As(err, &ce) || ce.Key != "control-socket" || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want a *config.Error for control-socket saying %q", err, tc.want)
			}
			if _, err := os.Stat(tc.path); err != nil {
				t.Errorf("after listenControl: %v, want %s left alone", err, tc.path)
			}
		})
	}
}
