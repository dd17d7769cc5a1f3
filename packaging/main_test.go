package packaging

import (
	"fmt"
	"os"
	"testing"
)

// buildDir holds the packages deb/build.sh makes; the tests share them.
var buildDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "actd-packaging-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
