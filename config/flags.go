package config

import (
	"flag"
	"io"

	"github.com/actd/actd/protocol"
)

// listFlag is a repeatable string flag.
type listFlag struct{ list *[]string }

func (f listFlag) String() string {
	if f.list == nil {
		return ""
	}
	return joinWords(*f.list)
}

func (f listFlag) Set(s string) error {
	*f.list = append(*f.list, s)
	return nil
}

func joinWords(w []string) string {
	s := ""
	for i, x := range w {
		if i > 0 {
			s += " "
		}
		s += x
	}
	return s
}

// rawValues are flags parsed as strings and converted in finish.
type rawValues struct {
	accept string
	exec   string
}

// newFlagSet declares every flag of actd run, bound to c.
func newFlagSet(c *Config) (*flag.FlagSet, *rawValues) {
	fs := flag.NewFlagSet("actd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	v := &rawValues{accept: "dispatch"}
	p := &c.Pool
	fs.StringVar(&c.File, "config", "", "read settings from `FILE` (key = value lines)")
	fs.Var(listFlag{&c.Listen}, "listen", "listen on `[NAME=]ADDR` (host:port, [v6]:port, unix:/path) when systemd passes no socket; repeatable")
	fs.StringVar(&v.accept, "accept", v.accept, "accept `MODE`: dispatch, exclusive or shared")
	fs.StringVar(&v.exec, "exec", "", "inetd style: run `COMMAND` per connection, the connection as stdin/stdout")
	fs.StringVar(&c.Handler, "handler", c.Handler, "built-in handler `NAME` used without COMMAND or --exec: http")
	fs.DurationVar(&c.HandlerDelay, "handler-delay", 0, "built-in handler waits this long per request")
	fs.IntVar(&p.MinChildren, "min-children", p.MinChildren, "never fewer children than `N`")
	fs.IntVar(&p.MaxChildren, "max-children", p.MaxChildren, "never more children than `N` (at most 4096)")
	fs.IntVar(&p.MinSpare, "min-spare", p.MinSpare, "start children while fewer than `N` are idle")
	fs.IntVar(&p.MaxSpare, "max-spare", p.MaxSpare, "retire children while more than `N` are idle")
	fs.IntVar(&p.StartChildren, "start-children", p.StartChildren, "children started at once")
	fs.DurationVar(&p.ScalePeriod, "scale-period", p.ScalePeriod, "how often the pool grows or shrinks")
	fs.IntVar(&p.MaxConnPerChild, "max-conn-per-child", 0, "recycle a child after about `N` connections (0: never)")
	fs.DurationVar(&p.PingInterval, "ping-interval", p.PingInterval, "ping idle children this often")
	fs.DurationVar(&p.PingTimeout, "ping-timeout", p.PingTimeout, "kill a child that does not answer a ping or an order this fast")
	fs.DurationVar(&p.StartTimeout, "start-timeout", p.StartTimeout, "kill a child that does not say hello this fast")
	fs.DurationVar(&p.BusyTimeout, "busy-timeout", 0, "SIGQUIT a child busy with one connection this long (0: never)")
	fs.DurationVar(&p.BusyKillGrace, "busy-kill-grace", p.BusyKillGrace, "SIGKILL this long after the SIGQUIT")
	fs.DurationVar(&p.GracefulTimeout, "graceful-timeout", p.GracefulTimeout, "on stop, wait this long for busy children")
	fs.StringVar(&c.ControlSocket, "control-socket", "", "serve `PATH` for actd status (default $RUNTIME_DIRECTORY/control.sock)")
	fs.StringVar(&c.MetricsListen, "metrics-listen", "", "serve Prometheus metrics on `ADDR`")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "log as auto, text or journal")
	return fs, v
}

// finish converts the string-typed flags.
func (v *rawValues) finish(c *Config) error {
	m, err := protocol.ParseMode(v.accept)
	if err != nil {
		return &Error{Key: "accept", Err: err}
	}
	c.Pool.Mode = m
	if v.exec != "" {
		if c.Exec, err = splitWords(v.exec); err != nil {
			return &Error{Key: "exec", Err: err}
		}
	}
	return nil
}
