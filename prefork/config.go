package prefork

import (
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/actd/actd/prefork/acceptfilter"
	"github.com/actd/actd/prefork/proxyproto"
	"github.com/actd/actd/protocol"
)

// maxSlots is the largest pool a Config may ask for.
const maxSlots = 4096

// minChildMemory is the smallest memory limit a Config may set: less than
// any worker takes.
const minChildMemory = 1 << 20

// Program is what a child runs. The master execs Path with Args; Path is
// normally "/proc/self/exe" and Args a hidden subcommand of the caller.
type Program struct {
	Path string   // default "/proc/self/exe"
	Args []string // argv, Args[0] included; default {"actd-child"}
	Env  []string // base environment; nil means os.Environ(); see childEnv

	logFile *os.File // the generation's access-log file, opened by the pool (accesslog.go)
}

// Config holds the pool settings. The zero value is not valid: start from
// DefaultConfig. Field comments name the actd flag and the default.
type Config struct {
	Mode            protocol.Mode       // --accept, dispatch
	Program         Program             // the worker
	MinChildren     int                 // --min-children, 1
	MaxChildren     int                 // --max-children, 32 (at most maxSlots)
	MinSpare        int                 // --min-spare, 1
	MaxSpare        int                 // --max-spare, 4
	StartChildren   int                 // --start-children, 2
	ScalePeriod     time.Duration       // --scale-period, 1s
	MaxConnPerChild int                 // --max-conn-per-child, 0 = never recycle
	PingInterval    time.Duration       // --ping-interval, 5s
	PingTimeout     time.Duration       // --ping-timeout, 2s
	StartTimeout    time.Duration       // --start-timeout, 10s
	BusyTimeout     time.Duration       // --busy-timeout, 0 = unbounded
	SlowRequest     time.Duration       // --slow-request, 0 = never log a slow request
	BusyKillGrace   time.Duration       // --busy-kill-grace, 5s (SIGQUIT to SIGKILL)
	GracefulTimeout time.Duration       // --graceful-timeout, 30s (drain on stop)
	MaxChildMemory  uint64              // --max-child-memory, bytes of RSS; 0 = never recycle by memory
	Filter          acceptfilter.Filter // --accept-filter, none (package acceptfilter)
	HoldTimeout     time.Duration       // --hold-timeout, 10s: a held connection not ready by then is closed
	MaxHeld         int                 // --max-held, 0: from the fd limit (budget.go); beyond it the master sheds the oldest not ready
	OffloadMax      uint64              // --offload-max, 8M: the largest rest of a response the master finishes (offload.go); 0 = none
	OffloadTotal    uint64              // --offload-total, 256M: the data of all responses the master finishes; beyond it a child writes them (Unsent)
	SendTimeout     time.Duration       // --send-timeout, 60s: a response the master finishes whose client takes nothing for this long is closed
	HoldBody        uint64              // --hold-body, 1M: http filter, request body bytes held before a child gets the request (bodies.go); 0: none
	ChildMemoryMax  uint64              // --child-memory-max, memory.max of each child's cgroup; 0 = none
	Preload         bool                // --preload, false: fork children from a zygote that loaded the application (zygote.go)
	TLS             map[string][]byte   // --tls-cert and --tls-key: listener name ("" all others) → chain and key PEM, children terminate TLS there (tlscert.go)
	ProxyFrom       []proxyproto.Rule   // --proxy-protocol-from, none: peers that must start with a PROXY header (proxy.go)
	AccessLog       string              // --access-log, "": off; "journal", or a file the master opens per generation (accesslog.go)
	AccessLogFormat string              // --access-log-format, "": the default (package accesslog)
	MaxRequestBody  uint64              // --max-request-body, 1G: children answer 413 beyond it, and the master for a held request; 0 = no limit
	// With Preload the process becomes a child subreaper and reaps exited
	// children no slot owns (orphans.go): a program that embeds the pool
	// must not wait for children of its own (os/exec) while it runs.
}

// maxHoldBody is the largest HoldBody a Config may ask for.
const maxHoldBody = 1 << 30

// maxMaxHeld is the largest MaxHeld a Config may ask for.
const maxMaxHeld = 1 << 20

// maxOffload and maxOffloadTotal are the largest OffloadMax and
// OffloadTotal a Config may ask for.
const (
	maxOffload      = 1 << 30
	maxOffloadTotal = 64 << 30
)

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		Mode:          protocol.Dispatch,
		MinChildren:   1,
		MaxChildren:   32,
		MinSpare:      1,
		MaxSpare:      4,
		StartChildren: 2,
		ScalePeriod:   time.Second,
		PingInterval:  5 * time.Second,
		PingTimeout:   2 * time.Second,
		StartTimeout:  10 * time.Second,
		BusyKillGrace: 5 * time.Second,

		GracefulTimeout: 30 * time.Second,
		HoldTimeout:     10 * time.Second,
		MaxHeld:         0,
		OffloadMax:      8 << 20,
		OffloadTotal:    256 << 20,
		SendTimeout:     60 * time.Second,
		HoldBody:        1 << 20,
		MaxRequestBody:  1 << 30,
	}
}

// FieldError is a Config value out of its allowed range. Field is the actd
// flag name, so a caller can print it as it is.
type FieldError struct {
	Field   string
	Value   any
	Allowed string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("--%s=%v: must be %s", e.Field, e.Value, e.Allowed)
}

