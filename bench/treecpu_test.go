package main

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// Fields 14 to 17 are 11, 22, 33 and 44 ticks in the first lines.
	tail := " 0 0 0 0 20 0 1 0 3025390 3133440 382\n"
	tests := []struct {
		name    string
		line    string
		want    statCPU
		wantErr bool
	}{
		{"plain", "42 (actd) S 1 42 42 0 -1 4194304 98 0 0 0 11 22 33 44" + tail,
			statCPU{own: 330 * time.Millisecond, children: 770 * time.Millisecond}, false},
		{"name with spaces and parentheses", "42 (a) b (c) R 1 42 42 0 -1 4194304 98 0 0 0 11 22 33 44" + tail,
			statCPU{own: 330 * time.Millisecond, children: 770 * time.Millisecond}, false},
		{"zombie, all zero", "7 (python3) Z 42 42 42 0 -1 4194304 0 0 0 0 0 0 0 0" + tail, statCPU{}, false},
		{"too short", "42 (actd) S 1 42 42 0 -1 4194304 98 0 0 0 11 22 33", statCPU{}, true},
		{"no name", "42 actd S 1 42", statCPU{}, true},
		{"not a number", "42 (actd) S 1 42 42 0 -1 4194304 98 0 0 0 11 x 33 44" + tail, statCPU{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatCPU([]byte(tt.line))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("got %+v, %v; want %+v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestDescendants(t *testing.T) {
	stats := []procStat{
		{pid: 1, ppid: 0}, {pid: 10, ppid: 1}, {pid: 11, ppid: 10}, {pid: 12, ppid: 10, state: 'Z'},
		{pid: 13, ppid: 11}, {pid: 20, ppid: 1}, {pid: 21, ppid: 20},
	}
	tests := []struct {
		root int
		want []int
	}{
		{10, []int{10, 11, 12, 13}}, // a zombie counts: its time is not yet its parent's
		{20, []int{20, 21}},
		{13, []int{13}},
		{99, nil},
	}
	for _, tt := range tests {
		if got := descendants(tt.root, stats); !slices.Equal(got, tt.want) {
			t.Errorf("descendants(%d): got %v, want %v", tt.root, got, tt.want)
		}
	}
}

func TestCPUBetween(t *testing.T) {
	tests := []struct {
		name   string
		a, b   treeTimes
		want   time.Duration
		wantOK bool
	}{
		{"used", treeTimes{cpu: time.Second, procs: 9}, treeTimes{cpu: 3 * time.Second, procs: 9}, 2 * time.Second, true},
		{"a child reaped meanwhile", treeTimes{cpu: time.Second, procs: 9}, treeTimes{cpu: 2 * time.Second, procs: 8}, time.Second, true},
		{"idle", treeTimes{cpu: time.Second, procs: 1}, treeTimes{cpu: time.Second, procs: 1}, 0, true},
		{"gone before", treeTimes{}, treeTimes{cpu: time.Second, procs: 1}, 0, false},
		{"gone after", treeTimes{cpu: time.Second, procs: 1}, treeTimes{}, 0, false},
		{"went backwards", treeTimes{cpu: 2 * time.Second, procs: 9}, treeTimes{cpu: time.Second, procs: 8}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := cpuBetween(tt.a, tt.b)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("got %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// TestReadTreeTimesReaped: a child that spent CPU and exited is still
// counted, through its parent's children's time, once the parent has
// waited for it.
func TestReadTreeTimesReaped(t *testing.T) {
	// The subshell counts to 200000 (a few hundred ms of CPU), exits and
	// is waited for by sh, which then becomes sleep (exec keeps the
	// children's time).
	cmd := exec.Command("/bin/sh", "-c", "(i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done); exec sleep 30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	start := readTreeTimes(cmd.Process.Pid)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/comm"); string(comm) == "sleep\n" {
			break // sh waited for the subshell, then became sleep
		}
		if time.Now().After(deadline) {
			t.Fatal("the counting subshell did not finish within 20s")
		}
	}
	end := readTreeTimes(cmd.Process.Pid)
	used, ok := cpuBetween(start, end)
	if !ok || used < 5*statTick || end.procs != 1 {
		t.Errorf("got %v used (%v) over %d process(es), want at least %v, the exited subshell's, over 1", used, ok, end.procs, 5*statTick)
	}
	if got := readTreeTimes(1<<22 + 7); got != (treeTimes{}) {
		t.Errorf("tree of a PID that does not exist: got %+v, want zero", got)
	}
}
