package activation

import (
	"fmt"
	"strings"
)

// NameMax is the longest socket name systemd accepts in LISTEN_FDNAMES
// (FDNAME_MAX).
const NameMax = 255

// CheckName returns nil if name is a socket name that systemd and
// libsystemd's sd_listen_fds_with_names() accept: 1 to 255 bytes of
// printable ASCII (space to '~') without ':', the LISTEN_FDNAMES separator.
//
// It returns an error that names the first offending byte otherwise.
func CheckName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("socket name is empty")
	case len(name) > NameMax:
		return fmt.Errorf("socket name is %d bytes, longer than %d", len(name), NameMax)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c == ':' || c < ' ' || c > '~' {
			return fmt.Errorf("socket name %q has byte %q at %d; want printable ASCII without ':'", name, name[i:i+1], i)
		}
	}
	return nil
}

// DefaultName returns the socket name of a --listen address given without a
// name: "tcp-" or "unix-" and the address, every ':' replaced by '-', every
// other byte outside printable ASCII by '_', cut to 255 bytes. So
// "127.0.0.1:8080" is "tcp-127.0.0.1-8080", "[::1]:8080" is
// "tcp-[--1]-8080", ":80" is "tcp--80" and "unix:/run/web.sock" is
// "unix-/run/web.sock". The result always passes [CheckName] when addr is
// not empty.
func DefaultName(addr string) string {
	name := "tcp-" + addr
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		name = "unix-" + path
	}
	b := []byte(name)
	for i, c := range b {
		switch {
		case c == ':':
			b[i] = '-'
		case c < ' ' || c > '~':
			b[i] = '_'
		}
	}
	if len(b) > NameMax {
		b = b[:NameMax]
	}
	return string(b)
}

// ParseListen splits a --listen value into a socket name and an address.
// "NAME=ADDR" names the socket NAME; a bare "ADDR" gets [DefaultName]. The
// value is "NAME=ADDR" when it has a '=' and the part before the first '='
// has no ':' (an address always has one before any '=').
//
// It returns an error naming s when NAME fails [CheckName] or ADDR fails
// [ParseAddr].
func ParseListen(s string) (name, addr string, err error) {
	addr = s
	if before, after, ok := strings.Cut(s, "="); ok && !strings.Contains(before, ":") {
		name, addr = before, after
		if err := CheckName(name); err != nil {
			return "", "", fmt.Errorf("listen %q: %w", s, err)
		}
	}
	if _, _, err := ParseAddr(addr); err != nil {
		return "", "", err
	}
	if name == "" {
		name = DefaultName(addr)
	}
	return name, addr, nil
}
