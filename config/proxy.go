package config

import (
	"fmt"
	"strings"

	"github.com/actd/actd/activation"
	"github.com/actd/actd/prefork/proxyproto"
)

// proxyKey is the flag and config key of the PROXY protocol's networks.
const proxyKey = "proxy-protocol-from"

// proxyFromValue is the repeatable --proxy-protocol-from [NAME=]CIDR.
type proxyFromValue struct{ rules *[]proxyproto.Rule }

func (v proxyFromValue) String() string {
	if v.rules == nil {
		return ""
	}
	var s []string
	for _, r := range *v.rules {
		s = append(s, r.String())
	}
	return strings.Join(s, " ")
}

// Set adds one entry. It returns an error quoting s if it is not
// [NAME=]CIDR or a bare address.
func (v proxyFromValue) Set(s string) error {
	r, err := proxyproto.ParseRule(s)
	if err != nil {
		return err
	}
	*v.rules = append(*v.rules, r)
	return nil
}

// checkProxyNames checks that every NAME= of --proxy-protocol-from names
// a --listen socket. Without --listen the names are systemd's
// (LISTEN_FDNAMES), known at start only: actd checks them then (exit 78).
// It returns nil or an *Error for key proxy-protocol-from.
func checkProxyNames(c *Config) error {
	if len(c.Listen) == 0 {
		return nil
	}
	var names []string
	for _, l := range c.Listen {
		name, _, err := activation.ParseListen(l)
		if err != nil {
			return nil // checkListens says so
		}
		names = append(names, name)
	}
	if _, err := proxyproto.Resolve(c.Pool.ProxyFrom, names); err != nil {
		return &Error{Key: proxyKey, Err: fmt.Errorf("%w: name a --listen socket, or drop NAME= for every listener", err)}
	}
	return nil
}
