package config

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/actd/actd/protocol"

	"github.com/actd/actd/activation"
	"github.com/actd/actd/prefork"
)

// Config is everything `actd run` needs.
type Config struct {
	File          string         // --config
	Listen        []string       // --listen, used when systemd passes no socket
	SocketMode    fs.FileMode    // --socket-mode of --listen unix: files; 0: the umask's
	Pool          prefork.Config // pool settings; Program is left to the caller
	Worker        []string       // COMMAND after "--", or the file's worker key
	Exec          []string       // --exec: inetd-style command per connection
	Handler       string         // --handler: the built-in handler, "http"
	HandlerDelay  time.Duration  // --handler-delay: built-in handler's pause per request
	HandlerFiles  string         // --handler-files: the directory the built-in handler serves as /files/NAME
	ControlSocket string         // --control-socket
	MetricsListen string         // --metrics-listen
	LogFormat     string         // --log-format: auto, text or journal
	TLSCert       []string       // --tls-cert [NAME=]FILE, repeatable; loaded into Pool.TLS (tls.go)
	TLSKey        []string       // --tls-key [NAME=]FILE, repeatable
	StatusPath    string         // --status-path: the status page on MetricsListen; "" none
	ControlGroup  string         // --control-group: the control socket's group (mode 0660); "" none
}

// UsageError is a command line that cannot be parsed: an unknown flag or a
// missing value (exit status 64, not 78).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Parse reads the command line args (without the program name) and the
// config file it names, and validates the result. It returns a *UsageError
// for a malformed command line and an *Error for a bad setting.
func Parse(args []string) (*Config, error) {
	c := &Config{Pool: prefork.DefaultConfig(), Handler: "http", LogFormat: "auto"}
	fs, vals := newFlagSet(c)
	if err := ParseFlags(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		if err := checkCommand(args, fs.Args()); err != nil {
			return nil, err
		}
	}
	src := sources{}
	if c.File != "" {
		if err := c.applyFile(fs, given(fs), src); err != nil {
			return nil, err
		}
	}
	if fs.NArg() > 0 {
		c.Worker = fs.Args()
	}
	if err := vals.finish(c); err != nil {
		return nil, src.locate(err)
	}
	if !given(fs)["start-children"] {
		c.Pool.StartChildren = min(c.Pool.StartChildren, c.Pool.MaxChildren)
	}
	return c, src.locate(c.validate(vals.over))
}

// given returns the flags set on the command line or, once applied, by the
// config file.
func given(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// checkCommand applies the rule for a worker COMMAND on the command line:
// it follows "--", or its first word is a path (has a "/"). A bare word is
// refused, so a mistyped subcommand ("stauts") or a program name that may
// one day be a subcommand is never run as a worker. args is the whole
// command line, rest what the flags left. It returns nil or a *UsageError.
func checkCommand(args, rest []string) error {
	dashed := len(args) > len(rest) && args[len(args)-len(rest)-1] == "--"
	if dashed || strings.Contains(rest[0], "/") {
		return nil
	}
	w := quoteKey(rest[0])
	return &UsageError{Err: fmt.Errorf("unknown command %s: a worker program goes after -- (actd [flags] -- %s ...) or is a path (./%s)", w, w, w)}
}

// sources remembers the file line each key came from.
type sources map[string]*Error

func (s sources) locate(err error) error {
	var e *Error
	if errors.As(err, &e) && s[e.Key] != nil {
		e.File, e.Line = s[e.Key].File, s[e.Key].Line
	}
	return err
}

// applyFile sets every key of c.File that the command line did not set.
func (c *Config) applyFile(fs *flag.FlagSet, set map[string]bool, src sources) error {
	f, err := os.Open(c.File)
	if err != nil {
		return &Error{Key: "config", Err: err}
	}
	defer f.Close()
	if err := checkConfigFile(c.File, f); err != nil {
		return err
	}
	entries, err := parseFile(c.File, f)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if first := src[e.key]; first != nil && !repeatable[e.key] {
			return &Error{Key: e.key, File: c.File, Line: e.line, Err: fmt.Errorf("set twice, first at line %d: keep one", first.Line)}
		}
		src[e.key] = &Error{File: c.File, Line: e.line}
		if err := c.applyEntry(fs, set, e); err != nil {
			return &Error{Key: e.key, File: c.File, Line: e.line, Err: err}
		}
	}
	return nil
}

// repeatable lists the keys a config file may give more than once, one
// value per line.
var repeatable = map[string]bool{"listen": true, proxyKey: true, "tls-cert": true, "tls-key": true}

func (c *Config) applyEntry(fs *flag.FlagSet, set map[string]bool, e entry) error {
	switch {
	case e.key == "worker":
		w, err := splitWords(e.value)
		c.Worker = w
		return err
	case e.key == "config":
		return errors.New("not allowed in a config file")
	case fs.Lookup(e.key) == nil:
		return errors.New("unknown key")
	case set[e.key]:
		return nil // the command line wins
	}
	return fs.Set(e.key, e.value)
}

