package nearest

import "testing"

func TestWord(t *testing.T) {
	choices := []string{"status", "reload", "check-config", "version"}
	for _, tc := range []struct {
		word string
		max  int
		want string
	}{
		{"stauts", 2, "status"},
		{"relaod", 2, "reload"},
		{"check-confg", 2, "check-config"},
		{"cat", 2, ""},
		{"status", 0, "status"},
		{"statu", 0, ""},
	} {
		if got := Word(tc.word, choices, tc.max); got != tc.want {
			t.Errorf("Word(%q, %d): got %q, want %q", tc.word, tc.max, got, tc.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"stauts", "status", 1}, {"max-kids", "max-children", 6}, {"abc", "abc", 0},
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q): got %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
