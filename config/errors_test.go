package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/actd/actd/prefork"
)

// TestParseErrorMessages: each bad input gives an *Error (or *UsageError)
// whose text says where, which key and what is wanted.
func TestParseErrorMessages(t *testing.T) {
	long := "max-children = " + strings.Repeat("1", 10<<20) + "\n"
	script := filepath.Join(t.TempDir(), "script")
	plain := filepath.Join(t.TempDir(), "plain")
	for _, f := range []struct {
		path string
		mode os.FileMode
	}{{script, 0o755}, {plain, 0o644}} {
		if err := os.WriteFile(f.path, []byte("echo hi\n"), f.mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, file string
		args       []string
		usage      bool
		want       []string
		notWant    string
	}{
		{"long line", "# x\n" + long, nil, false, []string{"pool.conf:2: max-children: line longer than 64 KiB"}, "token too long"},
		{"long line without key", strings.Repeat("x", 100<<10), nil, false, []string{"pool.conf:1: line longer than 64 KiB"}, ""},
		{"duplicate key", "max-children = 4\n\nmax-children = 8\n", nil, false, []string{"pool.conf:3: max-children: set twice, first at line 1"}, ""},
		{"non-UTF-8 key", "max-\xff\xfe = 3\n", nil, false, []string{`"max-\xff\xfe": unknown key`}, "\xff"},
		{"int too large", "", []string{"--max-children", "99999999999999999999"}, false, []string{"max-children: 99999999999999999999: must be between 1 and 4096"}, ""},
		{"int too small", "", []string{"--min-spare", "-99999999999999999999"}, false, []string{"min-spare: -99999999999999999999: must be between 0 and"}, ""},
		{"int too large, no upper bound", "", []string{"--max-conn-per-child", "99999999999999999999"}, false, []string{"max-conn-per-child: 99999999999999999999: must be at most"}, ""},
		{"int too large in file", "max-spare = 99999999999999999999\n", nil, false, []string{"pool.conf:1: max-spare: 99999999999999999999: must be at most"}, ""},
		{"not a number", "", []string{"--max-children", "lots"}, false, []string{`max-children: "lots": want a whole number like 8`}, ""},
		{"not a duration", "", []string{"--busy-timeout", "abc"}, false, []string{`busy-timeout: "abc": want a duration like 5s`}, ""},
		{"not a duration in file", "busy-timeout = abc\n", nil, false, []string{`pool.conf:1: busy-timeout: "abc": want a duration like 5s`}, ""},
		{"explicit start-children above max", "", []string{"--max-children", "1", "--start-children", "2"}, false, []string{"start-children: 2: must be between 1 and --max-children (1)"}, ""},
		{"start-children from file above max", "start-children = 3\n", []string{"--max-children", "2"}, false, []string{"pool.conf:1: start-children: 3"}, ""},
		{"worker /etc/hostname", "worker = /etc/hostname\n", nil, false, []string{`pool.conf:1: worker: "/etc/hostname": not a`}, ""},
		{"worker not executable", "worker = " + plain + "\n", nil, false, []string{"worker: \"" + plain + "\": permission denied"}, ""},
		{"worker not a program", "worker = " + script + "\n", nil, false, []string{"worker: \"" + script + "\": not a program"}, ""},
		{"unknown flag", "", []string{"--max-kids", "3"}, true, []string{"unknown flag --max-kids"}, ""},
		{"unknown non-UTF-8 flag", "", []string{"--max-\xff"}, true, []string{`unknown flag --"max-\xff"`}, "\xff"},
		{"missing value", "", []string{"--listen"}, true, []string{"flag --listen needs a value"}, ""},
		{"raw bytes in a worker path", "", []string{"--", "/\xff"}, false, []string{`worker: "/\xff": no such file or directory`}, "\xff"},
		{"listen twice", "", []string{"--listen", "[::1]:80", "--listen", "[::1]:80"}, false, []string{"listen: [::1]:80 given twice: give each address once"}, ""},
		{"control socket a directory", "", []string{"--control-socket", os.TempDir()}, false, []string{"control-socket: " + os.TempDir() + " is a directory"}, ""},
		{"short flag", "", []string{"-v"}, true, []string{"unknown flag -v: for the version run actd --version"}, ""},
		{"flag typo", "", []string{"--min-spair", "2"}, true, []string{"unknown flag --min-spair: did you mean --min-spare?"}, ""},
		{"bare word", "", []string{"--max-children", "3", "stauts"}, true, []string{`unknown command stauts: a worker program goes after --`}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--listen", "127.0.0.1:0", "--config", writeFile(t, tc.file)}, tc.args...)
			_, err := Parse(args)
			var ue *UsageError
			var e *Error
			switch {
			case tc.usage && !errors.As(err, &ue):
				t.Fatalf("got error %v, want a *UsageError", err)
			case !tc.usage && !errors.As(err, &e):
				t.Fatalf("got error %v, want an *Error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to contain %q", err, w)
				}
			}
			if tc.notWant != "" && strings.Contains(err.Error(), tc.notWant) {
				t.Errorf("got %q, want no %q in it", err, tc.notWant)
			}
		})
	}
}

