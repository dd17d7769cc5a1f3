package prefork

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestTLSFiles: certificates go to the listeners they name (a named one
// before the one for all), each in a sealed memfd holding the bundle;
// ACTD_TLS names the fds from the first extra one; a name no listener
// has is a *FieldError for tls-cert.
func TestTLSFiles(t *testing.T) {
	ls := []*listener{{Listener: Listener{Name: "web"}}, {Listener: Listener{Name: "api"}}, {Listener: Listener{Name: "admin"}}}
	all := map[string][]byte{"": []byte("all")}
	api := map[string][]byte{"api": []byte("api")}
	both := map[string][]byte{"": []byte("all"), "api": []byte("api")}
	for _, tc := range []struct {
		name   string
		certs  map[string][]byte
		env    string
		bodies []string
		err    bool
	}{
		{"none", nil, "", nil, false},
		{"one named", api, "ACTD_TLS=1=7", []string{"api"}, false},
		{"all", all, "ACTD_TLS=0=7 1=8 2=9", []string{"all", "all", "all"}, false},
		{"named wins", both, "ACTD_TLS=0=7 1=8 2=9", []string{"all", "api", "all"}, false},
		{"unknown name", map[string][]byte{"www": []byte("x")}, "", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, err := newTLSFiles(tc.certs, ls)
			var fe *FieldError
			if tc.err {
				if !errors.As(err, &fe) || fe.Field != "tls-cert" {
					t.Fatalf("got %v, want a *FieldError for tls-cert", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer files.close()
			if got := files.env(7); got != tc.env {
				t.Errorf("env: got %q, want %q", got, tc.env)
			}
			var bodies []string
			for _, fd := range files.fds {
				b, err := os.ReadFile("/proc/self/fd/" + itoa(fd))
				if err != nil {
					t.Fatal(err)
				}
				bodies = append(bodies, string(b))
				if _, err := unix.Pwrite(fd, []byte("x"), 0); err == nil {
					t.Errorf("memfd %d: a write succeeded, want it sealed", fd)
				}
			}
			if strings.Join(bodies, ",") != strings.Join(tc.bodies, ",") {
				t.Errorf("memfds hold %q, want %q", bodies, tc.bodies)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
