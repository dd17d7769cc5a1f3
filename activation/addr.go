package activation

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// unixPathMax is the longest unix socket path: sun_path holds 108 bytes
// including the terminating NUL.
const unixPathMax = 107

// addrForms names the accepted forms in every error about an address.
const addrForms = "want host:port, [v6]:port or unix:/path"

// ParseAddr checks a listen address and returns the network and address to
// pass to net.Listen:
//
//   - "unix:/path" or "unix:@name" (abstract) → "unix", "/path" or "@name"
//   - "1.2.3.4:80" (an IPv4 literal) → "tcp4", unchanged
//   - "[::1]:80" (an IPv6 literal) → "tcp6", unchanged; a wildcard "[::]:80"
//     is then IPv6 only, so "0.0.0.0:80" and "[::]:80" can both be listed
//   - "name:80" or ":80" → "tcp", unchanged; ":80" is every address of both
//     families
//
// The port is a number from 0 to 65535. It returns an error naming s when s
// is empty, has another form, has a bad port or host, or a unix path that is
// relative, empty or longer than 107 bytes.
func ParseAddr(s string) (network, address string, err error) {
	if path, ok := strings.CutPrefix(s, "unix:"); ok {
		if err := checkUnixPath(path); err != nil {
			return "", "", fmt.Errorf("listen address %q: %w", s, err)
		}
		return "unix", path, nil
	}
	network, err = tcpNetwork(s)
	if err != nil {
		return "", "", fmt.Errorf("listen address %q: %w", s, err)
	}
	return network, s, nil
}

// checkUnixPath returns an error if path is not a usable unix socket path.
func checkUnixPath(path string) error {
	switch {
	case path == "":
		return errors.New("empty unix socket path")
	case path[0] != '/' && path[0] != '@':
		return errors.New("unix socket path must be absolute or start with @ (abstract)")
	case len(path) > unixPathMax:
		return fmt.Errorf("unix socket path is %d bytes, longer than %d", len(path), unixPathMax)
	}
	return nil
}

// tcpNetwork returns "tcp4", "tcp6" or "tcp" for a host:port address, or an
// error that says what is wrong with it.
func tcpNetwork(s string) (string, error) {
	if s == "" {
		return "", errors.New("empty address; " + addrForms)
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", errors.New(addrForms)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	bracketed := strings.HasPrefix(s, "[")
	ip, ipErr := netip.ParseAddr(host)
	switch {
	case bracketed && (ipErr != nil || !ip.Is6()):
		return "", fmt.Errorf("%q in brackets is not an IPv6 address", host)
	case bracketed:
		return "tcp6", nil
	case ipErr == nil && ip.Is4():
		return "tcp4", nil
	case host == "":
		return "tcp", nil
	case !validHostname(host):
		return "", fmt.Errorf("host %q is not an IP address or a host name", host)
	}
	return "tcp", nil
}

// validHostname reports whether host is made of letters, digits, dots and
// hyphens, at most 253 of them.
func validHostname(host string) bool {
	if len(host) > 253 {
		return false
	}
	for _, c := range host {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}
