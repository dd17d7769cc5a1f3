package prefork

import (
	"fmt"
	"strings"

	"github.com/actd/actd/prefork/proxyproto"
	"github.com/actd/actd/protocol"
)

// PROXY protocol (docs/protocol.md, "PROXY protocol"): connections from
// the networks of --proxy-protocol-from (Config.ProxyFrom) start with a
// header that gives the client's address. The master consumes it on the
// connections it accepts itself (hold.go, the holder's look), keeps the
// address while it holds the connection, and passes it on Conn and Unsent
// to workers that announced protocol.CapProxy; it refuses, at its hello, a
// worker that did not.

// proxyRules is rules as the flag's values, for an error.
func proxyRules(rules []proxyproto.Rule) string {
	var s []string
	for _, r := range rules {
		s = append(s, r.String())
	}
	return strings.Join(s, " ")
}

// proxyNetworks resolves cfg's rules for listeners. It returns a
// *FieldError naming --proxy-protocol-from for a NAME= no listener has.
func proxyNetworks(cfg Config, listeners []*listener) (proxyproto.Networks, error) {
	names := make([]string, len(listeners))
	for i, l := range listeners {
		names[i] = l.Name
	}
	n, err := proxyproto.Resolve(cfg.ProxyFrom, names)
	if err != nil {
		return nil, &FieldError{Field: "proxy-protocol-from", Value: proxyRules(cfg.ProxyFrom),
			Allowed: fmt.Sprintf("entries whose NAME= is a listening socket's name: %v", err)}
	}
	return n, nil
}

// proxyEnv returns the child's ACTD_PROXY_FROM, or nothing when cfg has
// no networks (or names a socket no listener has: New refuses that).
func proxyEnv(cfg Config, listeners []*listener) []string {
	n, err := proxyNetworks(cfg, listeners)
	if err != nil || !n.Any() {
		return nil
	}
	return []string{protocol.EnvProxyFrom + "=" + n.Env()}
}

// errNoProxy is why a generation whose worker cannot read PROXY headers
// is abandoned (the first generation's stops the pool).
func errNoProxy(cfg Config, s *slot) error {
	return &FieldError{Field: "proxy-protocol-from", Value: proxyRules(cfg.ProxyFrom),
		Allowed: fmt.Sprintf("unset for this worker: child %d (pid %d) does not read PROXY protocol headers "+
			"(its hello announces no proxy capability, docs/protocol.md); drop --proxy-protocol-from, "+
			"or run a worker that supports protocol revision 6 (the built-in handler, the Go library)", s.num, s.pid)}
}

// proxyCache holds the networks of one generation's settings.
type proxyCache struct {
	gen int // 0: none computed yet (generations count from 1)
	n   proxyproto.Networks
}

// networks returns the networks of generation gen, whose settings are
// cfg, on listeners: nil for none. It computes them once per generation.
func (c *proxyCache) networks(gen int, cfg Config, listeners []*listener) proxyproto.Networks {
	if c.gen != gen || gen == 0 {
		c.n, _ = proxyNetworks(cfg, listeners) // New and Reload refused an error
		c.gen = gen
	}
	return c.n
}

// proxyNets returns the current generation's networks, nil for none.
func (p *Pool) proxyNets() proxyproto.Networks {
	return p.proxy.networks(p.gens.cur, p.cfg, p.listeners)
}

// proxyFit returns errNoProxy for a child that says hello without
// protocol.CapProxy under --proxy-protocol-from, else nil.
func (p *Pool) proxyFit(s *slot) error {
	if len(p.cfg.ProxyFrom) == 0 || s.caps.Has(protocol.CapProxy) {
		return nil
	}
	return errNoProxy(p.cfg, s)
}
