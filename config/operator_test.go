package config

import (
	"path/filepath"
	"testing"
)

// TestOperatorSettings: the access log, body limit, status page and
// control group, from the file and the command line, and the errors that
// name their key.
func TestOperatorSettings(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	for _, tc := range []struct {
		name, file string
		args       []string
		wantErr    string
		check      func(*Config) bool
	}{
		{"defaults", "", nil, "", func(c *Config) bool {
			return c.Pool.AccessLog == "" && c.Pool.MaxRequestBody == 1<<30 && c.StatusPath == "" && c.ControlGroup == ""
		}},
		{"file keys", "access-log = " + log + "\naccess-log-format = %h %r %s\nmax-request-body = 10M\nmetrics-listen = 127.0.0.1:0\nstatus-path = /status\ncontrol-group = root\n", nil, "", func(c *Config) bool {
			return c.Pool.AccessLog == log && c.Pool.AccessLogFormat == "%h %r %s" && c.Pool.MaxRequestBody == 10<<20 && c.StatusPath == "/status" && c.ControlGroup == "root"
		}},
		{"journal, no limit", "", []string{"--access-log", "journal", "--max-request-body", "0"}, "", func(c *Config) bool {
			return c.Pool.AccessLog == "journal" && c.Pool.MaxRequestBody == 0
		}},
		{"off", "access-log = off\n", nil, "", func(c *Config) bool { return c.Pool.AccessLog == "" }},
		{"relative file", "access-log = access.log\n", nil, "access-log: \"access.log\": want journal, off or an absolute file path", nil},
		{"no directory", "", []string{"--access-log", "/nonexistent/dir/a.log"}, "access-log: /nonexistent/dir/a.log: directory /nonexistent/dir does not exist", nil},
		{"a directory", "", []string{"--access-log", dir}, "is a directory", nil},
		{"bad format", "access-log-format = %h %Z\n", nil, "access-log-format: access log format at byte 3: unknown directive %Z", nil},
		{"bad size", "max-request-body = lots\n", nil, "max-request-body: \"lots\": want a size", nil},
		{"status without metrics", "status-path = /status\n", nil, "status-path: needs --metrics-listen", nil},
		{"status not a path", "", []string{"--metrics-listen", "127.0.0.1:0", "--status-path", "status"}, "status-path: \"status\": want a path that starts with /", nil},
		{"no such group", "control-group = no-such-group-here\n", nil, "control-group: \"no-such-group-here\": no such group", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := parseCase(t, tc.file, tc.args, tc.wantErr)
			if tc.check != nil && !tc.check(c) {
				t.Errorf("got %+v, settings not as given", c)
			}
		})
	}
}
