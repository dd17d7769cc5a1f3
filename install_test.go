package actd_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOutsideModuleBuilds: a Go program in its own module, outside the
// checkout, builds against the library with the commands docs/go.md gives
// ("Depending on the library from outside this repository"), the checkout
// standing for ../actd. Offline: the dependencies come from the module
// cache the checkout's build filled (GOPROXY=off).
func TestOutsideModuleBuilds(t *testing.T) {
	goCmd := goTool(t)
	doc, err := os.ReadFile("docs/go.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "## Depending on the library")
	block := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(section)
	if block == nil {
		t.Fatal("docs/go.md: no sh block under \"Depending on the library from outside this repository\"")
	}
	checkout, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	main := `package main

import (
	"log"
	"net/http"

	"github.com/actd/actd/prefork/worker"
)

func main() {
	l, err := worker.Listener()
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.Serve(l, http.NotFoundHandler()))
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(block[1]), "\n") {
		argv := strings.Fields(strings.ReplaceAll(line, "../actd", checkout))
		if argv[0] != "go" {
			t.Fatalf("docs/go.md: %q is not a go command", line)
		}
		cmd := exec.Command(goCmd, argv[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY=off", "GOFLAGS=-mod=mod", "GOSUMDB=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "web")); err != nil {
		t.Errorf("after the commands of docs/go.md: %v, want the program built", err)
	}
}
