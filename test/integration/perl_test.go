//go:build integration

package integration

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// perlApp is the PSGI application of TestPerlPool: it uses a module from
// PERL5LIB (the unit drop-in docs/perl.md shows), answers GET / as the
// built-in handler does (so Activate knows it), and POST /echo with the
// length of the body it read.
const perlApp = `use Web::Greeting;
sub {
    my ($env) = @_;
    if ($env->{PATH_INFO} eq '/echo') {
        my $input = $env->{'psgi.input'};
        my $body = do { local $/; <$input> } // '';
        return [ 200, [ 'Content-Type' => 'text/plain' ], [ "length=" . length($body) . "\n" ] ];
    }
    return [ 200, [ 'Content-Type' => 'text/plain' ], [ "slot=$ENV{ACTD_SLOT} pid=$$ " . Web::Greeting::text() . "\n" ] ];
};
`

// TestPerlPool (issue 14 item 2): a PSGI application runs as actd@web
// under the packaged units, set up as docs/perl.md says: the handler from
// /usr/share/perl5, installed by libplack-handler-actd-perl (no PERL5LIB
// for it), the worker line in
// /etc/actd/web.conf, PERL5LIB and WorkingDirectory= for the application in
// a service drop-in. In exclusive mode (its epoll calls pass the unit's
// system call filter) under the unit's hardening (a dynamic user,
// ProtectSystem=strict, PrivateTmp=), a GET is answered with the
// application's module, and a 2 MiB POST, which the handler buffers in a
// temporary file, comes back whole.
func TestPerlPool(t *testing.T) {
	requireTool(t, "plackup", "libplack-perl")
	a := NewActdBox(t)
	a.InstallPackage(perlPackage)
	a.WriteFile("/srv/web/app.psgi", []byte(perlApp), 0o644)
	a.WriteFile("/srv/web/lib/Web/Greeting.pm", []byte("package Web::Greeting;\nsub text { 'greeting=from-web-lib' }\n1;\n"), 0o644)
	a.Run("chmod", "0755", "/srv/web", "/srv/web/lib", "/srv/web/lib/Web")
	a.WriteFile("/etc/actd/web.conf", []byte("worker = /usr/bin/plackup -s Actd -E deployment /srv/web/app.psgi\naccept = exclusive\nstart-children = 2\n"), 0o644)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	a.WriteFile("/etc/systemd/system/actd@web.socket.d/listen.conf", []byte("[Socket]\nListenStream="+addr+"\n"), 0o644)
	a.WriteFile("/etc/systemd/system/actd@web.service.d/perl.conf",
		[]byte("[Service]\nEnvironment=PERL5LIB=/srv/web/lib\nWorkingDirectory=/srv/web\n"), 0o644)
	a.Run("systemctl", "daemon-reload")
	a.Run("systemctl", "start", "actd@web.socket")
	a.Activate(addr, "actd@web.service")

	client := &http.Client{Timeout: 30 * time.Second}
	cases := []struct {
		name, method, path string
		body               []byte
		want               string
	}{
		{"get", "GET", "/", nil, "greeting=from-web-lib"},
		{"post-2MiB", "POST", "/echo", bytes.Repeat([]byte("p"), 2<<20), fmt.Sprintf("length=%d", 2<<20)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, "http://"+addr+c.path, bytes.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v\n%s", c.method, c.path, err, a.Journal("actd@web.service"))
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), c.want) {
				t.Errorf("%s %s: got %s %q, want 200 and %q\n%s", c.method, c.path, resp.Status, b, c.want, a.Journal("actd@web.service"))
			}
		})
	}
}
