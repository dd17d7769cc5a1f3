package main

import (
	"strings"
	"testing"
)

func TestMdTable(t *testing.T) {
	tests := []struct {
		name  string
		table mdTable
		want  string
	}{
		{"head only", mdTable{head: []string{"a", "b"}}, "| a | b |\n|---|---|\n\n"},
		{"rows", mdTable{head: []string{"load", "x"}, rows: [][]string{{"close-8", "1"}, {"close-64", "–"}}},
			"| load | x |\n|---|---|\n| close-8 | 1 |\n| close-64 | – |\n\n"},
		{"pipe escaped", mdTable{head: []string{"h"}, rows: [][]string{{"a|b"}}}, "| h |\n|---|\n| a\\|b |\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			tt.table.write(&b)
			if got := b.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
