package prefork

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// usage is what a child costs the machine: its resident memory and the CPU
// time it has used, both from one read of /proc/PID/stat (docs/operations.md,
// "Memory": why RSS and not PSS, and what the read costs), with when it was
// read and how the memory grows per connection.
type usage struct {
	memory uint64        // bytes resident (RSS)
	cpu    time.Duration // user + system
	ok     bool          // read at least once

	at    time.Time // when it was read
	trend trend     // how it grows per connection (memory.go)
}

// userHZ is the unit of /proc/PID/stat's CPU times (USER_HZ, 100 on every
// Linux architecture actd builds for).
const userHZ = 100

var pageSize = uint64(os.Getpagesize())

// readUsage reads pid's usage. It returns an error if the process is gone
// (already a zombie reads as zero memory) or the file is not as expected.
func readUsage(pid int) (usage, error) {
	var buf [1024]byte
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return usage{}, err
	}
	n, err := f.Read(buf[:])
	f.Close()
	if err != nil {
		return usage{}, err
	}
	return parseStat(buf[:n])
}

// parseStat reads utime (field 14), stime (15) and rss (24, pages) of a
// /proc/PID/stat line. The command name (field 2) may hold spaces and
// parentheses, so fields are counted after its last ')'.
func parseStat(line []byte) (usage, error) {
	end := bytes.LastIndexByte(line, ')')
	if end < 0 {
		return usage{}, fmt.Errorf("stat: no command name in %q", line)
	}
	fields := bytes.Fields(line[end+1:]) // fields[0] is field 3, state
	if len(fields) < 22 {
		return usage{}, fmt.Errorf("stat: %d fields", len(fields)+2)
	}
	num := func(field int) uint64 {
		v, _ := strconv.ParseUint(string(fields[field-3]), 10, 64)
		return v
	}
	ticks := num(14) + num(15)
	return usage{
		memory: num(24) * pageSize,
		cpu:    time.Duration(ticks) * time.Second / userHZ,
		ok:     true,
	}, nil
}
