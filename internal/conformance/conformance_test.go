package conformance

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDocumented: docs/http.md's rule table names every case of the corpus
// exactly once, in a row whose answer is the case's status (a good case may
// sit in any row), and names no case the corpus lacks.
func TestDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/http.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rules, _ := strings.Cut(string(doc), "\n## The rules\n")
	rules, _, _ = strings.Cut(rules, "\n## ")
	rows := map[string]string{} // case name → its row's answer
	name := regexp.MustCompile("`([a-z0-9-]+)`")
	for _, line := range strings.Split(rules, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 || !strings.Contains(cells[2], "`") {
			continue
		}
		for _, m := range name.FindAllStringSubmatch(cells[3], -1) {
			if _, dup := rows[m[1]]; dup {
				t.Errorf("docs/http.md names case %s twice", m[1])
			}
			rows[m[1]] = strings.Trim(cells[2], " `")
		}
	}
	seen := map[string]bool{}
	for _, c := range Cases {
		if seen[c.Name] {
			t.Errorf("two cases named %s", c.Name)
		}
		seen[c.Name] = true
		answer, ok := rows[c.Name]
		switch {
		case !ok:
			t.Errorf("case %s (%s): not in docs/http.md's rule table", c.Name, c.Rule)
		case c.Status != 200 && answer != strconv.Itoa(c.Status):
			t.Errorf("case %s: docs/http.md says %s, the corpus wants %d", c.Name, answer, c.Status)
		}
	}
	for n := range rows {
		if !seen[n] {
			t.Errorf("docs/http.md names case %s, which the corpus lacks", n)
		}
	}
}
