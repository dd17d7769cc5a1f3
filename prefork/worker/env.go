package worker

import (
	"fmt"
	"os"
	"strconv"

	"github.com/actd/actd/prefork/acceptfilter"
	"github.com/actd/actd/prefork/proxyproto"
	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// Env is what the master tells a child through its environment.
type Env struct {
	Mode      protocol.Mode
	Listeners []int // fds
	Channel   int   // back-channel fd; -1 in shared mode
	Slot      int
	Revision  int                 // the protocol revision the master speaks; 1 if it does not say
	Filter    acceptfilter.Filter // the pool's accept filter (dispatch mode); None if unset or unknown
	Offload   int64               // the most bytes of a response the master finishes (EnvOffloadMax); 0 if unset
	TLS       map[int]int         // listener index to the memfd of its certificate and key (EnvTLS); nil if unset
	Proxy     proxyproto.Networks // peers whose connections start with a PROXY header, by listener (EnvProxyFrom); nil if unset

	tls         terminator // the certificates loaded, when the server takes TLS connections (tls.go)
	readsHeader bool       // the KeepFDHandler reads a PROXY header with its first read (ReadsHeader, proxyread.go)
}

// FromEnv reads the child's environment. It returns an error naming the
// variable that is missing or malformed.
func FromEnv() (Env, error) {
	e := Env{Channel: -1}
	n, err := intVar(protocol.EnvListenFDs)
	if err != nil {
		return e, err
	}
	for i := range n {
		e.Listeners = append(e.Listeners, protocol.FirstListenerFD+i)
	}
	if e.Mode, err = protocol.ParseMode(os.Getenv(protocol.EnvMode)); err != nil {
		return e, fmt.Errorf("%s: %w", protocol.EnvMode, err)
	}
	if e.Slot, err = intVar(protocol.EnvSlot); err != nil {
		e.Slot = -1
	}
	if e.Revision, err = intVar(protocol.EnvProtocol); err != nil {
		e.Revision = 1
	}
	e.Filter, _ = acceptfilter.Parse(os.Getenv(protocol.EnvFilter)) // unknown: none, the master-first path
	if n, err := strconv.ParseInt(os.Getenv(protocol.EnvOffloadMax), 10, 64); err == nil && n > 0 {
		e.Offload = n
	}
	if e.TLS, err = parseTLSEnv(os.Getenv(protocol.EnvTLS), n); err != nil {
		return e, err
	}
	if e.Proxy, err = proxyEnv(n); err != nil {
		return e, fmt.Errorf("%s: %w", protocol.EnvProxyFrom, err)
	}
	if e.Mode.SpeaksProtocol() {
		if e.Channel, err = intVar(protocol.EnvChannelFD); err != nil {
			return e, err
		}
	}
	return e, nil
}

func intVar(name string) (int, error) {
	v, ok := os.LookupEnv(name)
	if !ok {
		return 0, fmt.Errorf("%s is not set: not started by actd?", name)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want a number", name, v)
	}
	return n, nil
}

// closeOnExec marks the listeners, the back-channel and the access-log
// file close-on-exec: they belong to this process, not to programs it runs
// (see Inetd). The master passed them without the flag so that
// ExecProgram keeps them.
func (e Env) closeOnExec() {
	for _, fd := range e.Listeners {
		unix.CloseOnExec(fd)
	}
	if e.Channel >= 0 {
		unix.CloseOnExec(e.Channel)
	}
	if fd := accessLogFD(); fd >= 0 { // access.go
		unix.CloseOnExec(fd)
	}
	for _, fd := range e.TLS {
		unix.CloseOnExec(fd)
	}
}
