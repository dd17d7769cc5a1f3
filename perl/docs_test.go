package perl_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocsListHandlerOptions: docs/perl.md's table of handler options has
// a row for every option the handler's POD documents (=item --NAME).
func TestDocsListHandlerOptions(t *testing.T) {
	pod, err := os.ReadFile("lib/Plack/Handler/Actd.pm")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/perl.md")
	if err != nil {
		t.Fatal(err)
	}
	options := regexp.MustCompile(`(?m)^=item (--[a-z-]+)`).FindAllSubmatch(pod, -1)
	if len(options) < 3 {
		t.Fatalf("got %d =item options from Plack::Handler::Actd, want its 4: has the POD moved?", len(options))
	}
	for _, o := range options {
		if !strings.Contains(string(doc), "\n| `"+string(o[1])) {
			t.Errorf("docs/perl.md: no row for the handler option %s", o[1])
		}
	}
}
