package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplaceSection(t *testing.T) {
	text := beginMarker + "\nnew numbers\n" + endMarker + "\n"
	results := section{beginMarker, endMarker, text}
	tests := []struct {
		name, old, want string
	}{
		{"no file", "", "# actd benchmarks\n\n" + text},
		{"no markers", "# Intro\n\nhand-written\n", "# Intro\n\nhand-written\n\n" + text},
		{"markers", "# Intro\n\n" + beginMarker + "\nold numbers\n" + endMarker + "\n\n## Analysis\n",
			"# Intro\n\n" + text + "\n## Analysis\n"},
		{"end marker at end of file", "a\n" + beginMarker + "\nold\n" + endMarker, "a\n" + text},
		{"issue 20's section stays", "# Intro\n\n" + beginMarker + "\nold\n" + endMarker + "\n\n## Issue 20\n\n" + issue20Begin + "\nits numbers\n" + issue20End + "\n",
			"# Intro\n\n" + text + "\n## Issue 20\n\n" + issue20Begin + "\nits numbers\n" + issue20End + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "benchmarks.md")
			if tt.old != "" {
				if err := os.WriteFile(path, []byte(tt.old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := replaceSection(path, results); err != nil {
				t.Fatalf("replaceSection: %v", err)
			}
			got, _ := os.ReadFile(path)
			if string(got) != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseOptions(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"defaults", nil, ""},
		{"quick", []string{"-quick"}, ""},
		{"subset", []string{"-servers", "baseline, apache-prefork", "-loads", "close-8", "-ramp", ""}, ""},
		{"unknown server", []string{"-servers", "nginx"}, `unknown name "nginx"`},
		{"unknown load", []string{"-loads", "close-9"}, `unknown name "close-9"`},
		{"zero runs", []string{"-runs", "0"}, "must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseOptions(tt.args)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("got error %v, want none", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("got error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
	o, _ := parseOptions([]string{"-quick"})
	if o.out != "" || o.plot != "" || o.runs != 1 {
		t.Errorf("-quick: got out %q plot %q runs %d, want no files and 1 run", o.out, o.plot, o.runs)
	}
}
