//go:build integration

package integration

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cgroup2Mount returns where the cgroup-v2 hierarchy is mounted, read from
// /proc/self/mountinfo: /sys/fs/cgroup on a pure-v2 host, often
// /sys/fs/cgroup/unified on a hybrid one. It returns "" and no error when
// there is no cgroup2 mount, and an error when mountinfo cannot be read.
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("find cgroup2 mount: %w", err)
	}
	defer f.Close()
	scan := bufio.NewScanner(f)
	for scan.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superopts
		fields := strings.Fields(scan.Text())
		sep := -1
		for i, field := range fields {
			if field == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || sep+1 >= len(fields) {
			continue
		}
		if fields[sep+1] == "cgroup2" && fields[3] == "/" {
			return fields[4], nil
		}
	}
	if err := scan.Err(); err != nil {
		return "", fmt.Errorf("find cgroup2 mount: %w", err)
	}
	return "", nil
}

// newBoxCgroup creates an empty cgroup-v2 directory for one box and removes
// it, with everything systemd created below it, when the test ends (the
// cleanup must run after the box is killed: register it first). It skips t
// when there is no writable cgroup-v2 hierarchy.
func newBoxCgroup(t *testing.T, name string) string {
	t.Helper()
	root, err := cgroup2Mount()
	if err != nil {
		t.Fatal(err)
	}
	if root == "" {
		t.Skip("skipping: no cgroup2 hierarchy mounted (the box needs its own cgroup-v2 directory)")
	}
	dir := filepath.Join(root, fmt.Sprintf("actd-it-%d-%s", os.Getpid(), name))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("skipping: cgroup v2 at %s is not writable: %v", root, err)
	}
	t.Cleanup(func() {
		if err := removeCgroupTree(dir, 10*time.Second); err != nil {
			t.Errorf("tear down box cgroup: %v", err)
		}
	})
	return dir
}

// removeCgroupTree removes dir and every cgroup below it, deepest first.
// Processes of a killed box may take a moment to leave, so it retries until
// timeout. It returns nil when dir is gone (or never existed), and the last
// rmdir error otherwise.
func removeCgroupTree(dir string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := removeCgroupDirs(dir)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// removeCgroupDirs makes one bottom-up pass of rmdir over dir's subtree.
func removeCgroupDirs(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("walk %s: %w", dir, err)
	}
	// Longer paths are deeper: remove them first.
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	var last error
	for _, d := range dirs {
		if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			last = fmt.Errorf("rmdir %s: %w", d, err)
		}
	}
	return last
}

// staleCgroup matches the cgroup of a box and the PID of the test binary
// that made it.
var staleCgroup = regexp.MustCompile(`^actd-it-(\d+)-`)

// sweepStaleCgroups removes box cgroups left behind by test binaries that
// died before their cleanups ran (their boxes died with them: unshare has
// Pdeathsig and --kill-child). It only touches directories named after a
// PID that no longer exists, and returns the first error.
func sweepStaleCgroups() error {
	root, err := cgroup2Mount()
	if err != nil || root == "" {
		return err
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return fmt.Errorf("sweep stale box cgroups: %w", err)
	}
	var first error
	for _, e := range entries {
		m := staleCgroup.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		if pid == os.Getpid() || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		if err := removeCgroupTree(filepath.Join(root, e.Name()), 5*time.Second); err != nil && first == nil {
			first = err
		}
	}
	return first
}
