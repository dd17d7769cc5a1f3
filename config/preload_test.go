package config

import "testing"

// TestPreload: --preload and the file key preload turn preload on for a
// worker COMMAND; shared mode, whose children have no back-channel for
// fork orders, and the built-in handler and --exec, which are Go and
// cannot fork, refuse it with an *Error naming the key (exit 78).
func TestPreload(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		args       []string
		want       bool
		wantErr    string
	}{
		{"default off", "", nil, false, ""},
		{"flag", "", []string{"--preload", "--", "/bin/sh"}, true, ""},
		{"flag false", "", []string{"--preload=false"}, false, ""},
		{"file key", "preload = true\nworker = /bin/sh\n", nil, true, ""},
		{"built-in handler", "preload = true\n", nil, false, "pool.conf:1: preload: true: must be false for the built-in handler"},
		{"exec", "", []string{"--preload", "--exec", "/bin/cat"}, false, "preload: true: must be false for the built-in handler and --exec"},
		{"shared mode", "", []string{"--preload", "--accept", "shared"}, false, "preload: true: must be false with --accept=shared"},
		{"not a bool", "preload = maybe\n", nil, false, `pool.conf:1: preload: "maybe": want true or false`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := parseCase(t, tc.file, tc.args, tc.wantErr)
			if c == nil {
				return
			}
			if c.Pool.Preload != tc.want {
				t.Errorf("got preload %v, want %v", c.Pool.Preload, tc.want)
			}
		})
	}
}
