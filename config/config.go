package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
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
	Pool          prefork.Config // pool settings; Program is left to the caller
	Worker        []string       // COMMAND after "--", or the file's worker key
	Exec          []string       // --exec: inetd-style command per connection
	Handler       string         // --handler: the built-in handler, "http"
	HandlerDelay  time.Duration  // --handler-delay: built-in handler's pause per request
	ControlSocket string         // --control-socket
	MetricsListen string         // --metrics-listen
	LogFormat     string         // --log-format: auto, text or journal
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
	if err := fs.Parse(args); err != nil {
		return nil, parseError(err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	src := sources{}
	if c.File != "" {
		if err := c.applyFile(fs, set, src); err != nil {
			return nil, err
		}
	}
	if fs.NArg() > 0 {
		c.Worker = fs.Args()
	}
	if err := vals.finish(c); err != nil {
		return nil, src.locate(err)
	}
	return c, src.locate(c.validate())
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
	entries, err := parseFile(c.File, f)
	if err != nil {
		return err
	}
	for _, e := range entries {
		src[e.key] = &Error{File: c.File, Line: e.line}
		if err := c.applyEntry(fs, set, e); err != nil {
			return &Error{Key: e.key, File: c.File, Line: e.line, Err: err}
		}
	}
	return nil
}

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

// Usage writes the flag list to w.
func Usage(w io.Writer) {
	fs, _ := newFlagSet(&Config{Pool: prefork.DefaultConfig(), Handler: "http", LogFormat: "auto"})
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// validate checks what the flag types cannot.
func (c *Config) validate() error {
	if err := c.Pool.Validate(); err != nil {
		var fe *prefork.FieldError
		if errors.As(err, &fe) {
			return &Error{Key: fe.Field, Err: fmt.Errorf("%v: must be %s", fe.Value, fe.Allowed)}
		}
		return err
	}
	for _, a := range c.Listen {
		if _, _, err := activation.ParseListen(a); err != nil {
			return &Error{Key: "listen", Err: err}
		}
	}
	if c.MetricsListen != "" {
		if _, _, err := activation.ParseAddr(c.MetricsListen); err != nil {
			return &Error{Key: "metrics-listen", Err: err}
		}
	}
	return c.validateWorker()
}

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
		return &Error{Key: "exec", Err: errors.New("needs accept mode dispatch or exclusive")}
	case len(c.Worker) == 0 && c.Pool.Mode == protocol.Shared:
		return &Error{Key: "accept", Err: errors.New("shared mode needs a worker COMMAND")}
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
		if _, err := exec.LookPath(p.argv[0]); err != nil {
			return &Error{Key: p.key, Err: err}
		}
	}
	return nil
}

// parseError sorts a flag package error: a bad value for a known flag is an
// *Error naming the flag (exit 78); anything else is a *UsageError.
func parseError(err error) error {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		if _, after, ok := strings.Cut(rest, " for flag -"); ok {
			name, reason, _ := strings.Cut(after, ": ")
			return &Error{Key: name, Err: fmt.Errorf("%s: %s", strings.SplitN(rest, " for flag", 2)[0], reason)}
		}
	}
	return &UsageError{Err: err}
}
