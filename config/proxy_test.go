package config

import (
	"strings"
	"testing"
)

// TestProxyProtocolFrom: --proxy-protocol-from and the file key, one entry
// per flag or line, with or without a socket name; a malformed CIDR, a
// name no --listen socket has, and shared mode are an *Error naming the
// key (exit 78).
func TestProxyProtocolFrom(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		args       []string
		want       string
		wantErr    string
	}{
		{"default none", "", nil, "", ""},
		{"flags", "", []string{"--proxy-protocol-from", "10.0.0.0/8", "--proxy-protocol-from", "::1"}, "10.0.0.0/8 ::1/128", ""},
		{"file lines", "proxy-protocol-from = 127.0.0.1\nproxy-protocol-from = web=192.0.2.0/24\n", []string{"--listen", "web=127.0.0.1:0"}, "127.0.0.1/32 web=192.0.2.0/24", ""},
		{"default socket name", "", []string{"--proxy-protocol-from", "tcp-127.0.0.1-0=10.0.0.0/8"}, "tcp-127.0.0.1-0=10.0.0.0/8", ""},
		{"bad CIDR", "", []string{"--proxy-protocol-from", "10.0.0.0/99"}, "", `proxy-protocol-from: "10.0.0.0/99": want [NAME=]CIDR`},
		{"bad CIDR in file", "proxy-protocol-from = nowhere\n", nil, "", `pool.conf:1: proxy-protocol-from: "nowhere"`},
		{"unknown name", "", []string{"--proxy-protocol-from", "api=10.0.0.0/8"}, "", `proxy-protocol-from: "api=10.0.0.0/8": no listening socket is named "api"`},
		{"shared mode", "", []string{"--proxy-protocol-from", "10.0.0.0/8", "--accept", "shared", "--", "/bin/cat"}, "", "proxy-protocol-from: 10.0.0.0/8: must be unset with --accept=shared"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := parseCase(t, tc.file, tc.args, tc.wantErr)
			if c == nil {
				return
			}
			var got []string
			for _, r := range c.Pool.ProxyFrom {
				got = append(got, r.String())
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("got %q, want %q", strings.Join(got, " "), tc.want)
			}
		})
	}
}
