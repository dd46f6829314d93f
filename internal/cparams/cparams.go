// Package cparams splits the text of a C parameter list, for the tests
// that read cuda.h and cudaTypedefs.h by other means than the generator.
package cparams

import "strings"

// Split returns the parameters of a C parameter list's text, split at the
// commas outside parentheses (a function pointer's own list stays whole);
// "" and "void" have none.
func Split(params string) []string {
	params = strings.TrimSpace(params)
	if params == "" || params == "void" {
		return nil
	}
	var r []string
	depth, start := 0, 0
	for i, c := range params {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				r = append(r, strings.TrimSpace(params[start:i]))
				start = i + 1
			}
		}
	}
	return append(r, strings.TrimSpace(params[start:]))
}
