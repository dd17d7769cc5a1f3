package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// apacheEventConfig is issue 21's httpd.conf: the event MPM with 8 worker
// threads in 2 processes, Debian's mod_reqtimeout as it ships, mod_status
// for the busy workers, POST /echo in mod_lua and the slow readers'
// responses as static files. Fields: dir, listen address.
const apacheEventConfig = `ServerRoot %[1]s
PidFile %[1]s/httpd.pid
DefaultRuntimeDir %[1]s
Mutex file:%[1]s default
ErrorLog %[1]s/error.log
LogLevel warn
LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
LoadModule lua_module /usr/lib/apache2/modules/mod_lua.so
LoadModule status_module /usr/lib/apache2/modules/mod_status.so
` + apacheReqtimeout + `User www-data
Group www-data
Listen %[2]s
ServerName 127.0.0.1
DocumentRoot %[1]s/htdocs
ServerTokens Prod
FileETag None
KeepAlive On
KeepAliveTimeout 5
StartServers 2
ServerLimit 2
ThreadLimit 4
ThreadsPerChild 4
MinSpareThreads 4
MaxSpareThreads 8
MaxRequestWorkers 8
MaxConnectionsPerChild 0
<Directory %[1]s/htdocs>
  Require all granted
</Directory>
<Location /server-status>
  SetHandler server-status
</Location>
LuaMapHandler ^/echo$ %[1]s/echo.lua handle
`

// apacheEcho is the mod_lua handler of POST /echo: the body back.
const apacheEcho = `function handle(r)
  r.content_type = "application/octet-stream"
  local body = r:requestbody()
  r:write(body)
  return apache2.OK
end
`

// apacheEventCommand writes issue 21's Apache files into s.dir and returns
// the command that runs httpd in the foreground and the good clients'
// path. It returns an error if a file cannot be written.
func apacheEventCommand(s setup) (*exec.Cmd, string, error) {
	if err := os.Mkdir(filepath.Join(s.dir, "htdocs"), 0o755); err != nil {
		return nil, "", fmt.Errorf("apache htdocs: %w", err)
	}
	large := make([]byte, issue21Size)
	for i := range large {
		large[i] = issue21Byte(int64(i))
	}
	files := map[string][]byte{
		"httpd.conf":       fmt.Appendf(nil, apacheEventConfig, s.dir, addr(s.port)),
		"echo.lua":         []byte(apacheEcho),
		"htdocs/index.txt": []byte(apacheBody),
		"htdocs/bytes":     large,
		"htdocs/file":      large,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(s.dir, name), data, 0o644); err != nil {
			return nil, "", fmt.Errorf("write apache %s: %w", name, err)
		}
	}
	cmd := exec.Command("/usr/sbin/apache2", "-f", filepath.Join(s.dir, "httpd.conf"), "-DFOREGROUND")
	return cmd, "/index.txt", nil
}
