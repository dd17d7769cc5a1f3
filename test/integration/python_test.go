//go:build integration

package integration

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// pythonApp is the Flask application of TestPythonPool: it imports a module
// from PYTHONPATH (the unit drop-in docs/python.md shows), answers GET / as
// the built-in handler does (so Activate knows it), echoes the body of
// POST /echo, and holds GET /slow for slowRequest, long enough to be seen
// in actd status.
const pythonApp = `import os
import time

from flask import Flask, request

import greeting

app = Flask(__name__)


@app.get("/")
def index():
    return "slot=%s pid=%d %s\n" % (os.environ["ACTD_SLOT"], os.getpid(), greeting.text())


@app.post("/echo")
def echo():
    return request.get_data(), 200, {"Content-Type": "application/octet-stream"}


@app.get("/slow")
def slow():
    time.sleep(float(request.args["s"]))
    return "slow done\n"
`

// pythonDropIn is docs/python.md's drop-in for actd@NAME.service, with the
// application's own library on PYTHONPATH.
const pythonDropIn = `[Service]
WorkingDirectory=/srv/web
Environment=PYTHONPATH=/srv/web/lib
Environment=PYTHONDONTWRITEBYTECODE=1
Environment=PYTHONUNBUFFERED=1
`

// slowRequest is how long GET /slow takes: the bound of the wait for it in
// actd status.
const slowRequest = 5 * time.Second

// TestPythonPool (the twin of TestPerlPool): a Flask application runs as a
// named pool under the packaged units, set up as docs/python.md says:
// python3-actd installed (its postinst byte-compiles the package, as the
// pool's dynamic user cannot under ProtectSystem=strict), the worker line
// in /etc/actd/NAME.conf, WorkingDirectory= and PYTHONPATH in a service
// drop-in. In dispatch mode behind the http accept filter, in exclusive
// mode (with accept-filter data, as docs/python.md recommends) and with
// preload (a zygote), under the unit's hardening (a dynamic user,
// ProtectSystem=strict,
// the system call filter), a GET is answered with the application's
// module, a 1 MiB POST body comes back whole, and a request in hand is
// shown in actd status. Removing python3-actd removes the byte code.
func TestPythonPool(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import flask").Run(); err != nil {
		t.Skipf("skipping: Debian's python3 with Flask needed (install python3-flask): %v", err)
	}
	a := NewActdBox(t)
	a.InstallPackage(pythonPackage)
	if out := a.Run("find", "/usr/lib/python3/dist-packages/actd/__pycache__", "-name", "wsgi.cpython-*.pyc"); out == "" {
		t.Errorf("after dpkg -i %s: got no __pycache__/wsgi.cpython-*.pyc, want postinst's py3compile to make it", pythonPackage)
	}
	a.WriteFile("/srv/web/app.py", []byte(pythonApp), 0o644)
	a.WriteFile("/srv/web/lib/greeting.py", []byte("def text():\n    return 'greeting=from-web-lib'\n"), 0o644)
	a.Run("chmod", "0755", "/srv/web", "/srv/web/lib")

	modes := []struct{ pool, config string }{
		{"web", "accept = dispatch\naccept-filter = http\n"},
		{"webx", "accept = exclusive\naccept-filter = data\n"}, // docs/python.md: TCP_DEFER_ACCEPT on the socket systemd passed
		{"webp", "accept = dispatch\npreload = true\n"},        // a zygote forks the children
	}
	var units []string
	for _, m := range modes {
		units = append(units, "actd@"+m.pool+".socket", "actd@"+m.pool+".service")
		t.Run(m.pool, func(t *testing.T) {
			addr := a.startPythonPool(m.pool, m.config)
			checkPythonPool(t, a, m.pool, addr)
		})
	}

	t.Run("remove", func(t *testing.T) {
		a.Run(append([]string{"systemctl", "stop"}, units...)...)
		a.Run("dpkg", "-r", pythonPackage)
		if a.exists("/usr/lib/python3/dist-packages/actd") {
			t.Errorf("after dpkg -r %s: /usr/lib/python3/dist-packages/actd still there, want prerm's py3clean to leave nothing", pythonPackage)
		}
	})
}

// startPythonPool writes pool's config (the Flask app under python3 -m
// actd.wsgi, then config), its socket drop-in on a free port and
// docs/python.md's service drop-in, starts its socket, activates it and
// returns its address.
func (a *ActdBox) startPythonPool(pool, config string) string {
	a.t.Helper()
	worker := "worker = /usr/bin/python3 -m actd.wsgi --chdir /srv/web app:app\nstart-children = 2\n"
	a.WriteFile("/etc/actd/"+pool+".conf", []byte(worker+config), 0o644)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(a.t))
	a.WriteFile("/etc/systemd/system/actd@"+pool+".socket.d/listen.conf", []byte("[Socket]\nListenStream="+addr+"\n"), 0o644)
	a.WriteFile("/etc/systemd/system/actd@"+pool+".service.d/python.conf", []byte(pythonDropIn), 0o644)
	a.Run("systemctl", "daemon-reload")
	a.Run("systemctl", "start", "actd@"+pool+".socket")
	a.Activate(addr, "actd@"+pool+".service")
	return addr
}

// checkPythonPool sends pool at addr a GET, a POST to echo and a slow GET
// that it must find in actd status while in hand.
func checkPythonPool(t *testing.T, a *ActdBox, pool, addr string) {
	unit := "actd@" + pool + ".service"
	body := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	cases := []struct {
		name, method, path string
		body               []byte
		want               []byte
	}{
		{"get", "GET", "/", nil, []byte("greeting=from-web-lib")},
		{"post-1MiB", "POST", "/echo", body, body},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, got, err := pythonRequest(c.method, "http://"+addr+c.path, c.body)
			if err != nil {
				t.Fatalf("%s %s: %v\n%s", c.method, c.path, err, a.Journal(unit))
			}
			if status != http.StatusOK || !bytes.Contains(got, c.want) {
				t.Errorf("%s %s: got %d and %d bytes %.80q, want 200 and %d bytes %.80q\n%s",
					c.method, c.path, status, len(got), got, len(c.want), c.want, a.Journal(unit))
			}
		})
	}
	t.Run("status", func(t *testing.T) {
		path := fmt.Sprintf("/slow?s=%g", slowRequest.Seconds())
		done := make(chan error, 1)
		go func() {
			_, _, err := pythonRequest("GET", "http://"+addr+path, nil)
			done <- err
		}()
		out := a.waitStatusShows(pool, "GET /slow", slowRequest)
		if !strings.Contains(out, "GET /slow") || strings.Contains(out, "?s=") {
			t.Errorf("actd status %s while GET %s is in hand: got\n%s\nwant a busy slot showing GET /slow, without the query string (it may carry secrets)", pool, path, out)
		}
		if err := <-done; err != nil {
			t.Errorf("GET %s: %v", path, err)
		}
	})
}

// pythonRequest sends one request and returns the status and the body.
func pythonRequest(method, url string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	return resp.StatusCode, got, err
}

// waitStatusShows runs actd status POOL in the box until its output holds
// want or timeout passes, and returns the last output.
func (a *ActdBox) waitStatusShows(pool, want string, timeout time.Duration) string {
	a.t.Helper()
	var out string
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		out, _ = a.RunErr(actdBinary, "status", pool)
		if strings.Contains(out, want) {
			break
		}
	}
	return out
}
