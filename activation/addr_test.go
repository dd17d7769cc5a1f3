package activation

import (
	"strings"
	"testing"
)

func TestParseAddr(t *testing.T) {
	long := "unix:/" + strings.Repeat("a", unixPathMax)
	tests := []struct {
		in          string
		network     string
		address     string
		errContains string
	}{
		{in: "127.0.0.1:8080", network: "tcp4", address: "127.0.0.1:8080"},
		{in: "0.0.0.0:0", network: "tcp4", address: "0.0.0.0:0"},
		{in: "[::1]:80", network: "tcp6", address: "[::1]:80"},
		{in: "[::]:65535", network: "tcp6", address: "[::]:65535"},
		{in: "[fe80::1%lo]:80", network: "tcp6", address: "[fe80::1%lo]:80"},
		{in: ":80", network: "tcp", address: ":80"},
		{in: "localhost:80", network: "tcp", address: "localhost:80"},
		{in: "unix:/run/actd/web.sock", network: "unix", address: "/run/actd/web.sock"},
		{in: "unix:@actd", network: "unix", address: "@actd"},
		{in: "", errContains: "empty address"},
		{in: "8080", errContains: "want host:port"},
		{in: "::1:80", errContains: "want host:port"},
		{in: "http://x:80", errContains: "want host:port"},
		{in: "127.0.0.1:http", errContains: `port "http" is not a number from 0 to 65535`},
		{in: "127.0.0.1:65536", errContains: "from 0 to 65535"},
		{in: "127.0.0.1:-1", errContains: "from 0 to 65535"},
		{in: "127.0.0.1:", errContains: "from 0 to 65535"},
		{in: "[127.0.0.1]:80", errContains: "not an IPv6 address"},
		{in: "[]:80", errContains: "not an IPv6 address"},
		{in: "exa mple:80", errContains: "not an IP address or a host name"},
		{in: "unix:", errContains: "empty unix socket path"},
		{in: "unix:run/web.sock", errContains: "must be absolute"},
		{in: long, errContains: "longer than 107"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			network, address, err := ParseAddr(tt.in)
			if tt.errContains != "" {
				if err == nil {
					t.Fatalf("got %q %q, nil; want error containing %q", network, address, tt.errContains)
				}
				if !strings.Contains(err.Error(), tt.errContains) {
					t.Fatalf("got error %q, want it to contain %q", err, tt.errContains)
				}
				if !strings.Contains(err.Error(), tt.in) {
					t.Fatalf("got error %q, want it to name the address %q", err, tt.in)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want nil", err)
			}
			if network != tt.network || address != tt.address {
				t.Fatalf("got %q %q, want %q %q", network, address, tt.network, tt.address)
			}
		})
	}
}
