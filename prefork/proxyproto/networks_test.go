package proxyproto

import (
	"net/netip"
	"testing"
)

// TestParseRule: [NAME=]CIDR, bare addresses as host networks, IPv4-mapped
// networks as IPv4.
func TestParseRule(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"127.0.0.1", "127.0.0.1/32", ""},
		{"::1", "::1/128", ""},
		{"10.0.0.0/8", "10.0.0.0/8", ""},
		{"10.1.2.3/8", "10.0.0.0/8", ""},
		{"web=192.0.2.0/24", "web=192.0.2.0/24", ""},
		{"::ffff:10.0.0.0/104", "10.0.0.0/8", ""},
		{"2001:db8::/32", "2001:db8::/32", ""},
		{"web=", "", "not an address"},
		{"=10.0.0.0/8", "", "empty socket name"},
		{"10.0.0.0/33", "", "not a CIDR"},
		{"localhost", "", "not an address"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			r, err := ParseRule(tc.in)
			switch {
			case tc.err != "" && (err == nil || !contains(err.Error(), tc.err)):
				t.Fatalf("got %v, %v; want an error with %q", r, err, tc.err)
			case tc.err == "" && err != nil:
				t.Fatalf("got %v", err)
			case tc.err == "" && r.String() != tc.want:
				t.Errorf("got %s, want %s", r, tc.want)
			}
		})
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestNetworks: rules resolved by socket name, trusted peers per listener
// (IPv4-mapped IPv6 peers match IPv4 networks), and the environment's
// form there and back.
func TestNetworks(t *testing.T) {
	var rules []Rule
	for _, s := range []string{"127.0.0.0/8", "::1", "api=10.0.0.0/8"} {
		r, err := ParseRule(s)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, r)
	}
	n, err := Resolve(rules, []string{"web", "api"})
	if err != nil {
		t.Fatal(err)
	}
	const env = "0=127.0.0.0/8 0=::1/128 1=127.0.0.0/8 1=::1/128 1=10.0.0.0/8"
	if got := n.Env(); got != env {
		t.Errorf("Env: got %q, want %q", got, env)
	}
	back, err := ParseEnv(env, 2)
	if err != nil || back.Env() != env {
		t.Errorf("ParseEnv: got %q, %v; want %q", back.Env(), err, env)
	}
	for _, tc := range []struct {
		l    int
		addr string
		want bool
	}{
		{0, "127.0.0.1", true},
		{0, "::ffff:127.0.0.1", true},
		{0, "::1", true},
		{0, "10.1.2.3", false},
		{1, "10.1.2.3", true},
		{1, "::ffff:10.1.2.3", true},
		{1, "192.0.2.1", false},
		{2, "127.0.0.1", false},
	} {
		if got := n.Trusts(tc.l, netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("listener %d, %s: got %v, want %v", tc.l, tc.addr, got, tc.want)
		}
	}
	if _, err := Resolve([]Rule{{Name: "nope", Prefix: netip.MustParsePrefix("10.0.0.0/8")}}, []string{"web"}); err == nil {
		t.Error("an unknown socket name resolved")
	}
	for _, bad := range []string{"2=10.0.0.0/8", "x=10.0.0.0/8", "0=nope", "0"} {
		if _, err := ParseEnv(bad, 2); err == nil {
			t.Errorf("ParseEnv(%q): no error", bad)
		}
	}
}