// TestStartChildrenClamped: a start-children left at its default is lowered
// to max-children, as Apache lowers StartServers to MaxRequestWorkers.
func TestStartChildrenClamped(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"max-children 1", []string{"--max-children", "1"}, 1},
		{"max-children above default", []string{"--max-children", "8"}, 2},
		{"explicit and fitting", []string{"--max-children", "8", "--start-children", "5"}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(append([]string{"--listen", "127.0.0.1:0"}, tc.args...))
			if err != nil {
				t.Fatal(err)
			}
			if c.Pool.StartChildren != tc.want {
				t.Errorf("got start-children %d, want %d", c.Pool.StartChildren, tc.want)
			}
		})
	}
}

// TestWorkerCommandRule: a worker COMMAND on the command line follows -- or
// is a path; a bare word is refused.
func TestWorkerCommandRule(t *testing.T) {
	rel := relativeTo(t, "/bin/cat")
	for _, tc := range []struct {
		name string
		args []string
		want []string // nil: refused with a *UsageError
	}{
		{"after dashes", []string{"--", "cat", "-u"}, []string{"cat", "-u"}},
		{"absolute path", []string{"/bin/cat", "-u"}, []string{"/bin/cat", "-u"}},
		{"relative path", []string{"--max-children", "3", rel}, []string{rel}},
		{"bare word", []string{"cat"}, nil},
		{"bare word after flags", []string{"--max-children", "3", "cat", "--", "x"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(append([]string{"--listen", "127.0.0.1:0"}, tc.args...))
			var ue *UsageError
			switch {
			case tc.want == nil && !errors.As(err, &ue):
				t.Errorf("got %v, want a *UsageError", err)
			case tc.want != nil && err != nil:
				t.Errorf("got error %v, want worker %q", err, tc.want)
			case tc.want != nil && !reflect.DeepEqual(c.Worker, tc.want):
				t.Errorf("got worker %q, want %q", c.Worker, tc.want)
			}
		})
	}
}

// relativeTo returns path relative to the working directory, which holds at
// any checkout depth.
func relativeTo(t *testing.T, path string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, path)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// TestKeepStartOnly: a reload reports the settings it cannot apply and
// keeps their running values.
func TestKeepStartOnly(t *testing.T) {
	running := &Config{Listen: []string{"127.0.0.1:80"}, ControlSocket: "/run/a", LogFormat: "auto"}
	for _, tc := range []struct {
		name string
		next Config
		want []string
	}{
		{"same", Config{Listen: []string{"127.0.0.1:80"}, ControlSocket: "/run/a", LogFormat: "auto"}, nil},
		{"listen", Config{Listen: []string{"127.0.0.1:81"}, ControlSocket: "/run/a", LogFormat: "auto"}, []string{"listen"}},
		{"listen added, metrics, log", Config{Listen: []string{"127.0.0.1:80", "unix:/x"}, ControlSocket: "/run/a", MetricsListen: ":9", LogFormat: "text"},
			[]string{"listen", "metrics-listen", "log-format"}},
		{"hold-body", Config{Listen: []string{"127.0.0.1:80"}, ControlSocket: "/run/a", LogFormat: "auto", Pool: prefork.Config{HoldBody: 1 << 20}},
			[]string{"hold-body"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := tc.next
			if got := KeepStartOnly(running, &next); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if !reflect.DeepEqual(next.Listen, running.Listen) || next.LogFormat != running.LogFormat || next.MetricsListen != running.MetricsListen ||
				next.Pool.HoldBody != running.Pool.HoldBody {
				t.Errorf("got next %+v, want the running sockets, log format and hold-body kept", next)
			}
		})
	}
}
