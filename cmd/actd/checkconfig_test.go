package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/actd/actd/internal/testcert"
)

// TestCheckConfigCapabilities: check-config refuses what it can know a
// worker cannot do (preload for the built-in handler, which is Go), and
// notes what only a worker COMMAND's hello tells (fork for preload,
// handoff under a filter, tls for tls-cert, proxy under
// --proxy-protocol-from); a bad certificate is 78, and a PROXY setting it
// can judge (shared mode, a socket name, a network) is refused.
func TestCheckConfigCapabilities(t *testing.T) {
	cert := testcert.Write(t, t.TempDir(), "server", 1)
	other := testcert.Write(t, t.TempDir(), "other", 2)
	for _, tc := range []struct {
		name, file string
		code       int
		want       []string
		not        string
	}{
		{"preload, built-in handler", "preload = true\n", exitConfig,
			[]string{"c.conf:1: preload: true: must be false for the built-in handler", "drop --preload"}, "note:"},
		{"preload and filter, worker", "preload = true\naccept-filter = http\nworker = /bin/sh\n", exitOK,
			[]string{"c.conf: ok", "note: preload: the worker's zygote must announce the fork capability",
				"note: accept-filter http: the worker must announce the handoff capability", "old generation serves on"}, ""},
		{"filter, built-in handler", "accept-filter = http\n", exitOK, []string{"c.conf: ok"}, "note:"},
		{"tls, worker", "tls-cert = " + cert.CertFile + "\ntls-key = " + cert.KeyFile + "\nworker = /bin/sh\n", exitOK,
			[]string{"c.conf: ok", "note: tls-cert: the worker must announce the tls capability"}, ""},
		{"tls, built-in handler", "tls-cert = " + cert.CertFile + "\ntls-key = " + cert.KeyFile + "\n", exitOK, []string{"c.conf: ok"}, "note:"},
		{"tls, key of another certificate", "tls-cert = " + cert.CertFile + "\ntls-key = " + other.KeyFile + "\n", exitConfig,
			[]string{"c.conf:2: tls-key:", "does not match"}, ""},
		{"tls, shared mode", "accept = shared\ntls-cert = " + cert.CertFile + "\ntls-key = " + cert.KeyFile + "\nworker = /bin/sh\n", exitConfig,
			[]string{"c.conf:2: tls-cert:", "shared"}, ""},
		{"proxy, worker", "proxy-protocol-from = 10.0.0.0/8\nproxy-protocol-from = ::1\nworker = /bin/sh\n", exitOK,
			[]string{"c.conf: ok", "note: proxy-protocol-from: the worker must announce the proxy capability"}, ""},
		{"proxy, shared mode", "proxy-protocol-from = 10.0.0.0/8\naccept = shared\nworker = /bin/sh\n", exitConfig,
			[]string{"proxy-protocol-from: 10.0.0.0/8: must be unset with --accept=shared"}, ""},
		{"proxy, unknown socket", "listen = web=127.0.0.1:0\nproxy-protocol-from = api=10.0.0.0/8\n", exitConfig,
			[]string{"c.conf:2: proxy-protocol-from:", `no listening socket is named "api"`}, ""},
		{"proxy, bad network", "proxy-protocol-from = 10.0.0.0/40\n", exitConfig,
			[]string{"c.conf:1: proxy-protocol-from:", "want [NAME=]CIDR"}, ""},
		{"access log format", "access-log = journal\naccess-log-format = %h %Q\n", exitConfig,
			[]string{"c.conf:2: access-log-format: access log format at byte 3: unknown directive %Q"}, ""},
		{"access log, limits, status", "access-log = /tmp/actd-access.log\nmax-request-body = 10M\nmetrics-listen = 127.0.0.1:9\nstatus-path = /status\ncontrol-group = root\n",
			exitOK, []string{"c.conf: ok"}, "note:"},
		{"body limit", "max-request-body = -1\n", exitConfig, []string{"c.conf:1: max-request-body: \"-1\": want a size"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := filepath.Join(t.TempDir(), "c.conf")
			if err := os.WriteFile(conf, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runActdOut(t, "check-config", conf)
			out := stdout + stderr
			if code != tc.code {
				t.Errorf("got exit status %d, want %d; output:\n%s", code, tc.code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("got output %q, want %q in it", out, w)
				}
			}
			if tc.not != "" && strings.Contains(out, tc.not) {
				t.Errorf("got output %q, want no %q", out, tc.not)
			}
		})
	}
}
