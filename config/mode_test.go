package config

import (
	"io/fs"
	"testing"
)

// TestSocketMode: --socket-mode and the file key socket-mode read octal
// permission bits; anything else is an *Error naming the key.
func TestSocketMode(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		args       []string
		want       fs.FileMode
		wantErr    string
	}{
		{"default", "", nil, 0, ""},
		{"flag", "", []string{"--socket-mode", "0660"}, 0o660, ""},
		{"no leading zero", "", []string{"--socket-mode", "600"}, 0o600, ""},
		{"0o prefix", "", []string{"--socket-mode=0o666"}, 0o666, ""},
		{"file key", "socket-mode = 0660\n", nil, 0o660, ""},
		{"not octal", "", []string{"--socket-mode", "0999"}, 0, `socket-mode: "0999": want permission bits in octal`},
		{"set-uid bit", "socket-mode = 4755\n", nil, 0, `pool.conf:1: socket-mode: "4755": want permission bits in octal, 0 to 0777`},
		{"a word", "", []string{"--socket-mode", "rw"}, 0, `socket-mode: "rw"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := parseCase(t, tc.file, tc.args, tc.wantErr)
			if c != nil && c.SocketMode != tc.want {
				t.Errorf("got mode %#o, want %#o", c.SocketMode, tc.want)
			}
		})
	}
}
