package activation

import (
	"strings"
	"testing"
)

func TestCheckName(t *testing.T) {
	tests := []struct {
		name        string
		errContains string
	}{
		{name: "http"},
		{name: "tcp-127.0.0.1-8080"},
		{name: "with space and ~!@#$%^&*()=[]"},
		{name: strings.Repeat("a", NameMax)},
		{name: "", errContains: "empty"},
		{name: "127.0.0.1:8080", errContains: `byte ":" at 9`},
		{name: "tab\there", errContains: `byte "\t" at 3`},
		{name: "caf\xc3\xa9", errContains: `byte "\xc3" at 3`},
		{name: "del\x7f", errContains: `byte "\x7f" at 3`},
		{name: strings.Repeat("a", NameMax+1), errContains: "256 bytes, longer than 255"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckName(tt.name)
			if tt.errContains == "" {
				if err != nil {
					t.Fatalf("got error %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.errContains) {
				t.Fatalf("got error %v, want one containing %q", err, tt.errContains)
			}
		})
	}
}

func TestParseListen(t *testing.T) {
	long := "unix:/" + strings.Repeat("\xff", unixPathMax-1)
	tests := []struct {
		in          string
		name        string
		addr        string
		errContains string
	}{
		{in: "127.0.0.1:8080", name: "tcp-127.0.0.1-8080", addr: "127.0.0.1:8080"},
		{in: "[::1]:8080", name: "tcp-[--1]-8080", addr: "[::1]:8080"},
		{in: "[fe80::1%lo]:80", name: "tcp-[fe80--1%lo]-80", addr: "[fe80::1%lo]:80"},
		{in: ":80", name: "tcp--80", addr: ":80"},
		{in: "localhost:80", name: "tcp-localhost-80", addr: "localhost:80"},
		{in: "unix:/run/actd/web.sock", name: "unix-/run/actd/web.sock", addr: "unix:/run/actd/web.sock"},
		{in: "unix:/run/a:b=c.sock", name: "unix-/run/a-b=c.sock", addr: "unix:/run/a:b=c.sock"},
		{in: "unix:@actd", name: "unix-@actd", addr: "unix:@actd"},
		{in: "unix:/tmp/\x01\xe9", name: "unix-/tmp/__", addr: "unix:/tmp/\x01\xe9"},
		{in: long, name: "unix-/" + strings.Repeat("_", unixPathMax-1), addr: long},
		{in: "http=127.0.0.1:8080", name: "http", addr: "127.0.0.1:8080"},
		{in: "admin=[::1]:9", name: "admin", addr: "[::1]:9"},
		{in: "web=unix:/run/web.sock", name: "web", addr: "unix:/run/web.sock"},
		{in: "a b=unix:@x", name: "a b", addr: "unix:@x"},
		{in: "=127.0.0.1:80", errContains: "socket name is empty"},
		{in: "caf\xc3\xa9=127.0.0.1:80", errContains: "printable ASCII"},
		{in: "web=", errContains: "empty address"},
		{in: "web=8080", errContains: "want host:port"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			name, addr, err := ParseListen(tt.in)
			if tt.errContains != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errContains) {
					t.Fatalf("got %q %q, %v; want error containing %q", name, addr, err, tt.errContains)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want nil", err)
			}
			if name != tt.name || addr != tt.addr {
				t.Fatalf("got %q %q, want %q %q", name, addr, tt.name, tt.addr)
			}
			if err := CheckName(name); err != nil {
				t.Fatalf("got name %q that libsystemd rejects: %v", name, err)
			}
		})
	}
}
