package config

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/actd/actd/accesslog"
)

// Operator settings: the access log and request body limit the children
// apply (prefork.Config carries them to each generation), the status page
// on the metrics listener, and the group that may use the control socket.

// addOperatorFlags declares --access-log, --access-log-format,
// --max-request-body, --status-path and --control-group, bound to c.
func addOperatorFlags(fs *flag.FlagSet, c *Config) {
	p := &c.Pool
	fs.Var(accessLogValue{&p.AccessLog}, "access-log", "log each request: `WHERE` is journal, an absolute FILE (reopened on reload) or off")
	fs.StringVar(&p.AccessLogFormat, "access-log-format", "", "the access log line's `FORMAT`, Apache LogFormat directives (default: combined plus %D)")
	fs.Var(sizeValue{&p.MaxRequestBody}, "max-request-body", "answer 413 to a request whose body is over `SIZE` (K, M, G; 0: no limit)")
	fs.StringVar(&c.StatusPath, "status-path", "", "serve the status page at `PATH` on --metrics-listen (HTML, JSON with ?json)")
	fs.StringVar(&c.ControlGroup, "control-group", "", "let `GROUP` use the control socket (actd status, actd reload): its group and mode 0660")
}

// accessLogValue is --access-log: "journal", an absolute file path, or
// "off" (kept as "").
type accessLogValue struct{ p *string }

func (v accessLogValue) String() string {
	if v.p == nil || *v.p == "" {
		return "off"
	}
	return *v.p
}

// Set parses s. It returns an error quoting s if it is neither journal,
// off nor an absolute path.
func (v accessLogValue) Set(s string) error {
	switch {
	case s == "off":
		*v.p = ""
	case s == "journal" || filepath.IsAbs(s):
		*v.p = s
	default:
		return fmt.Errorf("%q: want journal, off or an absolute file path such as /var/log/actd/access.log", s)
	}
	return nil
}

// validateOperator checks the operator settings. It returns nil or an
// *Error naming the key.
func (c *Config) validateOperator() error {
	if f := c.Pool.AccessLogFormat; f != "" {
		if _, err := accesslog.Compile(f); err != nil {
			return &Error{Key: "access-log-format", Err: err}
		}
	}
	if err := checkAccessLogDir(c.Pool.AccessLog); err != nil {
		return &Error{Key: "access-log", Err: err}
	}
	if c.StatusPath != "" && (!strings.HasPrefix(c.StatusPath, "/") || c.StatusPath == "/metrics") {
		return &Error{Key: "status-path", Err: fmt.Errorf("%q: want a path that starts with / and is not /metrics, such as /status", c.StatusPath)}
	}
	if c.StatusPath != "" && c.MetricsListen == "" {
		return &Error{Key: "status-path", Err: errors.New("needs --metrics-listen: the page is served there")}
	}
	if c.ControlGroup != "" {
		if _, err := LookupGroup(c.ControlGroup); err != nil {
			return &Error{Key: "control-group", Err: err}
		}
	}
	return nil
}

// checkAccessLogDir returns an error if where is a file whose directory
// does not exist, or a directory itself.
func checkAccessLogDir(where string) error {
	if where == "" || where == "journal" {
		return nil
	}
	if fi, err := os.Stat(where); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory: want the path of a file, such as %s", where, filepath.Join(where, "access.log"))
	}
	dir := filepath.Dir(where)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s: directory %s does not exist (under systemd: LogsDirectory=actd makes /var/log/actd)", where, dir)
	}
	return nil
}

// LookupGroup returns the gid of group name (or a number). It returns an
// error saying the group does not exist.
func LookupGroup(name string) (int, error) {
	g, err := user.LookupGroup(name)
	if err != nil {
		g, err = user.LookupGroupId(name)
	}
	if err != nil {
		return 0, fmt.Errorf("%q: no such group (want a group name from /etc/group or a gid)", name)
	}
	var gid int
	fmt.Sscan(g.Gid, &gid)
	return gid, nil
}
