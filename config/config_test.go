package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/actd/actd/protocol"
)

func TestSplitWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  bool
	}{
		{"", nil, false},
		{"/bin/cat", []string{"/bin/cat"}, false},
		{"  prog  -a\tb ", []string{"prog", "-a", "b"}, false},
		{`prog "two words" 'single $x'`, []string{"prog", "two words", "single $x"}, false},
		{`prog "say \"hi\"" a\b`, []string{"prog", `say "hi"`, `a\b`}, false},
		{`prog ""`, []string{"prog", ""}, false},
		{`prog "open`, nil, true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := splitWords(tc.in)
			if (err != nil) != tc.err || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("splitWords(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.err)
			}
		})
	}
}

func writeFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pool.conf")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// parseCase parses a command line of --listen, --config FILE (a file
// holding text) and args. With wantErr empty it returns the config, failing
// the test on an error; otherwise it checks that the error is an *Error
// containing wantErr and returns nil.
func parseCase(t *testing.T, text string, args []string, wantErr string) *Config {
	t.Helper()
	c, err := Parse(append([]string{"--listen", "127.0.0.1:0", "--config", writeFile(t, text)}, args...))
	if wantErr == "" {
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(err.Error(), wantErr) {
		t.Fatalf("got error %v, want an *Error containing %q", err, wantErr)
	}
	return nil
}

func TestParseFileAndFlags(t *testing.T) {
	file := writeFile(t, `# a pool
listen = 127.0.0.1:8080
listen = unix:/run/x.sock
accept = exclusive
max-children = 64
scale-period = 250ms
worker = /bin/sh -c "exit 0" "my pool"
`)
	c, err := Parse([]string{"--config", file, "--max-children", "16"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"listen repeats", c.Listen, []string{"127.0.0.1:8080", "unix:/run/x.sock"}},
		{"accept", c.Pool.Mode, protocol.Exclusive},
		{"command line wins", c.Pool.MaxChildren, 16},
		{"duration", c.Pool.ScalePeriod, 250 * time.Millisecond},
		{"worker split", c.Worker, []string{"/bin/sh", "-c", "exit 0", "my pool"}},
		{"default kept", c.Pool.PingInterval, 5 * time.Second},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestParseCommandAfterDashes(t *testing.T) {
	c, err := Parse([]string{"--listen", "127.0.0.1:0", "--", "python3", "w.py", "--x"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"python3", "w.py", "--x"}; !reflect.DeepEqual(c.Worker, want) {
		t.Errorf("Worker = %q, want %q", c.Worker, want)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		args       []string
		key        string
		line       int
		usage      bool
	}{
		{"unknown key", "max-childs = 3\n", nil, "max-childs", 1, false},
		{"no equals", "\n\nmax-children 3\n", nil, "", 3, false},
		{"bad int", "max-children = lots\n", nil, "max-children", 1, false},
		{"range from file", "min-spare = 1\nmax-spare = 0\n", nil, "max-spare", 2, false},
		{"config in config", "config = /etc/x\n", nil, "config", 1, false},
		{"unknown flag", "", []string{"--nope"}, "", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--config", writeFile(t, tc.file)}, tc.args...)
			_, err := Parse(args)
			var ue *UsageError
			if tc.usage {
				if !errors.As(err, &ue) {
					t.Fatalf("error %v, want a *UsageError", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Key != tc.key || e.Line != tc.line {
				t.Fatalf("error %#v, want *Error with key %q at line %d", err, tc.key, tc.line)
			}
		})
	}
}
