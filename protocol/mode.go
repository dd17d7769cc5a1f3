package protocol

import (
	"fmt"
	"strings"
)

// Mode says who accepts connections. A child reads it from EnvMode.
type Mode int

const (
	// Dispatch: the master watches the listeners and orders the lowest idle
	// child to accept. The default.
	Dispatch Mode = iota
	// Exclusive: each child waits with EPOLLEXCLUSIVE and accepts by itself,
	// still reporting busy and idle.
	Exclusive
	// Shared: a fixed pool of children that do not speak the protocol each
	// accept by themselves.
	Shared
)

var modeNames = [...]string{Dispatch: "dispatch", Exclusive: "exclusive", Shared: "shared"}

// String returns the mode's flag and environment value.
func (m Mode) String() string {
	if !m.Valid() {
		return fmt.Sprintf("Mode(%d)", int(m))
	}
	return modeNames[m]
}

// ParseMode returns the Mode named s, or an error naming the allowed values.
func ParseMode(s string) (Mode, error) {
	for m, name := range modeNames {
		if s == name {
			return Mode(m), nil
		}
	}
	return 0, fmt.Errorf("unknown accept mode %q: want %s", s, ModeNames(nil))
}

// Valid reports whether m is one of the modes.
func (m Mode) Valid() bool { return m >= 0 && int(m) < len(modeNames) }

// ModeNames returns the names of the modes for which keep returns true
// (every mode if keep is nil), in order, as a person lists them:
// "dispatch, exclusive or shared". It is how flags and errors name the
// allowed values, so that a new mode is named everywhere at once.
func ModeNames(keep func(Mode) bool) string {
	var names []string
	for m, name := range modeNames {
		if keep == nil || keep(Mode(m)) {
			names = append(names, name)
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// SpeaksProtocol reports whether children in mode m have a back-channel.
func (m Mode) SpeaksProtocol() bool { return m != Shared }
