package activation

import (
	"fmt"
	"strconv"
	"strings"
)

// A service may keep fds in systemd's file descriptor store (sd_notify
// FDSTORE=1 with FDNAME=); systemd passes them back, after the listening
// sockets, in LISTEN_FDS and LISTEN_FDNAMES when it starts the service
// again. actd keeps there the connections its master holds, named by
// [StoredName]: a name tells such a connection from a listener, and says
// where it came from.

// StoredName is what the name of a stored connection says: the index of
// the listener it was accepted on (activation order), whether a child gave
// it back between two requests (parked), and a number that makes the name
// unique in the store.
type StoredName struct {
	Listener int
	Parked   bool
	N        uint64
}

// Prefixes of stored names.
const (
	heldPrefix   = "held-"
	parkedPrefix = "parked-"
)

// String returns the name: "held-LISTENER-N" or "parked-LISTENER-N", e.g.
// "held-0-17". It always passes [CheckName].
func (s StoredName) String() string {
	prefix := heldPrefix
	if s.Parked {
		prefix = parkedPrefix
	}
	return prefix + strconv.Itoa(s.Listener) + "-" + strconv.FormatUint(s.N, 10)
}

// ParseStoredName parses a name made by [StoredName.String].
//
// It returns the parts and true, or false if name is not of that form:
// another prefix, a part missing, a part that is not a decimal number
// without sign or leading zero, or a listener index over 65535.
func ParseStoredName(name string) (StoredName, bool) {
	var s StoredName
	rest, ok := strings.CutPrefix(name, heldPrefix)
	if !ok {
		rest, ok = strings.CutPrefix(name, parkedPrefix)
		s.Parked = true
	}
	if !ok {
		return StoredName{}, false
	}
	l, n, ok := strings.Cut(rest, "-")
	if !ok {
		return StoredName{}, false
	}
	listener, ok1 := decimal(l, 16)
	num, ok2 := decimal(n, 64)
	if !ok1 || !ok2 {
		return StoredName{}, false
	}
	s.Listener, s.N = int(listener), num
	return s, true
}

// decimal parses s as an unsigned decimal of at most bits bits, digits
// only, without a leading zero (so that each number has one name).
func decimal(s string, bits int) (uint64, bool) {
	if s == "" || s[0] < '0' || s[0] > '9' || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(s, 10, bits)
	return v, err == nil
}

// Conn is a connection systemd passed back from its fd store: an fd the
// caller owns (close-on-exec set) and what its name says.
type Conn struct {
	StoredName
	Name string
	FD   int
}

// storedConn returns the connection in sock if its name is a [StoredName]
// and its fd a connected (not listening) stream socket, and false for a
// listener.
//
// It returns an error when the fd is a non-listening socket whose name is
// no stored name, or is no stream socket.
func storedConn(sock Socket) (Conn, bool, error) {
	err := checkListening(sock.FD)
	if err == nil {
		return Conn{}, false, nil
	}
	name, ok := ParseStoredName(sock.Name)
	if !ok {
		return Conn{}, false, err
	}
	if err := checkStream(sock.FD); err != nil {
		return Conn{}, false, fmt.Errorf("stored connection: %w", err)
	}
	return Conn{StoredName: name, Name: sock.Name, FD: sock.FD}, true, nil
}
