package main

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// fact is one line of the machine description.
type fact struct {
	name, value string
}

// machineFacts describes the machine, the toolchain, the peers' versions and
// the commit under test (and the -actd-before checkout's, if before is set).
// Facts that cannot be read say "unknown".
func machineFacts(root, before string) []fact {
	facts := []fact{
		{"date", time.Now().UTC().Format("2006-01-02 15:04 UTC")},
		{"commit", commit(root)},
		{"CPU", cpuModel()},
		{"nproc", strconv.Itoa(runtime.NumCPU())},
		{"memory", memTotal()},
		{"kernel", kernel()},
		{"OS", osRelease()},
		{"Go", runtime.Version()},
		{"wrk", firstLine("wrk", "-v")},
		{"Apache", apacheVersion()},
		{"gunicorn", firstLine("/usr/bin/python3", "-c", "import gunicorn, sys; print('gunicorn', gunicorn.__version__, 'on Python', sys.version.split()[0])")},
		{"systemd", firstLine("/usr/bin/systemd-socket-activate", "--version")},
		{"uWSGI", firstLine("/usr/bin/uwsgi-core", "--version")},
		{"Perl", firstLine("perl", "-MPlack", "-MStarman", "-e", "print qq(Perl $^V, Plack $Plack::VERSION, Starman $Starman::VERSION)")},
	}
	if before != "" {
		facts = append(facts, fact{"actd before", commit(before)})
	}
	return facts
}

// firstLine runs a command and returns the first line of its output, or
// "unknown".
func firstLine(name string, args ...string) string {
	out, _ := exec.Command(name, args...).CombinedOutput()
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if line == "" {
		return "unknown"
	}
	return line
}

// commit returns the short commit hash under test, noting when tracked files
// outside docs/ (which the suite itself rewrites) differ from it.
func commit(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	hash := strings.TrimSpace(string(out))
	if err := exec.Command("git", "-C", root, "diff", "--quiet", "HEAD", "--", ".", ":(exclude)docs").Run(); err != nil {
		hash += " (+ uncommitted changes)"
	}
	return hash
}

// cpuModel returns the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	return procField("/proc/cpuinfo", "model name")
}

// memTotal returns MemTotal from /proc/meminfo.
func memTotal() string {
	return procField("/proc/meminfo", "MemTotal")
}

// procField returns the value of the first "key: value" line named key in
// file, or "unknown".
func procField(file, key string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return "unknown"
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// kernel returns the kernel release and machine.
func kernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Machine[:])
}

// osRelease returns PRETTY_NAME from /etc/os-release.
func osRelease() string {
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return "unknown"
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return "unknown"
}
