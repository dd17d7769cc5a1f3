package proxyproto

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Rule is one --proxy-protocol-from entry: peers in Prefix, on the
// listener named Name (every listener if Name is empty), must send a
// header.
type Rule struct {
	Name   string
	Prefix netip.Prefix
}

// String returns r as ParseRule takes it.
func (r Rule) String() string {
	if r.Name == "" {
		return r.Prefix.String()
	}
	return r.Name + "=" + r.Prefix.String()
}

// ParseRule parses "[NAME=]CIDR"; a bare address is a /32 (IPv4) or a
// /128 (IPv6). It returns an error quoting s for a malformed entry.
func ParseRule(s string) (Rule, error) {
	var r Rule
	cidr := s
	if i := strings.LastIndexByte(s, '='); i >= 0 {
		r.Name, cidr = s[:i], s[i+1:]
		if r.Name == "" {
			return Rule{}, fmt.Errorf("%q: empty socket name before =", s)
		}
	}
	p, err := parsePrefix(cidr)
	if err != nil {
		return Rule{}, fmt.Errorf("%q: want [NAME=]CIDR (192.0.2.0/24, 2001:db8::/32, or an address): %w", s, err)
	}
	r.Prefix = p
	return r, nil
}

// parsePrefix parses a CIDR or a bare address, masked, IPv4-mapped IPv6
// turned into IPv4.
func parsePrefix(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("not an address")
		}
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("not a CIDR")
	}
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}

// Networks lists, by listener index, the networks whose peers must send a
// header. The zero value trusts no one.
type Networks [][]netip.Prefix

// Resolve turns rules into Networks for listeners named names (in
// listener order). It returns an error naming a rule's socket name that no
// listener has.
func Resolve(rules []Rule, names []string) (Networks, error) {
	if len(rules) == 0 {
		return nil, nil
	}
	n := make(Networks, len(names))
	for _, r := range rules {
		found := false
		for i, name := range names {
			if r.Name == "" || r.Name == name {
				n[i], found = append(n[i], r.Prefix), true
			}
		}
		if !found {
			return nil, fmt.Errorf("%q: no listening socket is named %q (names: %s)", r.String(), r.Name, strings.Join(names, ", "))
		}
	}
	return n, nil
}

// Trusts reports whether a peer at a, on listener l, must send a header.
// An IPv4-mapped IPv6 address matches IPv4 networks.
func (n Networks) Trusts(l int, a netip.Addr) bool {
	if l < 0 || l >= len(n) || len(n[l]) == 0 {
		return false
	}
	a = a.Unmap()
	for _, p := range n[l] {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// On reports whether listener l has networks at all (a peer lookup is
// then worth its system call).
func (n Networks) On(l int) bool { return l >= 0 && l < len(n) && len(n[l]) > 0 }

// Any reports whether some listener has networks.
func (n Networks) Any() bool {
	for _, p := range n {
		if len(p) > 0 {
			return true
		}
	}
	return false
}

// Env returns n as ACTD_PROXY_FROM has it: space-separated INDEX=CIDR
// entries, "" for none.
func (n Networks) Env() string {
	var b strings.Builder
	for l, prefixes := range n {
		for _, p := range prefixes {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.Itoa(l) + "=" + p.String())
		}
	}
	return b.String()
}

// ParseEnv parses ACTD_PROXY_FROM for a child with listeners listeners.
// It returns an error quoting an entry that is not INDEX=CIDR with INDEX
// below listeners.
func ParseEnv(s string, listeners int) (Networks, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return nil, nil
	}
	n := make(Networks, listeners)
	for _, f := range fields {
		index, cidr, ok := strings.Cut(f, "=")
		l, err := strconv.Atoi(index)
		if !ok || err != nil || l < 0 || l >= listeners {
			return nil, fmt.Errorf("%q: want INDEX=CIDR, INDEX below %d", f, listeners)
		}
		p, err := parsePrefix(cidr)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", f, err)
		}
		n[l] = append(n[l], p)
	}
	return n, nil
}
