package config

import (
	"errors"
	"strings"
	"testing"
)

// TestMaxChildMemory: --max-child-memory and its file key read K, M and G
// as powers of 1024; a bad size is an *Error naming the key (exit 78).
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--listen", "127.0.0.1:0", "--config", writeFile(t, tc.file)}, tc.args...)
			c, err := Parse(args)
			if tc.wantErr != "" {
				var e *Error
				if !errors.As(err, &e) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want an *Error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Pool.MaxChildMemory != tc.want {
				t.Errorf("got %d bytes, want %d", c.Pool.MaxChildMemory, tc.want)
			}
		})
	}
}