// Validate returns nil, or a *FieldError for the first setting out of range.
func (c Config) Validate() error {
	checks := []struct {
		ok      bool
		field   string
		value   any
		allowed string
	}{
		{c.Mode.Valid(), "accept", c.Mode, protocol.ModeNames(nil)},
		{c.MaxChildren >= 1 && c.MaxChildren <= maxSlots, "max-children", c.MaxChildren, fmt.Sprintf("between 1 and %d", maxSlots)},
		{c.MinChildren >= 0 && c.MinChildren <= c.MaxChildren, "min-children", c.MinChildren, fmt.Sprintf("between 0 and --max-children (%d)", c.MaxChildren)},
		{c.MinSpare >= 0 && c.MinSpare <= c.MaxChildren, "min-spare", c.MinSpare, fmt.Sprintf("between 0 and --max-children (%d)", c.MaxChildren)},
		{c.MaxSpare >= c.MinSpare && c.MaxSpare >= 1, "max-spare", c.MaxSpare, fmt.Sprintf("at least 1 and at least --min-spare (%d)", c.MinSpare)},
		{c.StartChildren >= 1 && c.StartChildren <= c.MaxChildren, "start-children", c.StartChildren, fmt.Sprintf("between 1 and --max-children (%d)", c.MaxChildren)},
		{c.ScalePeriod >= 10*time.Millisecond && c.ScalePeriod <= time.Minute, "scale-period", c.ScalePeriod, "between 10ms and 1m"},
		{c.MaxConnPerChild >= 0, "max-conn-per-child", c.MaxConnPerChild, "0 (off) or more"},
		{c.MaxConnPerChild == 0 || c.Mode != protocol.Shared, "max-conn-per-child", c.MaxConnPerChild, "0 in shared mode (children there do not report connections)"},
		{c.PingInterval >= 10*time.Millisecond, "ping-interval", c.PingInterval, "at least 10ms"},
		{c.PingTimeout >= 10*time.Millisecond, "ping-timeout", c.PingTimeout, "at least 10ms"},
		{c.StartTimeout >= 10*time.Millisecond, "start-timeout", c.StartTimeout, "at least 10ms"},
		{c.BusyTimeout >= 0, "busy-timeout", c.BusyTimeout, "0 (off) or positive"},
		{c.SlowRequest >= 0, "slow-request", c.SlowRequest, "0 (off) or positive"},
		{c.BusyKillGrace >= 0, "busy-kill-grace", c.BusyKillGrace, "0 or positive"},
		{c.GracefulTimeout >= 0, "graceful-timeout", c.GracefulTimeout, "0 or positive"},
		{c.MaxChildMemory == 0 || c.MaxChildMemory >= minChildMemory, "max-child-memory", c.MaxChildMemory, "0 (off) or at least 1M"},
		{c.Filter <= acceptfilter.HTTP, "accept-filter", c.Filter, "none, data or http"},
		{c.Filter != acceptfilter.HTTP || c.Mode == protocol.Dispatch, "accept-filter", c.Filter,
			fmt.Sprintf("none or data with --accept=%v (http needs dispatch mode: the master holds connections until their request head is in)", c.Mode)},
		{c.HoldTimeout >= 10*time.Millisecond && c.HoldTimeout <= time.Hour, "hold-timeout", c.HoldTimeout, "between 10ms and 1h"},
		{c.MaxHeld >= 0 && c.MaxHeld <= maxMaxHeld, "max-held", c.MaxHeld, fmt.Sprintf("0 (from the fd limit) or between 1 and %d", maxMaxHeld)},
		{c.OffloadMax <= maxOffload, "offload-max", c.OffloadMax, "0 (off) or at most 1G"},
		{c.OffloadTotal <= maxOffloadTotal, "offload-total", c.OffloadTotal, "at most 64G"},
		{c.SendTimeout >= 10*time.Millisecond && c.SendTimeout <= time.Hour, "send-timeout", c.SendTimeout, "between 10ms and 1h"},
		{c.HoldBody <= maxHoldBody, "hold-body", c.HoldBody, "0 (off) or at most 1G"},
		{!c.Preload || c.Mode.SpeaksProtocol(), "preload", c.Preload, fmt.Sprintf("false with --accept=%v (a zygote takes its fork orders over the back-channel)", c.Mode)},
		{c.ChildMemoryMax == 0 || c.ChildMemoryMax >= minChildMemory, "child-memory-max", c.ChildMemoryMax, "0 (off) or at least 1M"},
		{len(c.ProxyFrom) == 0 || c.Mode.SpeaksProtocol(), "proxy-protocol-from", proxyRules(c.ProxyFrom),
			fmt.Sprintf("unset with --accept=%v (shared-mode children say no hello, so none can say it reads PROXY headers)", c.Mode)},
	}
	for _, ch := range checks {
		if !ch.ok {
			return &FieldError{Field: ch.field, Value: ch.value, Allowed: ch.allowed}
		}
	}
	return nil
}

// tickPeriod is how often the loop wakes with nothing to do: to scale, ping,
// and check deadlines.
func (c Config) tickPeriod() time.Duration {
	return min(c.ScalePeriod, c.PingTimeout/2, time.Second)
}

// jitteredLimit returns a child's recycling limit: MaxConnPerChild less up to
// a tenth, so children started together do not all retire together. It
// returns 0 (no limit) if MaxConnPerChild is 0.
func (c Config) jitteredLimit() uint64 {
	n := c.MaxConnPerChild
	if n == 0 {
		return 0
	}
	return uint64(n - rand.IntN(n/10+1))
}

// limits returns the scaler's view of c.
func (c Config) limits() scaleLimits {
	return scaleLimits{MinChildren: c.MinChildren, MaxChildren: c.MaxChildren, MinSpare: c.MinSpare, MaxSpare: c.MaxSpare}
}
