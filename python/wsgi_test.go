package python_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/actd/actd/internal/pooltest"
)

var modes = []string{"dispatch", "exclusive"}

// TestUnittest runs the adapter's own Python unit tests (python/tests).
func TestUnittest(t *testing.T) {
	py := python(t)
	cmd := exec.Command(py, "-m", "unittest", "discover", "-s", "tests", "-t", "tests")
	cmd.Env = append(os.Environ(), "PYTHONPATH=.:tests", "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "\nOK") {
		t.Errorf("python3 -m unittest: got %s, want OK", out)
	}
}

// requestKinds are raw requests to testdata/validated.py and the bodies of
// the responses they must get, in order, on one connection.
var requestKinds = []struct {
	name    string
	raw     string
	methods []string
	bodies  []string
}{
	{"get", "GET /echo?a=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", nil, []string{"GET /echo a=1 "}},
	{"http/1.0", "GET /echo HTTP/1.0\r\n\r\n", nil, []string{"GET /echo  "}},
	{"head", "HEAD /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", []string{"HEAD"}, []string{""}},
	{"post with length", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello", nil,
		[]string{"POST /echo  hello"}},
	{"post chunked", "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
		"3\r\nhel\r\n2;x=y\r\nlo\r\n0\r\nTrailer: 1\r\n\r\n", nil, []string{"POST /echo  hello"}},
	{"streamed", "GET /stream HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", nil, []string{"one two three"}},
	{"keep-alive pipelined", "GET /echo?1 HTTP/1.1\r\nHost: x\r\n\r\nHEAD /echo HTTP/1.1\r\nHost: x\r\n\r\n" +
		"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nxGET /stream HTTP/1.1\r\nHost: x\r\n\r\n" +
		"GET /echo?last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", []string{"GET", "HEAD"},
		[]string{"GET /echo 1 ", "", "POST /echo  x", "one two three", "GET /echo last "}},
}

// TestValidatedUnderActd sends every request kind to an application wrapped
// in wsgiref.validate under actd, in both modes: each gets its answer (a
// server that breaks PEP 3333 gets 500 from the validator) and no
// traceback reaches the log.
func TestValidatedUnderActd(t *testing.T) {
	py := python(t)
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			p := startPool(t, mode, []string{py, "-m", "actd.wsgi", "validated:app"})
			checkRequestKinds(t, p.addr)
			checkExpectContinue(t, p)
			checkConcurrent(t, p)
			for _, line := range strings.Split(p.LogText(t), "\n") {
				complaint := strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR")
				if strings.Contains(line, "Traceback") || complaint && !strings.Contains(line, "event=overload") {
					t.Errorf("log: got %s, want no traceback or complaint", line)
				}
			}
			if err := p.Stop(); err != nil {
				t.Errorf("SIGTERM: got %v, want exit status 0", err)
			}
		})
	}
}

// checkConcurrent sends clients×perClient requests at once, each on its
// own connection: more than the children, so that dispatch mode orders
// "keep accepting" and exclusive mode accepts in bursts. Every request must
// be answered, and no child killed for a message out of place (the caller
// reads the log: an overload warning is fine, a burst may well find every
// child busy for a moment).
func checkConcurrent(t *testing.T, p *pool) {
	t.Helper()
	const clients, perClient = 8, 25
	errs := make(chan error, clients*perClient)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := range perClient {
				got, err := exchange(p.addr, fmt.Sprintf("GET /echo?%d.%d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", c, i))
				if err == nil && (len(got) != 1 || got[0].body != fmt.Sprintf("GET /echo %d.%d ", c, i)) {
					err = fmt.Errorf("request %d.%d: got %+v", c, i, got)
				}
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func checkBodies(t *testing.T, got []reply, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d responses %+v, want %d", len(got), got, len(want))
	}
	for i, r := range got {
		if r.status != 200 || r.body != want[i] {
			t.Errorf("response %d: got %d %q, want 200 %q", i, r.status, r.body, want[i])
		}
	}
}

// checkExpectContinue sends a head with Expect: 100-continue and the body
// only after the interim 100 response.
func checkExpectContinue(t *testing.T, p *pool) {
	t.Helper()
	conn, err := dial(p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n")
	buf := make([]byte, 64)
	n, err := conn.Read(buf)
	if want := "HTTP/1.1 100 Continue\r\n\r\n"; string(buf[:n]) != want {
		t.Fatalf("after Expect: got %q, %v; want %q", buf[:n], err, want)
	}
	fmt.Fprint(conn, "body")
	got, err := readAll(conn)
	if err != nil {
		t.Fatal(err)
	}
	checkBodies(t, got, []string{"PUT /echo  body"})
}

// TestMalformed: a malformed request gets its 4xx/5xx and a closed
// connection, and the same child goes on serving.
func TestMalformed(t *testing.T) {
	py := python(t)
	cases := []struct {
		name   string
		raw    string
		status int
	}{
		{"garbage", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 400},
		{"no version", "GET /\r\n\r\n", 400},
		{"space before colon", "GET / HTTP/1.1\r\nHost: x\r\nHost : x\r\n\r\n", 400},
		{"length and chunked", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
		{"two lengths", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", 400},
		{"bad chunk size", "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nnothex\r\n", 400},
		{"head too large", "GET / HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("a", 40000) + "\r\n\r\n", 431},
		{"request line too long", "GET /" + strings.Repeat("a", 9000) + " HTTP/1.1\r\nHost: x\r\n\r\n", 414},
		{"http/2", "GET / HTTP/2.0\r\n\r\n", 505},
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			p := startPool(t, mode, []string{py, "-m", "actd.wsgi", "validated:app"},
				"--start-children", "1", "--min-spare", "0", "--max-spare", "1", "--min-children", "1")
			before := pidOf(t, p)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					got, err := exchange(p.addr, c.raw+"GET /echo HTTP/1.1\r\nHost: x\r\n\r\n")
					if err != nil {
						t.Fatal(err)
					}
					if len(got) != 1 || got[0].status != c.status || !got[0].close {
						t.Fatalf("got %+v, want one %d with Connection: close", got, c.status)
					}
				})
			}
			if after := pidOf(t, p); after != before {
				t.Errorf("after the malformed requests: served by pid %s, want %s (the same child)", after, before)
			}
		})
	}
}

