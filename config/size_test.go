package config

import (
	"strings"
	"testing"
)

// TestMaxChildMemory: --max-child-memory and --child-memory-max, and their
// file keys, read K, M and G as powers of 1024; a bad size is an *Error
// naming the key (exit 78).
func TestMaxChildMemory(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		args       []string
		want       uint64
		wantErr    string
	}{
		{"default off", "", nil, 0, ""},
		{"bytes", "", []string{"--max-child-memory", "2097152"}, 2 << 20, ""},
		{"K", "", []string{"--max-child-memory", "4096K"}, 4 << 20, ""},
		{"M", "", []string{"--max-child-memory", "300M"}, 300 << 20, ""},
		{"g lower case", "", []string{"--max-child-memory", "2g"}, 2 << 30, ""},
		{"file key", "max-child-memory = 64M\n", nil, 64 << 20, ""},
		{"zero is off", "", []string{"--max-child-memory", "0"}, 0, ""},
		{"not a size", "", []string{"--max-child-memory", "lots"}, 0, `max-child-memory: "lots": want a size like 512M`},
		{"unknown suffix", "", []string{"--max-child-memory", "3T"}, 0, `max-child-memory: "3T": want a size`},
		{"negative", "", []string{"--max-child-memory", "-1M"}, 0, `max-child-memory: "-1M": want a size`},
		{"overflow", "", []string{"--max-child-memory", "99999999999999G"}, 0, `max-child-memory: "99999999999999G": want a size`},
		{"bad in file", "max-child-memory = 1.5G\n", nil, 0, `pool.conf:1: max-child-memory: "1.5G": want a size`},
		{"below 1M", "", []string{"--max-child-memory", "1000K"}, 0, "max-child-memory: 1024000: must be 0 (off) or at least 1M"},
		{"child-memory-max", "", []string{"--child-memory-max", "80M"}, 80 << 20, ""},
		{"child-memory-max in file", "child-memory-max = 1G\n", nil, 1 << 30, ""},
		{"child-memory-max not a size", "", []string{"--child-memory-max", "80MB"}, 0, `child-memory-max: "80MB": want a size`},
		{"child-memory-max below 1M", "", []string{"--child-memory-max", "4096"}, 0, "child-memory-max: 4096: must be 0 (off) or at least 1M"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := parseCase(t, tc.file, tc.args, tc.wantErr)
			if c == nil {
				return
			}
			got := c.Pool.MaxChildMemory
			if strings.HasPrefix(tc.name, "child-memory-max") {
				got = c.Pool.ChildMemoryMax
			}
			if got != tc.want {
				t.Errorf("got %d bytes, want %d", got, tc.want)
			}
		})
	}
}
