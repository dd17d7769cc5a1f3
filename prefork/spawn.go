package prefork

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// childEnv builds the environment shared by every child of one config: the
// base environment less the master's systemd and actd variables, plus the
// listener description. spawn appends the per-child part.
func childEnv(cfg Config, listeners []*listener) []string {
	base := cfg.Program.Env
	if base == nil {
		base = os.Environ()
	}
	env := make([]string, 0, len(base)+6)
	for _, kv := range base {
		if !stripped(kv) {
			env = append(env, kv)
		}
	}
	names := make([]string, len(listeners))
	for i, l := range listeners {
		names[i] = l.Name
	}
	env = append(env,
		protocol.EnvProtocol+"="+strconv.Itoa(protocol.Version),
		protocol.EnvMode+"="+cfg.Mode.String(),
		protocol.EnvListenFDs+"="+strconv.Itoa(len(listeners)),
		protocol.EnvListenFDNames+"="+strings.Join(names, ":"),
	)
	if cfg.Mode.SpeaksProtocol() {
		env = append(env, protocol.EnvChannelFD+"="+strconv.Itoa(protocol.ChannelFD(len(listeners))))
	}
	env = append(env, operatorEnv(cfg, len(listeners))...) // accesslog.go

	if cfg.holds() { // children that screen (protocol.CapScreen) apply its rule
		env = append(env, protocol.EnvFilter+"="+cfg.Filter.String())
		if cfg.OffloadMax > 0 { // children that announce protocol.CapOffload hand over up to this (offload.go)
			env = append(env, protocol.EnvOffloadMax+"="+strconv.FormatUint(cfg.OffloadMax, 10))
		}
	}
	env = append(env, proxyEnv(cfg, listeners)...) // proxy.go: ACTD_PROXY_FROM under --proxy-protocol-from
	return env
}

func stripped(kv string) bool {
	name, _, _ := strings.Cut(kv, "=")
	for _, s := range protocol.MasterEnv {
		if name == s {
			return true
		}
	}
	return false
}

// childSpec is what every child of one generation starts with: the worker
// program (with its access-log file), the environment its children share,
// and its certificates' memfds. New makes the first, each Reload its own;
// the one a reload replaced waits in previous (abandon.go).
type childSpec struct {
	program Program
	env     []string
	tls     tlsFiles // tlsfds.go
}

// newChildSpec returns the spec of cfg's children on listeners, with the
// access-log file logFile (nil for none, accesslog.go) and the
// certificates tls, both of which it owns from then on.
func newChildSpec(cfg Config, listeners []*listener, logFile *os.File, tls tlsFiles) childSpec {
	c := childSpec{program: program(cfg), tls: tls}
	c.program.logFile = logFile
	c.env = append(childEnv(cfg, listeners), c.extraEnv(len(listeners), cfg.Mode.SpeaksProtocol())...)
	return c
}

// child is a started process, as spawn returns it; a launcher's that has
// no process yet has pid 0 and pidfd -1 (launcher.go).
type child struct {
	pid, pidfd, ch int
}

// spawn starts the worker program for slot num with the fd layout of
// protocol/fds.go and env added to the child's environment: its slot
// (slotEnv), or for a zygote (num -1) its role. The child's stdout and
// stderr are the master's. It returns the child's pid, a pidfd, and the
// master's end of the back-channel (-1 in shared mode).
func (p *Pool) spawn(num int, env string) (child, error) {
	c := child{ch: -1, pidfd: -1}
	files := make([]uintptr, 0, protocol.FirstListenerFD+len(p.listeners)+1)
	files = append(files, p.stdio.files()...)
	for _, l := range p.listeners {
		files = append(files, uintptr(l.FD))
	}
	if p.cfg.Mode.SpeaksProtocol() {
		master, child, err := backChannel()
		if err != nil {
			return c, fmt.Errorf("spawn slot %d: %w", num, err)
		}
		defer unix.Close(child)
		c.ch = master
		files = append(files, uintptr(child))
	}
	files = append(files, p.spec.extraFiles()...) // extrafds.go
	attr := &syscall.ProcAttr{
		Env:   append(p.spec.env[:len(p.spec.env):len(p.spec.env)], env),
		Files: files,
		Sys: &syscall.SysProcAttr{
			Setpgid: true, // a terminal's ^C reaches the master only; it drains
			PidFD:   &c.pidfd,
		},
	}
	if !p.cfg.Mode.SpeaksProtocol() {
		// No back-channel to read EOF from. The master's loop runs on a
		// locked thread that lives as long as Run, so this signal follows
		// the master, not some short-lived thread.
		attr.Sys.Pdeathsig = syscall.SIGTERM
	}
	pid, err := p.mem.forkInto(num, p.spec.program, attr) // cgroup.go
	if err != nil {
		if c.ch >= 0 {
			unix.Close(c.ch)
		}
		return c, fmt.Errorf("spawn slot %d: %s: %w", num, p.spec.program.Path, err)
	}
	c.pid = pid
	return c, nil
}

// slotEnv is the environment entry that tells a child its slot.
func slotEnv(num int) string { return protocol.EnvSlot + "=" + strconv.Itoa(num) }

// backChannel returns a SOCK_SEQPACKET socketpair: the master's end
// non-blocking (a child that does not read must not block the master), the
// child's end blocking. Both are close-on-exec; ForkExec's dup2 clears the
// flag on the child's copy.
func backChannel() (master, child int, err error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, -1, fmt.Errorf("socketpair: %w", err)
	}
	if err := unix.SetNonblock(pair[0], true); err != nil {
		unix.Close(pair[0])
		unix.Close(pair[1])
		return -1, -1, fmt.Errorf("back-channel: %w", err)
	}
	return pair[0], pair[1], nil
}

// program returns cfg's Program with defaults filled in.
func program(cfg Config) Program {
	prog := cfg.Program
	if prog.Path == "" {
		prog.Path = "/proc/self/exe"
	}
	if len(prog.Args) == 0 {
		prog.Args = []string{"actd-child"}
	}
	return prog
}
