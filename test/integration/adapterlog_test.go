//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// logWSGIApp is the WSGI application of the adapter log tests: it answers
// every path as the built-in handler does (so Activate knows it), and
// raises from a nested call for /boom, so its traceback has several frames.
const logWSGIApp = `import os


def deep():
    raise RuntimeError("the application broke")


def app(environ, start_response):
    if environ["PATH_INFO"] == "/boom":
        deep()
    body = ("slot=%s pid=%d\n" % (os.environ["ACTD_SLOT"], os.getpid())).encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
`

// logPSGIApp is logWSGIApp's twin in Perl: it dies for /boom with an
// error of several lines, as Carp::confess gives.
const logPSGIApp = `sub {
    my ($env) = @_;
    die "the application broke\n\tmain::deep() called at app.psgi line 4\n" if $env->{PATH_INFO} eq '/boom';
    return [ 200, [ 'Content-Type' => 'text/plain' ], [ "slot=$ENV{ACTD_SLOT} pid=$$\n" ] ];
};
`

// The adapter log tests' requests: both carry a query string that must
// reach neither the access log nor the error log.
const (
	logQuery     = "token=sekrit"
	logPath      = "/hello"
	logErrorPath = "/boom"
)

// TestAdapterJournal (issue 25, "Tests and benchmark"): for each language
// adapter the packages ship (WSGI through python3-actd, PSGI through
// libplack-handler-actd-perl), a pool with access-log = journal under the
// packaged actd@NAME units puts one native-protocol entry at priority 6 per
// request, with the HTTP_* fields and REMOTE_ADDR and without the query
// string; an application exception is one entry at priority 3 (err)
// holding the whole traceback and the request without its query string,
// which `journalctl -p err -u actd@NAME` finds. The Go library has no
// program in the packages, so it is covered by its process tests only.
func TestAdapterJournal(t *testing.T) {
	requireTool(t, "python3", "python3")
	requireTool(t, "plackup", "libplack-perl")
	a := NewActdBox(t)
	a.InstallPackage(pythonPackage)
	a.InstallPackage(perlPackage)
	a.WriteFile("/srv/log/app.py", []byte(logWSGIApp), 0o644)
	a.WriteFile("/srv/log/app.psgi", []byte(logPSGIApp), 0o644)
	a.Run("chmod", "0755", "/srv/log")
	kinds := []struct {
		name, worker string
		trace        []string // what the error entry must hold, in this order
	}{
		{"wsgi", "/usr/bin/python3 -m actd.wsgi --chdir /srv/log app:app",
			[]string{"GET " + logErrorPath, "Traceback (most recent call last):", "in app", "in deep", "RuntimeError: the application broke"}},
		{"psgi", "/usr/bin/plackup -s Actd -E deployment /srv/log/app.psgi",
			[]string{"GET " + logErrorPath, "the application broke", "main::deep() called at app.psgi line 4"}},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			unit := "actd@" + k.name + ".service"
			addr := a.startLogPool(k.name, k.worker, "access-log = journal\n", "")
			if status := logRequest(t, a, unit, addr, logPath+"?"+logQuery); status != http.StatusOK {
				t.Fatalf("GET %s?%s: got %d, want 200", logPath, logQuery, status)
			}
			checkAccessEntry(t, a, unit)
			if status := logRequest(t, a, unit, addr, logErrorPath+"?"+logQuery); status != http.StatusInternalServerError {
				t.Errorf("GET %s?%s: got %d, want 500", logErrorPath, logQuery, status)
			}
			checkErrorEntry(t, a, unit, k.trace)
		})
	}
}

// startLogPool writes pool's config (worker, then config), its socket
// drop-in on a free port and, if service is not empty, a service drop-in,
// starts its socket, activates it and returns its address.
func (a *ActdBox) startLogPool(pool, worker, config, service string) string {
	a.t.Helper()
	a.WriteFile("/etc/actd/"+pool+".conf", []byte("worker = "+worker+"\nstart-children = 1\n"+config), 0o644)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(a.t))
	a.WriteFile("/etc/systemd/system/actd@"+pool+".socket.d/listen.conf", []byte("[Socket]\nListenStream="+addr+"\n"), 0o644)
	if service != "" {
		a.WriteFile("/etc/systemd/system/actd@"+pool+".service.d/log.conf", []byte("[Service]\n"+service), 0o644)
	}
	a.Run("systemctl", "daemon-reload")
	a.Run("systemctl", "start", "actd@"+pool+".socket")
	a.Activate(addr, "actd@"+pool+".service")
	return addr
}

// logRequest sends GET target to addr and returns the status; it fails t
// when there is no answer.
func logRequest(t *testing.T, a *ActdBox, unit, addr, target string) int {
	t.Helper()
	status, _, err := pythonRequest("GET", "http://"+addr+target, nil)
	if err != nil {
		t.Fatalf("GET %s: %v\n%s", target, err, a.Journal(unit))
	}
	return status
}

