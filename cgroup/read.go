package cgroup

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// OOMKills returns how many processes the kernel's OOM killer has killed in
// g's memory group and below it: oom_kill of memory.events on v2, of
// memory.oom_control on v1 (Linux 4.13 and later). It returns false when
// neither file can be read: no memory controller for g.
func (g Groups) OOMKills() (uint64, bool) {
	if g.V2 != "" {
		if n, ok := readKey(filepath.Join(g.V2, "memory.events"), "oom_kill"); ok {
			return n, true
		}
	}
	if g.V1Memory != "" {
		return readKey(filepath.Join(g.V1Memory, "memory.oom_control"), "oom_kill")
	}
	return 0, false
}

// HasMemory reports whether g has a memory controller: its v2 group lists
// memory among its controllers, or it is on a v1 memory hierarchy. Where
// only the v1 hierarchy has it, per-child groups cannot have limits.
func (g Groups) HasMemory() bool { return g.v2Memory() || g.V1Memory != "" }

// v2Memory reports whether g's v2 group has the memory controller.
func (g Groups) v2Memory() bool {
	if g.V2 == "" {
		return false
	}
	data, err := os.ReadFile(filepath.Join(g.V2, "cgroup.controllers"))
	return err == nil && hasWord(strings.TrimSpace(string(data)), " ", "memory")
}

// readKey returns the value of key in a flat-keyed file of "key value"
// lines, and false if the file or the key is missing or not a number.
func readKey(path, key string) (uint64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == key {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
