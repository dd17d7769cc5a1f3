//go:build integration

package integration

import (
	"slices"
	"strings"
	"testing"
)

// TestPortDropInNeedsEmptyListenStream checks what packaging/README.md and
// docs/operations.md tell operators: a drop-in that sets ListenStream= for
// actd.socket adds to the packaged 127.0.0.1:7333 unless an empty
// ListenStream= comes first. The box has its own network, so 7333 is free.
func TestPortDropInNeedsEmptyListenStream(t *testing.T) {
	requireTool(t, "ss", "iproute2")
	a := NewActdBoxWith(t, BoxConfig{OwnNetwork: true})
	dropIn := "/etc/systemd/system/actd.socket.d/port.conf"
	for _, tc := range []struct {
		name, dropIn string
		want         []string
	}{
		{"without an empty ListenStream=", "[Socket]\nListenStream=127.0.0.1:8080\n", []string{"127.0.0.1:7333", "127.0.0.1:8080"}},
		{"with an empty ListenStream= first", "[Socket]\nListenStream=\nListenStream=127.0.0.1:8080\n", []string{"127.0.0.1:8080"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a.WriteFile(dropIn, []byte(tc.dropIn), 0o644)
			a.Run("systemctl", "daemon-reload")
			a.Run("systemctl", "restart", socketUnit)
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(a.Run("ss", "-Htln")), "\n") {
				if f := strings.Fields(line); len(f) >= 4 {
					got = append(got, f[3])
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("listening: got %v, want %v", got, tc.want)
			}
		})
	}
}
