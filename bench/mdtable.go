package main

import "strings"

// mdTable is a markdown table: a head row and body rows of cells, which
// the caller renders. Issue 20's and issue 21's sections write theirs with
// it.
type mdTable struct {
	head []string
	rows [][]string
}

// add appends a body row.
func (t *mdTable) add(cells ...string) { t.rows = append(t.rows, cells) }

// write writes the table to b: the head, its rule, the rows and a blank
// line. A cell's "|" is escaped so it cannot break the row.
func (t mdTable) write(b *strings.Builder) {
	writeRow(b, t.head)
	b.WriteString("|" + strings.Repeat("---|", len(t.head)) + "\n")
	for _, r := range t.rows {
		writeRow(b, r)
	}
	b.WriteString("\n")
}

// writeRow writes one row of cells.
func writeRow(b *strings.Builder, cells []string) {
	escaped := make([]string, len(cells))
	for i, c := range cells {
		escaped[i] = mdEscape(c)
	}
	b.WriteString("| " + strings.Join(escaped, " | ") + " |\n")
}