// validate checks what the flag types cannot. over holds the int flags
// given a number too large for an int, by name, as typed.
func (c *Config) validate(over map[string]string) error {
	if err := c.Pool.Validate(); err != nil {
		var fe *prefork.FieldError
		if errors.As(err, &fe) {
			value := fmt.Sprint(fe.Value)
			if typed, ok := over[fe.Field]; ok {
				value = typed
			}
			return &Error{Key: fe.Field, Err: fmt.Errorf("%s: must be %s", value, fe.Allowed)}
		}
		return err
	}
	if names := slices.Sorted(maps.Keys(over)); len(names) > 0 {
		return &Error{Key: names[0], Err: fmt.Errorf("%s: must be at most %d", over[names[0]], math.MaxInt)}
	}
	if err := checkListens(c.Listen); err != nil {
		return err
	}
	if err := checkProxyNames(c); err != nil {
		return err
	}
	if err := CheckControlSocket(c.ControlSocket); err != nil {
		return err
	}
	if err := c.validateOperator(); err != nil { // operator.go
		return err
	}
	if c.MetricsListen != "" {
		if _, _, err := activation.ParseAddr(c.MetricsListen); err != nil {
			return &Error{Key: "metrics-listen", Err: err}
		}
	}
	if err := c.validateWorker(); err != nil {
		return err
	}
	return c.loadTLS()
}

// errNoForkBuiltIn refuses preload for the children actd runs itself: they
// are Go, which cannot fork (a worker COMMAND's zygote says at its hello
// whether it can; prefork abandons a reload into one that cannot).
var errNoForkBuiltIn = errors.New("true: must be false for the built-in handler and --exec: they run in Go, " +
	"whose zygote would say hello without the fork capability; drop --preload, or run a worker that can fork " +
	"(python3 -m actd.wsgi, plackup -s Actd)")

func (c *Config) validateWorker() error {
	switch {
	case len(c.Exec) > 0 && len(c.Worker) > 0:
		return &Error{Key: "exec", Err: errors.New("give --exec or a worker COMMAND, not both")}
	case c.Handler != "http":
		return &Error{Key: "handler", Err: fmt.Errorf("%q: must be http", c.Handler)}
	case c.HandlerDelay < 0 || c.HandlerDelay > time.Minute:
		return &Error{Key: "handler-delay", Err: fmt.Errorf("%v: must be between 0 and 1m", c.HandlerDelay)}
	case c.LogFormat != "auto" && c.LogFormat != "text" && c.LogFormat != "journal":
		return &Error{Key: "log-format", Err: fmt.Errorf("%q: must be auto, text or journal", c.LogFormat)}
	case len(c.Worker) == 0 && c.Pool.Mode == protocol.Shared && len(c.Exec) > 0:
		return &Error{Key: "exec", Err: errors.New("needs accept mode " + protocol.ModeNames(protocol.Mode.SpeaksProtocol))}
	case len(c.Worker) == 0 && c.Pool.Mode == protocol.Shared:
		return &Error{Key: "accept", Err: errors.New("shared mode needs a worker COMMAND")}
	case len(c.Worker) == 0 && c.Pool.Preload:
		return &Error{Key: "preload", Err: errNoForkBuiltIn}
	}
	return c.findPrograms()
}

// findPrograms checks that the worker and --exec programs exist now: a
// missing program is a configuration error, not a crash loop.
func (c *Config) findPrograms() error {
	for _, p := range []struct {
		key  string
		argv []string
	}{{"worker", c.Worker}, {"exec", c.Exec}} {
		if len(p.argv) == 0 {
			continue
		}
		path, err := exec.LookPath(p.argv[0])
		if err != nil {
			return &Error{Key: p.key, Err: fmt.Errorf("%q: %w", p.argv[0], lookReason(err))}
		}
		if err := checkProgram(path); err != nil {
			return &Error{Key: p.key, Err: err}
		}
	}
	return nil
}

// lookReason is a LookPath error without the name, which the caller quotes
// once: "no such file or directory", "permission denied", "executable file
// not found in $PATH".
func lookReason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	return err
}

// checkProgram returns an error if the executable file at path (LookPath
// checked the x bit) is neither an ELF binary nor a #! script, so exec would
// fail with ENOEXEC. A file actd cannot read is let through: exec needs only
// the x bit.
func checkProgram(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	if bytes.HasPrefix(head[:n], []byte("\x7fELF")) || bytes.HasPrefix(head[:n], []byte("#!")) {
		return nil
	}
	return fmt.Errorf("%q: not a program (want an ELF binary or a #! script)", path)
}

// ParseFlags parses args with fs (which uses flag.ContinueOnError) and
// returns nil, flag.ErrHelp for -h or --help, an *Error naming the flag for
// a bad value, or a *UsageError saying what is wrong and, for an unknown
// flag, what was probably meant. actd's subcommands parse their flags with
// it too.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return parseError(fs, err)
	}
	return nil
}

// parseError sorts a flag package error: a bad value for a known flag is an
// *Error naming the flag (exit 78); anything else is a *UsageError, an
// unknown flag with what was probably meant (hint.go).
// The flag package does not wrap its errors, so this reads their text; the
// values' own errors (intValue, durationValue) already quote the value.
func parseError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		if _, after, ok := strings.Cut(rest, " for flag -"); ok {
			name, reason, _ := strings.Cut(after, ": ")
			return &Error{Key: name, Err: errors.New(reason)}
		}
	}
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return unknownFlag(fs, name)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return &UsageError{Err: fmt.Errorf("flag --%s needs a value", quoteKey(name))}
	}
	return &UsageError{Err: err}
}