func pidOf(t *testing.T, p *pool) string {
	t.Helper()
	got, err := exchange(p.addr, "GET /pid HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	if err != nil || len(got) != 1 || got[0].status != 200 {
		t.Fatalf("GET /pid: got %+v, %v", got, err)
	}
	return got[0].body
}

// TestRequestReport: a request that runs shows in `actd status` with its
// method and path (not its query); one that outlives --busy-timeout is named in the SIGQUIT log line,
// and the child dumps its Python traceback to the log.
func TestRequestReport(t *testing.T) {
	py := python(t)
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			p := startPool(t, mode, []string{py, "-m", "actd.wsgi", "validated:app"},
				"--busy-timeout", "1s", "--busy-kill-grace", "1s")
			release := filepath.Join(t.TempDir(), "release")
			done := make(chan error, 1)
			go func() {
				_, err := exchange(p.addr, "GET /slow?"+release+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
				done <- err
			}()
			want := "GET /slow" // without the query (the file's name): it may carry tokens
			if _, err := p.WaitStatus(func(d statusDoc) bool { return hasRequest(d, want) }); err != nil {
				t.Errorf("status: want a slot serving %q: %v", want, err)
			}
			os.WriteFile(release, nil, 0o644)
			if err := <-done; err != nil {
				t.Errorf("slow request: %v", err)
			}
			go exchange(p.addr, "GET /hang HTTP/1.1\r\nHost: x\r\n\r\n")
			p.waitLog(t, `msg="busy too long: SIGQUIT"`, `request="GET /hang"`,
				"most recent call first", `validated.py", line`)
		})
	}
}

func hasRequest(d statusDoc, want string) bool {
	for _, s := range d.Pool.Slots {
		if s.State == "B" && s.Request == want {
			return true
		}
	}
	return false
}

// TestConfigFile runs the adapter from a config file, as docs/python.md
// shows it: the interpreter by its path, the application with --chdir.
func TestConfigFile(t *testing.T) {
	py := python(t)
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	addr := pooltest.FreeAddr(t)
	conf := filepath.Join(t.TempDir(), "web.conf")
	text := fmt.Sprintf("listen = %s\naccept = exclusive\nmax-children = 2\nworker = %s -m actd.wsgi --chdir %s validated:app\n",
		addr, py, dir)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(pooltest.Actd(t), "check-config", conf).CombinedOutput(); err != nil {
		t.Fatalf("actd check-config: %v\n%s", err, out)
	}
	p := startActd(t, addr, "--config", conf)
	got, err := exchange(p.addr, "GET /echo?conf HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	if err != nil {
		t.Fatal(err)
	}
	checkBodies(t, got, []string{"GET /echo conf "})
}

// frameworkCases are requests to the Flask and Django test applications.
type frameworkCase struct {
	raw    string
	status int
	body   string // a substring of the body
}

