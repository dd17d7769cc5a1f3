package main

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestParseCgroupMounts(t *testing.T) {
	hybrid := `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`
	tests := []struct {
		name, mountinfo string
		want            cgroupMounts
	}{
		{"hybrid", hybrid, cgroupMounts{v2: "/sys/fs/cgroup/unified", cpuacct: "/sys/fs/cgroup/cpuacct"}},
		{"unified only", "29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n",
			cgroupMounts{v2: "/sys/fs/cgroup"}},
		{"cpu and cpuacct together, optional fields", "25 18 0:22 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:9 master:2 - cgroup cgroup rw,cpu,cpuacct\n",
			cgroupMounts{cpuacct: "/sys/fs/cgroup/cpu,cpuacct"}},
		{"cpuacct in a name only", "40 31 0:37 / /sys/fs/cgroup/x rw - cgroup cgroup rw,name=cpuacct\n", cgroupMounts{}},
		{"none, and a short line", "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n41 31 0:38 / -\n", cgroupMounts{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseCgroupMounts([]byte(tt.mountinfo)); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseCgroupUsage(t *testing.T) {
	stat := "usage_usec 1234567\nuser_usec 1000000\nsystem_usec 234567\nnr_periods 0\n"
	tests := []struct {
		name    string
		parse   func([]byte) (time.Duration, error)
		text    string
		want    time.Duration
		wantErr bool
	}{
		{"cpuacct.usage", parseCPUAcctUsage, "30273097233327\n", 30273097233327, false},
		{"cpuacct.usage zero", parseCPUAcctUsage, "0\n", 0, false},
		{"cpuacct.usage empty", parseCPUAcctUsage, "", 0, true},
		{"cpuacct.usage not a number", parseCPUAcctUsage, "12 34\n", 0, true},
		{"cpu.stat", parseCPUStatUsage, stat, 1234567 * time.Microsecond, false},
		{"cpu.stat, usage_usec not first", parseCPUStatUsage, "user_usec 5\nusage_usec 7\n", 7 * time.Microsecond, false},
		{"cpu.stat without usage_usec", parseCPUStatUsage, "user_usec 5\nsystem_usec 2\n", 0, true},
		{"cpu.stat, not a number", parseCPUStatUsage, "usage_usec x\n", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.parse([]byte(tt.text))
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("got %v, %v; want %v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// cpuBusy is a shell busy loop in a subshell (a child that exits before
// the group is read): it spins until its own utime + stime reach 5 ticks
// of /proc/self/stat, 50 ms of CPU, however busy the machine is.
const cpuBusy = `(while :; do read -r _ _ _ _ _ _ _ _ _ _ _ _ _ u s _ < /proc/self/stat; [ $((u + s)) -ge 5 ] && break; done)`

// TestCPUGroup: a shell's child that spins for 50 ms of CPU, started
// through wrap in a group of its own, is counted in the group's usage.
func TestCPUGroup(t *testing.T) {
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Skipf("no /proc/self/mountinfo: %v", err)
	}
	g, err := newCPUGroup(parseCgroupMounts(info), "test")
	if err != nil {
		t.Skipf("no writable cgroup that counts CPU (needs root): %v", err)
	}
	t.Cleanup(func() {
		if err := g.remove(5 * time.Second); err != nil {
			t.Error(err)
		}
	})
	before, err := g.usage()
	if err != nil || before != 0 {
		t.Fatalf("new group: got %v, %v; want 0", before, err)
	}
	cmd := exec.Command("sh", "-c", cpuBusy)
	g.wrap(cmd)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v: %s", cmd.Args, err, out)
	}
	got, err := g.usage()
	if err != nil || got < 30*time.Millisecond || got > 500*time.Millisecond {
		t.Errorf("%s: got %v, %v; want 30 ms to 500 ms", g.how(), got, err)
	}
	t.Logf("%s: %v", g.how(), got)
}
