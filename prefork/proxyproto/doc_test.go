package proxyproto

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestDocLimits: docs/protocol.md states the limits Parse keeps.
func TestDocLimits(t *testing.T) {
	doc, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	for _, want := range []string{
		fmt.Sprintf("at most %d bytes, fields separated by one space", MaxV1),
		fmt.Sprintf("at most %d + %d bytes", v2Fixed, MaxV2Body),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("docs/protocol.md does not say %q", want)
		}
	}
}
