package prefork

import (
	"fmt"
	"testing"
)

// TestNewLauncher: a pool exec's its children unless Preload asks for a
// zygote; once it has zygotes it keeps them, through a reload that turns
// Preload off (they drain, and it exec's).
func TestNewLauncher(t *testing.T) {
	for _, tc := range []struct {
		name    string
		preload bool
		was     string // "", "exec" or "zygotes"
		want    string
	}{
		{"exec", false, "", "prefork.execLauncher"},
		{"preload", true, "", "*prefork.zygotes"},
		{"reload turns preload on", true, "exec", "*prefork.zygotes"},
		{"reload keeps exec", false, "exec", "prefork.execLauncher"},
		{"reload turns preload off", false, "zygotes", "*prefork.zygotes"},
		{"reload keeps preload", true, "zygotes", "*prefork.zygotes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Pool{cfg: DefaultConfig()}
			var was launcher
			switch tc.was {
			case "exec":
				was = execLauncher{p}
			case "zygotes":
				was = &zygotes{p: p, exec: execLauncher{p}}
			}
			p.cfg.Preload = tc.preload
			got := newLauncher(p, was)
			if typ := fmt.Sprintf("%T", got); typ != tc.want {
				t.Errorf("got %s, want %s", typ, tc.want)
			}
			if tc.was == "zygotes" && got != was {
				t.Errorf("got a new launcher, want the zygotes kept")
			}
		})
	}
}
