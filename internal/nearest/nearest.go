// Package nearest finds the word a typo was meant to be: the subcommand
// for "stauts", the flag for "--max-childen".
package nearest

// Word returns the one of choices within maxDist edits of word ([Distance]),
// the nearest if several are (the first of equals), or "" if none is.
func Word(word string, choices []string, maxDist int) string {
	best, bestDist := "", maxDist+1
	for _, c := range choices {
		if d := Distance(word, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// Distance is the Damerau-Levenshtein (optimal string alignment) distance
// between a and b, in bytes: "stauts" is 1 from "status".
func Distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
