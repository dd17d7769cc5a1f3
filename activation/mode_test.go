package activation

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestListenMode: a --listen unix: socket file gets the mode asked for,
// whatever the umask (022 here: 0666 needs the chmod after bind), and the
// umask's mode without one; an abstract socket has no file to chmod.
func TestListenMode(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		mode fs.FileMode
		want fs.FileMode
	}{
		{"group", 0o660, 0o660},
		{"everyone", 0o666, 0o666},
		{"owner", 0o600, 0o600},
		{"umask", 0, 0o755},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".sock")
			socks, err := ListenMode([]string{"unix:" + path}, tc.mode)
			if err != nil {
				t.Fatal(err)
			}
			defer Close(socks)
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := info.Mode(); got.Type() != fs.ModeSocket || got.Perm() != tc.want {
				t.Errorf("got %v, want a socket with mode %v", got, tc.want)
			}
		})
	}
	socks, err := ListenMode([]string{"unix:@actd-mode-test" + dir}, 0o660) // dir: a name no other test run has
	if err != nil {
		t.Errorf("abstract socket with a mode: %v, want it opened", err)
	}
	Close(socks)
	if _, err := ListenMode([]string{"unix:" + filepath.Join(dir, "x.sock")}, 0o4755); err == nil || !strings.Contains(err.Error(), "permission bits only") {
		t.Errorf("mode 04755: got %v, want an error asking for permission bits only", err)
	}
}