// journalEntries returns unit's journal entries (journalctl -o json) that
// match the journalctl arguments match, waiting up to 10 s for at least n.
func journalEntries(a *ActdBox, unit string, n int, match ...string) []map[string]any {
	var entries []map[string]any
	deadline := time.Now().Add(10 * time.Second)
	for len(entries) < n && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		entries = nil
		args := append([]string{"journalctl", "--no-pager", "-o", "json", "-u", unit}, match...)
		out, _ := a.RunErr(args...)
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var e map[string]any
			if json.Unmarshal([]byte(line), &e) == nil {
				entries = append(entries, e)
			}
		}
	}
	return entries
}

// checkAccessEntry checks the access-log entry of GET logPath?logQuery in
// unit's journal.
func checkAccessEntry(t *testing.T, a *ActdBox, unit string) {
	t.Helper()
	entries := journalEntries(a, unit, 1, "HTTP_PATH="+logPath)
	if len(entries) != 1 {
		t.Fatalf("got %d access-log entries with HTTP_PATH=%s, want 1:\n%v\n%s", len(entries), logPath, entries, a.Journal(unit))
	}
	e := entries[0]
	msg, _ := e["MESSAGE"].(string)
	want := map[string]string{"PRIORITY": "6", "HTTP_STATUS": "200", "HTTP_METHOD": "GET", "HTTP_PATH": logPath, "REMOTE_ADDR": "127.0.0.1"}
	for k, v := range want {
		if e[k] != v {
			t.Errorf("access-log entry %s: got %v, want %s", k, e[k], v)
		}
	}
	for _, k := range []string{"HTTP_BYTES", "HTTP_DURATION_US"} {
		if s, _ := e[k].(string); s == "" || strings.Trim(s, "0123456789") != "" {
			t.Errorf("access-log entry %s: got %v, want a number", k, e[k])
		}
	}
	if !strings.Contains(msg, `"GET `+logPath+` HTTP/1.1" 200 `) || strings.Contains(msg, logQuery) {
		t.Errorf("access-log MESSAGE: got %q, want the Combined line with \"GET %s HTTP/1.1\" 200 and no query string", msg, logPath)
	}
}

// checkErrorEntry checks that the exception of GET logErrorPath?logQuery is
// one entry at priority err in unit's journal, found by journalctl -p err,
// holding trace in order and no query string.
func checkErrorEntry(t *testing.T, a *ActdBox, unit string, trace []string) {
	t.Helper()
	entries := journalEntries(a, unit, 1, "-p", "err")
	var found []map[string]any
	for _, e := range entries {
		if msg, _ := e["MESSAGE"].(string); strings.Contains(msg, "the application broke") || strings.Contains(msg, "Traceback") {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		t.Fatalf("journalctl -p err -u %s: got %d entries of the exception, want 1 holding the whole traceback:\n%v\n%s", unit, len(found), found, a.Journal(unit))
	}
	msg, _ := found[0]["MESSAGE"].(string)
	if found[0]["PRIORITY"] != "3" {
		t.Errorf("error entry PRIORITY: got %v, want 3", found[0]["PRIORITY"])
	}
	rest := msg
	for _, w := range trace {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("error entry: got %q, want %q in it (after what came before: %q)", msg, w, trace)
			break
		}
		rest = rest[i+len(w):]
	}
	if all, _ := a.RunErr("journalctl", "--no-pager", "-o", "cat", "-u", unit); strings.Contains(all, logQuery) {
		t.Errorf("journal of %s: got the query string %q in it, want it nowhere (it may carry secrets):\n%s", unit, logQuery, all)
	}
}

// TestWSGIAccessLogFileReopened: TestAccessLogFileReopened with a WSGI
// application (python3-actd): access-log = FILE in LogsDirectory=, the file
// renamed, `systemctl reload`, and the next line is in a new file, the
// renamed one keeps its own.
func TestWSGIAccessLogFileReopened(t *testing.T) {
	requireTool(t, "python3", "python3")
	a := NewActdBox(t)
	a.InstallPackage(pythonPackage)
	a.WriteFile("/srv/log/app.py", []byte(logWSGIApp), 0o644)
	a.Run("chmod", "0755", "/srv/log")
	const file = "/var/log/actd/wsgi.log"
	unit := "actd@wsgi.service"
	addr := a.startLogPool("wsgi", "/usr/bin/python3 -m actd.wsgi --chdir /srv/log app:app",
		"access-log = "+file+"\n", "LogsDirectory=actd\n")
	waitLines := func(path, target string) []string {
		t.Helper()
		var lines []string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			out, _ := a.RunErr("cat", "--", path)
			lines = strings.Split(strings.TrimSpace(out), "\n")
			if strings.Contains(out, `"GET `+target+` HTTP/1.1" 200 `) {
				return lines
			}
		}
		t.Fatalf("%s: got %q, want an access-log line for GET %s\n%s", path, lines, target, a.Journal(unit))
		return nil
	}
	waitLines(file, "/") // Activate's request
	a.Run("mv", file, file+".1")
	a.Run("systemctl", "reload", unit)
	if status := logRequest(t, a, unit, addr, logPath); status != http.StatusOK {
		t.Fatalf("GET %s after the reload: got %d, want 200", logPath, status)
	}
	if lines := waitLines(file, logPath); len(lines) != 1 {
		t.Errorf("after the reload: got %q, want the one new line in a new file", lines)
	}
	if old := waitLines(file+".1", "/"); len(old) != 1 {
		t.Errorf("the renamed file: got %q, want its one line only", old)
	}
}
