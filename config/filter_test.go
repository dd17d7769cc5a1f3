package config

import (
	"strings"
	"testing"
	"time"

	"github.com/actd/actd/prefork/acceptfilter"
)

// TestAcceptFilterKeys: accept-filter, hold-timeout and max-held parse into
// the pool settings, from flags or the file; a filter a mode cannot have is
// refused with the allowed values.
func TestAcceptFilterKeys(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		args       []string
		filter     acceptfilter.Filter
		hold       time.Duration
		maxHeld    int
		err        string
	}{
		{"default", "", nil, acceptfilter.None, 10 * time.Second, 0, ""},
		{"http", "", []string{"--accept-filter", "http"}, acceptfilter.HTTP, 10 * time.Second, 0, ""},
		{"file", "accept-filter = data\nhold-timeout = 3s\nmax-held = 100\n", nil, acceptfilter.Data, 3 * time.Second, 100, ""},
		{"data in exclusive", "", []string{"--accept", "exclusive", "--accept-filter", "data"}, acceptfilter.Data, 10 * time.Second, 0, ""},
		{"unknown", "", []string{"--accept-filter", "httpready"}, 0, 0, 0, `accept-filter: "httpready": must be none, data or http`},
		{"http in exclusive", "", []string{"--accept", "exclusive", "--accept-filter", "http"}, 0, 0, 0, "accept-filter: http: must be none or data with --accept=exclusive"},
		{"hold-timeout 0", "", []string{"--hold-timeout", "0s"}, 0, 0, 0, "hold-timeout: 0s: must be between 10ms and 1h"},
		{"max-held 0", "max-held = 0\n", nil, 0, 10 * time.Second, 0, ""}, // from the fd limit
		{"hold-body 2G", "hold-body = 2G\n", nil, 0, 0, 0, "pool.conf:1: hold-body: 2147483648: must be 0 (off) or at most 1G"},
		{"hold-body lots", "", []string{"--hold-body", "lots"}, 0, 0, 0, `hold-body: "lots": want a size like 512M`},
		{"max-held -1", "max-held = -1\n", nil, 0, 0, 0, "pool.conf:1: max-held: -1: must be 0 (from the fd limit) or between 1 and 1048576"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--listen", "127.0.0.1:0", "--config", writeFile(t, tc.file)}, tc.args...)
			c, err := Parse(args)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("got %v, want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p := c.Pool; p.Filter != tc.filter || p.HoldTimeout != tc.hold || p.MaxHeld != tc.maxHeld {
				t.Errorf("got filter %v, hold-timeout %v, max-held %d; want %v, %v, %d",
					p.Filter, p.HoldTimeout, p.MaxHeld, tc.filter, tc.hold, tc.maxHeld)
			}
		})
	}
}

// TestHoldBody: hold-body is a size, 1M by default, 0 to turn it off.
func TestHoldBody(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		args       []string
		want       uint64
	}{
		{"default", "", nil, 1 << 20},
		{"flag", "", []string{"--hold-body", "256K"}, 256 << 10},
		{"file", "hold-body = 4M\n", nil, 4 << 20},
		{"off", "", []string{"--hold-body", "0"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(append([]string{"--listen", "127.0.0.1:0", "--config", writeFile(t, tc.file)}, tc.args...))
			if err != nil {
				t.Fatal(err)
			}
			if c.Pool.HoldBody != tc.want {
				t.Errorf("got hold-body %d, want %d", c.Pool.HoldBody, tc.want)
			}
		})
	}
}
