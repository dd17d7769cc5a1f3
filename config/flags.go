package config

import (
	"flag"
	"io"
	"time"

	"github.com/actd/actd/prefork/acceptfilter"
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
	filter string
	exec   string
	over   map[string]string // int flags too large for an int: name to text
}

// newFlagSet declares every flag of actd run, bound to c.
func newFlagSet(c *Config) (*flag.FlagSet, *rawValues) {
	fs := flag.NewFlagSet("actd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	v := &rawValues{accept: "dispatch", filter: "none", over: map[string]string{}}
	p := &c.Pool
	intVar := func(ptr *int, name string, def int, usage string) {
		*ptr = def
		fs.Var(intValue{p: ptr, name: name, over: v.over}, name, usage)
	}
	durationVar := func(ptr *time.Duration, name string, def time.Duration, usage string) {
		*ptr = def
		fs.Var(durationValue{ptr}, name, usage)
	}
	fs.StringVar(&c.File, "config", "", "read settings from `FILE` (key = value lines)")
	fs.Var(listFlag{&c.Listen}, "listen", "listen on `[NAME=]ADDR` (NAME=: the socket's LISTEN_FDNAMES name; ADDR: host:port, [v6]:port, unix:/path) when systemd passes no socket; repeatable")
	fs.Var(modeValue{&c.SocketMode}, "socket-mode", "permission bits `MODE` of every --listen unix: socket file, in octal: 0660 lets its group connect (default: the umask's; under systemd: the socket unit's SocketMode=)")
	fs.StringVar(&v.accept, "accept", v.accept, "`MODE` is who accepts: "+protocol.ModeNames(nil))
	fs.StringVar(&v.exec, "exec", "", "inetd style: run `COMMAND` per connection, the connection as stdin/stdout")
	fs.StringVar(&c.Handler, "handler", c.Handler, "`NAME` of the built-in handler run without COMMAND or --exec: http")
	durationVar(&c.HandlerDelay, "handler-delay", 0, "built-in handler waits `D` per request")
	fs.StringVar(&c.HandlerFiles, "handler-files", "", "built-in handler serves the files of `DIR` as /files/NAME")
	intVar(&p.MinChildren, "min-children", p.MinChildren, "never fewer children than `N`")
	intVar(&p.MaxChildren, "max-children", p.MaxChildren, "never more than `N` children, 1 to 4096")
	intVar(&p.MinSpare, "min-spare", p.MinSpare, "start children while fewer than `N` are idle")
	intVar(&p.MaxSpare, "max-spare", p.MaxSpare, "retire children while more than `N` are idle")
	intVar(&p.StartChildren, "start-children", p.StartChildren, "start `N` children at start and on reload (lowered to --max-children unless given)")
	durationVar(&p.ScalePeriod, "scale-period", p.ScalePeriod, "the pool grows or shrinks every `D`")
	intVar(&p.MaxConnPerChild, "max-conn-per-child", 0, "recycle a child after about `N` connections (0: never)")
	durationVar(&p.PingInterval, "ping-interval", p.PingInterval, "ping an idle child not heard from for `D`")
	durationVar(&p.PingTimeout, "ping-timeout", p.PingTimeout, "kill a child that does not answer a ping or an order within `D`")
	durationVar(&p.StartTimeout, "start-timeout", p.StartTimeout, "kill a new child that has not said hello and become idle within `D` of its start")
	durationVar(&p.BusyTimeout, "busy-timeout", 0, "SIGQUIT a child busy with one connection for `D` (0: never)")
	durationVar(&p.SlowRequest, "slow-request", 0, "log a child busy with one connection for longer than `D` (0: never)")
	durationVar(&p.BusyKillGrace, "busy-kill-grace", p.BusyKillGrace, "SIGKILL it `D` after the SIGQUIT")
	durationVar(&p.GracefulTimeout, "graceful-timeout", p.GracefulTimeout, "on stop, wait `D` for busy children")
	fs.Var(sizeValue{&p.MaxChildMemory}, "max-child-memory", "recycle a child whose resident memory exceeds `SIZE` (K, M, G; 0: never)")
	fs.Var(sizeValue{&p.ChildMemoryMax}, "child-memory-max", "each child's cgroup memory.max, where the unit delegates its cgroup: `SIZE` (K, M, G; 0: none)")
	fs.Var(boolValue{&p.Preload}, "preload", "load the application once in a zygote and fork children from it (workers that can fork: python3 -m actd.wsgi, plackup -s Actd)")
	fs.StringVar(&c.ControlSocket, "control-socket", "", "serve `PATH` for actd status (default $RUNTIME_DIRECTORY/control.sock)")
	fs.StringVar(&c.MetricsListen, "metrics-listen", "", "serve Prometheus metrics on `ADDR`")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "`FORMAT` of the log: auto, text or journal")
	fs.StringVar(&v.filter, "accept-filter", v.filter, "`FILTER` a connection passes before a child gets it: none, data (bytes came) or http (a request head came); the master holds it until then")
	durationVar(&p.HoldTimeout, "hold-timeout", p.HoldTimeout, "close a held connection not ready within `D` (http: 408 first)")
	fs.Var(sizeValue{&p.HoldBody}, "hold-body", "http filter: hold a request until `SIZE` bytes of its body are in (K, M, G; 0: hand it over with its head)")
	intVar(&p.MaxHeld, "max-held", p.MaxHeld, "hold at most `N` connections, 0 for what the fd limit allows (at most 16384); at the limit, shed the oldest not ready")
	fs.Var(sizeValue{&p.OffloadMax}, "offload-max", "under an accept filter, the master finishes responses of up to `SIZE` that clients read slowly (K, M, G; 0: never)")
	fs.Var(sizeValue{&p.OffloadTotal}, "offload-total", "the responses the master finishes hold at most `SIZE` of data in all; beyond it children write them (K, M, G)")
	fs.Var(proxyFromValue{&p.ProxyFrom}, proxyKey, "connections on the socket NAME (every socket without NAME=) from `[NAME=]CIDR` must start with a PROXY protocol v1 or v2 header, which gives the client's address; repeatable")
	durationVar(&p.SendTimeout, "send-timeout", p.SendTimeout, "close a connection whose response the master finishes once its client takes nothing for `D`")
	fs.Var(listFlag{&c.TLSCert}, "tls-cert", "children terminate TLS with the certificate chain in PEM `[NAME=]FILE` on listener NAME, without NAME= on every listener; repeatable")
	fs.Var(listFlag{&c.TLSKey}, "tls-key", "the private key in PEM `[NAME=]FILE` of --tls-cert's certificate for NAME; repeatable")
	addOperatorFlags(fs, c) // operator.go
	return fs, v
}

// finish converts the string-typed flags.
func (v *rawValues) finish(c *Config) error {
	m, err := protocol.ParseMode(v.accept)
	if err != nil {
		return &Error{Key: "accept", Err: err}
	}
	c.Pool.Mode = m
	if c.Pool.Filter, err = acceptfilter.Parse(v.filter); err != nil {
		return &Error{Key: "accept-filter", Err: err}
	}
	if v.exec != "" {
		if c.Exec, err = splitWords(v.exec); err != nil {
			return &Error{Key: "exec", Err: err}
		}
	}
	return nil
}
