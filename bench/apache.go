package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// apacheBody is the static file Apache serves: the length of actd's answer.
const apacheBody = "slot=0 pid=00000\n"

// apacheSlowHandler is the mod_lua handler for the slow load: the body after
// a sleep (r.usleep takes microseconds).
const apacheSlowHandler = `function handle(r)
  r.usleep(%d)
  r.content_type = "text/plain"
  r:puts("slot=0 pid=00000\n")
  return apache2.OK
end
`

// apacheConfig is a self-contained httpd.conf: prefork MPM, own ServerRoot,
// PidFile and port on 127.0.0.1, no access log, keep-alive on without a
// request limit. Fields: dir (4×), port, dir, pool sizes, dir (2×).
const apacheConfig = `ServerRoot %[1]s
PidFile %[1]s/httpd.pid
DefaultRuntimeDir %[1]s
Mutex file:%[1]s default
ErrorLog %[1]s/error.log
LogLevel warn
LoadModule mpm_prefork_module /usr/lib/apache2/modules/mod_mpm_prefork.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
LoadModule lua_module /usr/lib/apache2/modules/mod_lua.so
User www-data
Group www-data
Listen %[2]s
ServerName 127.0.0.1
DocumentRoot %[1]s/htdocs
ServerTokens Prod
FileETag None
KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout 5
StartServers %[3]d
MinSpareServers %[4]d
MaxSpareServers %[5]d
ServerLimit %[6]d
MaxRequestWorkers %[6]d
MaxConnectionsPerChild 0
<Directory %[1]s/htdocs>
  Require all granted
</Directory>
LuaMapHandler ^/slow$ %[1]s/slow.lua handle
`

// apacheCommand writes an Apache configuration into s.dir and returns the
// command that runs httpd in the foreground with it, and the URL path: a
// static file, or a mod_lua handler when s has a delay. It returns an
// error if a file cannot be written.
func apacheCommand(s setup) (*exec.Cmd, string, error) {
	conf := fmt.Sprintf(apacheConfig, s.dir, addr(s.port),
		s.pool.start, s.pool.minSpare, s.pool.maxSpare, s.pool.max)
	files := map[string]string{
		"httpd.conf":       conf,
		"htdocs/index.txt": apacheBody,
		"slow.lua":         fmt.Sprintf(apacheSlowHandler, s.delay.Microseconds()),
	}
	if err := os.Mkdir(filepath.Join(s.dir, "htdocs"), 0o755); err != nil {
		return nil, "", fmt.Errorf("apache htdocs: %w", err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(s.dir, name), []byte(text), 0o644); err != nil {
			return nil, "", fmt.Errorf("write apache %s: %w", name, err)
		}
	}
	cmd := exec.Command("/usr/sbin/apache2", "-f", filepath.Join(s.dir, "httpd.conf"), "-DFOREGROUND")
	path := "/index.txt"
	if s.delay > 0 {
		path = "/slow"
	}
	return cmd, path, nil
}

// apacheVersion returns the first line of apache2 -v without its label, or
// "unknown".
func apacheVersion() string {
	out, err := exec.Command("/usr/sbin/apache2", "-v").Output()
	if err != nil {
		return "unknown"
	}
	first, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimPrefix(first, "Server version: ")
}
