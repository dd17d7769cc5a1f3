package worker

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/actd/actd/prefork"
)

// Env is what the master tells a child through its environment.
type Env struct {
	Mode      prefork.Mode
	Listeners []int // fds
	Channel   int   // back-channel fd; -1 in shared mode
	Slot      int
}

// FromEnv reads the child's environment. It returns an error naming the
// variable that is missing or malformed.
func FromEnv() (Env, error) {
	e := Env{Channel: -1}
	n, err := intVar(prefork.EnvListenFDs)
	if err != nil {
		return e, err
	}
	for i := range n {
		e.Listeners = append(e.Listeners, prefork.FirstListenerFD+i)
	}
	if e.Mode, err = prefork.ParseMode(os.Getenv(prefork.EnvMode)); err != nil {
		return e, fmt.Errorf("%s: %w", prefork.EnvMode, err)
	}
	if e.Slot, err = intVar(prefork.EnvSlot); err != nil {
		e.Slot = -1
	}
	if e.Mode != prefork.Shared {
		if e.Channel, err = intVar(prefork.EnvChannelFD); err != nil {
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

// closeOnExec marks the listeners and the back-channel close-on-exec: they
// belong to this process, not to programs it runs (see Inetd). The master
// passed them without the flag so that ExecProgram keeps them.
func (e Env) closeOnExec() {
	for _, fd := range e.Listeners {
		unix.CloseOnExec(fd)
	}
	if e.Channel >= 0 {
		unix.CloseOnExec(e.Channel)
	}
}
