package worker

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/actd/actd/protocol"
)

// TestProxyDocs: docs/protocol.md and docs/operations.md state the Go
// library's header timeout, and protocol.md the address bound.
func TestProxyDocs(t *testing.T) {
	for file, wants := range map[string][]string{
		"../../docs/protocol.md": {
			fmt.Sprintf("the Go library's %d s", int(headerTimeout.Seconds())),
			fmt.Sprintf("at most %d bytes (`MAX_ADDR`)", protocol.MaxAddr),
		},
		"../../docs/operations.md": {fmt.Sprintf("or within %d s where a child accepted it", int(headerTimeout.Seconds()))},
	} {
		doc, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(doc)), " ")
		for _, want := range wants {
			if !strings.Contains(text, want) {
				t.Errorf("%s does not say %q", file, want)
			}
		}
	}
}
