package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// peer is a Debian package the suite needs and a file that shows it is
// installed.
type peer struct {
	pkg, file string
}

// peers lists what the suite runs besides Go: the load generator, the peer
// servers, and a C compiler for the inetd responder.
var peers = []peer{
	{"wrk", "/usr/bin/wrk"},
	{"apache2", "/usr/sbin/apache2"},
	{"python3-gunicorn", "/usr/lib/python3/dist-packages/gunicorn/__init__.py"},
	{"systemd", "/usr/bin/systemd-socket-activate"},
	{"gcc", "/usr/bin/cc"},
	{"uwsgi-core", "/usr/bin/uwsgi-core"},
	{"uwsgi-plugin-python3", "/usr/lib/uwsgi/plugins/python3_plugin.so"},
	{"libplack-perl", "/usr/bin/plackup"},
	{"starman", "/usr/bin/starman"},
}

// missingPeers returns the packages whose file is absent.
func missingPeers() []string {
	var missing []string
	for _, p := range peers {
		if _, err := os.Stat(p.file); err != nil {
			missing = append(missing, p.pkg)
		}
	}
	return missing
}

// installPeers installs the missing packages with apt-get, retrying while
// another apt holds its lock. It returns nil if nothing is missing
// afterwards, or an error naming what is.
func installPeers() error {
	missing := missingPeers()
	if len(missing) == 0 {
		return nil
	}
	fmt.Fprintf(os.Stderr, "installing %s with apt-get\n", strings.Join(missing, " "))
	if os.Geteuid() != 0 {
		return fmt.Errorf("missing %s; run as root or apt-get install them", strings.Join(missing, " "))
	}
	steps := [][]string{
		{"apt-get", "-q", "update"},
		append([]string{"apt-get", "-q", "-y", "--no-install-recommends", "install"}, missing...),
	}
	for _, step := range steps {
		if err := aptWithRetry(step); err != nil {
			return err
		}
	}
	if still := missingPeers(); len(still) > 0 {
		return fmt.Errorf("still missing after apt-get: %s", strings.Join(still, " "))
	}
	return nil
}

// aptWithRetry runs an apt-get command line, trying again up to 20 times
// at 6-second intervals while it fails to get apt's lock. It returns nil or
// the last error with apt's output.
func aptWithRetry(args []string) error {
	var out []byte
	var err error
	for range 20 {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err = cmd.CombinedOutput()
		if err == nil {
			return nil
		}
		if !strings.Contains(string(out), "Could not get lock") {
			break
		}
		time.Sleep(6 * time.Second)
	}
	return fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, out)
}
