package main

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestManPageSynopsis: the man page's SYNOPSIS has a line for every
// subcommand, with the arguments usage gives it, and no line for a
// subcommand that does not exist.
func TestManPageSynopsis(t *testing.T) {
	lines := synopsis(t, manSection(t, "SYNOPSIS"))
	var named []string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "actd" && regexp.MustCompile(`^[a-z-]+$`).MatchString(f[1]) {
			named = append(named, f[1])
		}
	}
	for _, c := range commands {
		want := strings.ToLower(strings.TrimSpace("actd " + c.name + " " + c.args))
		if !slices.Contains(lines, want) {
			t.Errorf("SYNOPSIS has no line %q; it has:\n%s", want, strings.Join(lines, "\n"))
		}
	}
	for _, name := range named {
		known := name == "help" || slices.ContainsFunc(commands, func(c command) bool { return c.name == name })
		if !known {
			t.Errorf("SYNOPSIS names actd %s, which is no subcommand", name)
		}
	}
}

// TestManPageExitStatus: EXIT STATUS lists exactly the statuses actd
// exits with.
func TestManPageExitStatus(t *testing.T) {
	var got []int
	for _, m := range regexp.MustCompile(`(?m)^\.TP\n\.B (\d+)$`).FindAllStringSubmatch(manSection(t, "EXIT STATUS"), -1) {
		n, _ := strconv.Atoi(m[1])
		got = append(got, n)
	}
	// 2 is the Go runtime's (a crash, SIGQUIT, SIGABRT), not a constant.
	want := []int{exitOK, exitFailure, 2, exitUsage, exitOSErr, exitConfig}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("EXIT STATUS lists %v, want %v", got, want)
	}
}

// manSection returns the body of section name of packaging/man/actd.8.
func manSection(t *testing.T, name string) string {
	t.Helper()
	page, err := os.ReadFile("../../packaging/man/actd.8")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(page), "\n.SH "+name+"\n")
	if !ok {
		t.Fatalf("actd.8 has no section %s", name)
	}
	body, _, _ = strings.Cut(body, "\n.SH ")
	return body
}

// synopsis renders a SYNOPSIS section's lines as text, lowercased: .br
// ends a line; .B and .I join their words with spaces, the alternating
// macros (.RB, .RI, .IR, .BR) without.
func synopsis(t *testing.T, body string) []string {
	t.Helper()
	var lines []string
	var cur []string
	for _, l := range strings.Split(body, "\n") {
		if l == ".br" || l == "" {
			if len(cur) > 0 {
				lines = append(lines, strings.ToLower(strings.Join(cur, " ")))
			}
			cur = nil
			continue
		}
		macro, rest, _ := strings.Cut(l, " ")
		words := macroWords(strings.ReplaceAll(rest, `\-`, "-"))
		switch macro {
		case ".B", ".I":
			cur = append(cur, strings.Join(words, " "))
		case ".RB", ".RI", ".IR", ".BR":
			cur = append(cur, strings.Join(words, ""))
		default:
			t.Fatalf("SYNOPSIS line %q: macro %s not understood", l, macro)
		}
	}
	if len(cur) > 0 {
		lines = append(lines, strings.ToLower(strings.Join(cur, " ")))
	}
	return lines
}

// macroWords splits a macro's arguments: words, or "quoted strings".
func macroWords(s string) []string {
	var words []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '"' {
			w, rest, _ := strings.Cut(s[1:], `"`)
			words, s = append(words, w), rest
			continue
		}
		w, rest, _ := strings.Cut(s, " ")
		words, s = append(words, w), rest
	}
	return words
}

// TestHandlerAnswersDocumented: every status the built-in handler answers
// to a request it refuses (a return of readRequest's files) is named where
// the man page and docs/operations.md describe --handler.
func TestHandlerAnswersDocumented(t *testing.T) {
	status := regexp.MustCompile(`(?m)^\s*return .*\b([45]\d\d)\)?(\s*//.*)?$`)
	var codes []string
	for _, f := range []string{"httpd_request.go", "httpd_chunked.go"} {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range status.FindAllStringSubmatch(string(src), -1) {
			codes = append(codes, m[1])
		}
	}
	slices.Sort(codes)
	codes = slices.Compact(codes)
	if len(codes) < 6 {
		t.Fatalf("got statuses %v from readRequest's files, want 400, 408, 413, 414, 431, 501, 505: has the pattern gone stale?", codes)
	}
	_, man, _ := strings.Cut(manSection(t, "OPTIONS"), `.BI \-\-handler " http"`)
	man, _, _ = strings.Cut(man, "\n.TP\n")
	ops, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `--handler NAME` \\|.*$").FindString(string(ops))
	for doc, text := range map[string]string{"actd.8, --handler": man, "docs/operations.md, --handler": row} {
		if text == "" {
			t.Errorf("%s: not found", doc)
			continue
		}
		for _, c := range codes {
			if !regexp.MustCompile(`\b` + c + `\b`).MatchString(text) {
				t.Errorf("%s does not name %s, which the built-in handler answers", doc, c)
			}
		}
	}
}

// TestArchitectureCommandLine: docs/architecture.md's "Command line" block
// has a line for every subcommand, with the arguments usage gives it, and
// for help.
func TestArchitectureCommandLine(t *testing.T) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(doc), "\n## Command line\n\n```\n")
	block, _, _ = strings.Cut(block, "```")
	if block == "" {
		t.Fatal("docs/architecture.md: no code block under \"## Command line\"")
	}
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	for _, c := range append(commands, command{name: "help"}) {
		want := strings.TrimSpace("actd " + c.name + " " + c.args)
		if !slices.ContainsFunc(lines, func(l string) bool { return l == want || strings.HasPrefix(l, want+" ") }) {
			t.Errorf("docs/architecture.md, Command line: no line %q", want)
		}
	}
}