// TestFlask serves testdata/flaskapp.py (Debian python3-flask) in both modes.
func TestFlask(t *testing.T) {
	py := python(t)
	needModule(t, py, "flask", "python3-flask")
	cases := []frameworkCase{
		{"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 200, "hello from flask"},
		{"GET /user/ada HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\n\r\n", 200, `"user":"ada"`},
		{"POST /form HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n" +
			"Transfer-Encoding: chunked\r\n\r\n8\r\nname=bob\r\n0\r\n\r\n", 200, `"name":"bob"`},
		{"POST /form HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n" +
			"Content-Length: 8\r\n\r\nname=eve", 200, `"name":"eve"`},
		{"GET /missing HTTP/1.1\r\nHost: x\r\n\r\n", 404, "Not Found"},
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			p := startPool(t, mode, []string{py, "-m", "actd.wsgi", "flaskapp:app"})
			checkFramework(t, p, cases)
		})
	}
}

// TestDjango serves a project made by `django-admin startproject` (Debian
// python3-django), with one view added, in both modes: the view, the admin
// login page (templates, CSRF cookie) and Django's own 404.
func TestDjango(t *testing.T) {
	py := python(t)
	needModule(t, py, "django", "python3-django")
	dir := t.TempDir()
	if out, err := exec.Command(py, "-m", "django", "startproject", "mysite", dir).CombinedOutput(); err != nil {
		t.Fatalf("django startproject: %v\n%s", err, out)
	}
	addDjangoView(t, filepath.Join(dir, "mysite", "urls.py"))
	cases := []frameworkCase{
		{"GET /hello/?name=ada HTTP/1.1\r\nHost: localhost\r\n\r\n", 200, "hello ada from django"},
		{"POST /hello/ HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\n" +
			"Content-Length: 8\r\n\r\nname=bob", 200, "hello bob from django"},
		{"GET /admin/login/ HTTP/1.1\r\nHost: localhost\r\n\r\n", 200, "Django administration"},
		{"GET /nowhere/ HTTP/1.1\r\nHost: localhost\r\n\r\n", 404, "Page not found"}, // DEBUG is on in a new project
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			p := startPool(t, mode, []string{py, "-m", "actd.wsgi", "--chdir", dir, "mysite.wsgi:application"})
			checkFramework(t, p, cases)
		})
	}
}

// addDjangoView appends a view at /hello/ to a startproject urls.py.
func addDjangoView(t *testing.T, urls string) {
	t.Helper()
	view := `
from django.http import HttpResponse
from django.views.decorators.csrf import csrf_exempt


@csrf_exempt
def hello(request):
    name = request.POST.get("name") or request.GET.get("name", "")
    return HttpResponse(f"hello {name} from django\n")


urlpatterns.append(path("hello/", hello))
`
	f, err := os.OpenFile(urls, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(view); err != nil {
		t.Fatal(err)
	}
}

// checkFramework sends each case twice: alone on a connection, and all
// together pipelined on one keep-alive connection.
func checkFramework(t *testing.T, p *pool, cases []frameworkCase) {
	t.Helper()
	var all strings.Builder
	for _, c := range cases {
		got, err := exchange(p.addr, strings.Replace(c.raw, "\r\n", "\r\nConnection: close\r\n", 1))
		if err != nil {
			t.Fatal(err)
		}
		checkFrameworkReply(t, got, c)
		all.WriteString(c.raw)
	}
	all.WriteString("GET /end HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
	got, err := exchange(p.addr, all.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(cases)+1 {
		t.Fatalf("pipelined: got %d responses, want %d", len(got), len(cases)+1)
	}
	for i, c := range cases {
		checkFrameworkReply(t, got[i:i+1], c)
	}
	if log := p.LogText(t); strings.Contains(log, "Traceback") {
		t.Errorf("log: got a traceback, want none:\n%s", log)
	}
}

func checkFrameworkReply(t *testing.T, got []reply, c frameworkCase) {
	t.Helper()
	first, _, _ := strings.Cut(c.raw, "\r\n")
	if len(got) != 1 || got[0].status != c.status || !strings.Contains(got[0].body, c.body) {
		t.Errorf("%s: got %+v, want one %d with %q", first, got, c.status, c.body)
	}
}

// checkRequestKinds sends each of requestKinds to addr, a subtest each, and
// checks the bodies that come back.
func checkRequestKinds(t *testing.T, addr string) {
	for _, k := range requestKinds {
		t.Run(k.name, func(t *testing.T) {
			got, err := exchange(addr, k.raw, k.methods...)
			if err != nil {
				t.Fatal(err)
			}
			checkBodies(t, got, k.bodies)
		})
	}
}
