package protocol

import "testing"

// TestModeNames: flags and errors name the modes from the one table, in
// order, as a person lists them.
func TestModeNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		keep func(Mode) bool
		want string
	}{
		{"all", nil, "dispatch, exclusive or shared"},
		{"speaking the protocol", Mode.SpeaksProtocol, "dispatch or exclusive"},
		{"one", func(m Mode) bool { return m == Shared }, "shared"},
		{"none", func(Mode) bool { return false }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ModeNames(tc.keep); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestModeValid: every mode of the table is valid, and only those.
func TestModeValid(t *testing.T) {
	for m := Mode(-1); int(m) <= len(modeNames); m++ {
		want := m >= Dispatch && m <= Shared
		if got := m.Valid(); got != want {
			t.Errorf("Mode(%d).Valid(): got %v, want %v", int(m), got, want)
		}
		if _, err := ParseMode(m.String()); (err == nil) != want {
			t.Errorf("ParseMode(%q): got %v, want an error: %v", m.String(), err, !want)
		}
	}
}
