package main

// Model stage: doc comments, the header's doxygen made into Go doc text. A
// doc is kept as paragraphs separated by blank lines: the first is the
// brief; a paragraph whose lines start with a tab is code; one starting
// with "- " is a list item. commentLines wraps it into // lines. Doxygen
// commands are rendered as text (\note → "Note:", \p x → x, ::cuX → cuX) or
// dropped (\sa lists, \return lists of CUresult values, \notefnerr and the
// other \note_ macros, group markers); none is left raw.

import (
	"regexp"
	"strings"
)

var (
	paramCmdRe = regexp.MustCompile(`^\\param\s*(?:\[(in|out|in,\s*out)\])?\s+(\w+)\s*-?\s*(.*)$`)
	cmdRe      = regexp.MustCompile(`^\\([a-zA-Z_]+)\b\s*(.*)$`)
	dropRe     = regexp.MustCompile(`\\(notefnerr|note_[a-z_]+|link_[a-z_]+)\b`)
	tagRe      = regexp.MustCompile(`</?[a-zA-Z]+[^>]*>`)
	inlineRe   = regexp.MustCompile(`\\(?:p|e|b|c|a|em|ref)\s+`)
	gluedRe    = regexp.MustCompile(`\\p(h[A-Z]\w*)`) // "\phEvent": a missing space
	escapeRe   = regexp.MustCompile(`\\([%<>&#@.\\"$])`)
	anyCmdRe   = regexp.MustCompile(`\\([a-zA-Z_]+)`)
	groupRe    = regexp.MustCompile(`\\defgroup|___MANBRIEF___|\\addtogroup|\\file\b`)
	listItemRe = regexp.MustCompile(`^(?:-|<li>)\s*`)
)

// inline renders doxygen's inline markup as text.
func inline(s string) string {
	if strings.Contains(s, `\`) {
		s = strings.ReplaceAll(s, `\link_sync_behavior`, "stream synchronization behavior in the CUDA documentation")
		s = dropRe.ReplaceAllString(s, "")
		s = gluedRe.ReplaceAllString(s, "$1")
		s = inlineRe.ReplaceAllString(s, "")
		s = strings.ReplaceAll(s, `\n`, " ") // an explicit line break
		s = escapeRe.ReplaceAllString(s, "$1")
		s = anyCmdRe.ReplaceAllString(s, "$1") // \deprecated → deprecated
	}
	s = strings.ReplaceAll(s, "::", "")
	if strings.ContainsAny(s, "<>&@") {
		s = strings.NewReplacer("<br>", " ", "</td>", " ", "&lt;", "<", "&gt;", ">", "&amp;", "&", "@{", "", "@}", "").Replace(s)
		s = tagRe.ReplaceAllString(s, " ")
	}
	if strings.Contains(s, "/") {
		s = strings.ReplaceAll(s, "*/", "")
		s = strings.ReplaceAll(s, "/*", "")
	}
	return s
}

// parsedDoc is a function's doc block, read.
type parsedDoc struct {
	paras  []string          // brief first; then the body
	params map[string]string // raw \param texts, by parameter name
	first  map[string]string // their first lines, as the model reads them
	dir    map[string]string // "in", "out", "in,out" where the doc says
	order  []string          // parameters in doc order
}

// parseDoc reads a /** */ block (the text blockAbove returns). Long
// because it is one state machine over the block's lines: the section
// being read (brief, body, a parameter, a skipped list, code) and the
// paragraph being gathered are shared by every case of its switch, which
// a split would pass back and forth as a struct of the same fields.
func parseDoc(block string) *parsedDoc {
	d := &parsedDoc{params: map[string]string{}, first: map[string]string{}, dir: map[string]string{}}
	if groupRe.MatchString(block) {
		return d // a group's introduction, not a declaration's doc
	}
	const (
		sBrief = iota
		sBody
		sParam
		sSkip
	)
	sec := sBody
	var cur []string // the paragraph being read
	param := ""
	flush := func() {
		text := strings.TrimSpace(spaces.ReplaceAllString(inline(strings.Join(cur, " ")), " "))
		cur = nil
		if text == "" || text == "-" {
			return
		}
		if len(d.paras) == 0 && sec != sBrief && strings.Contains(block, `\brief`) {
			d.paras = append(d.paras, "") // a body before the brief: keep the brief first
		}
		d.paras = append(d.paras, text)
	}
	var code []string
	inCode := false
	for _, raw := range strings.Split(block, "\n") {
		l := strings.TrimSpace(raw)
		if inCode {
			if i := strings.Index(l, `\endcode`); i >= 0 {
				inCode = false
				if len(code) > 0 {
					d.paras = append(d.paras, "\t"+strings.Join(code, "\n\t"))
				}
				code = nil
				continue
			}
			if l != "" {
				code = append(code, strings.ReplaceAll(strings.ReplaceAll(raw, "*/", ""), "\t", "    "))
			}
			continue
		}
		if l == "" {
			if sec == sParam && param != "" {
				param = ""
			}
			flush()
			if sec != sBrief || len(d.paras) > 0 {
				sec = sBody
			}
			continue
		}
		cmd := strings.HasPrefix(l, `\`)
		if mm := matchIf(cmd, paramCmdRe, l); mm != nil {
			flush()
			sec, param = sParam, mm[2]
			if _, ok := d.params[param]; !ok {
				d.order = append(d.order, param)
			}
			d.params[param] = strings.TrimSpace(mm[3])
			if mm[1] != "" {
				d.dir[param] = strings.ReplaceAll(mm[1], " ", "")
			}
			d.first[param] = d.params[param]
			continue
		}
		if mm := matchIf(cmd, cmdRe, l); mm != nil {
			rest := mm[2]
			switch cmd := mm[1]; {
			case cmd == "brief":
				flush()
				sec, cur = sBrief, []string{rest}
				continue
			case cmd == "return" || cmd == "returns" || cmd == "retval" || cmd == "sa" || cmd == "see":
				flush()
				sec = sSkip
				continue
			case cmd == "note":
				flush()
				sec, cur = sBody, []string{"Note:", rest}
				continue
			case cmd == "deprecated":
				flush()
				sec, cur = sBody, []string{"The header marks it deprecated.", rest}
				continue
			case cmd == "code":
				flush()
				sec, inCode = sBody, true
				continue
			case cmd == "endcode":
				continue
			case cmd == "par" || cmd == "details":
				flush()
				sec, cur = sBody, []string{rest}
				continue
			case cmd == "section" || cmd == "subsection":
				flush()
				if f := strings.Fields(rest); len(f) > 1 {
					cur = []string{strings.Join(f[1:], " ") + ":"}
				}
				flush()
				sec = sBody
				continue
			case cmd == "typedef" || cmd == "struct" || cmd == "enum" || cmd == "union" || cmd == "fn" || cmd == "ingroup":
				continue
			case dropRe.MatchString(l):
				// \notefnerr and such: a standard note, dropped; it ends a list.
				if sec == sSkip {
					sec = sBody
				}
				flush()
				if l = strings.TrimSpace(dropRe.ReplaceAllString(l, "")); l == "" {
					continue
				}
			}
		}
		switch sec {
		case sSkip:
			continue
		case sParam:
			d.params[param] += " " + l
			continue
		case sBrief:
			// The brief is its line; a line that starts a sentence starts the body.
			if len(cur) > 0 && l != "" && (l[0] >= 'A' && l[0] <= 'Z') {
				flush()
				sec = sBody
			}
		}
		if sec == sBody && listItemRe.MatchString(l) && !strings.HasPrefix(l, "->") && (len(l) == 1 || l[1] == ' ' || strings.HasPrefix(l, "<li>")) {
			flush()
			cur = []string{"-", listItemRe.ReplaceAllString(l, "")}
			continue
		}
		cur = append(cur, l)
	}
	flush()
	if len(code) > 0 {
		d.paras = append(d.paras, "\t"+strings.Join(code, "\n\t"))
	}
	return d
}

// text is the doc as paragraphs: the brief, the body, then the
// parameters as a list.
func (d *parsedDoc) text() string {
	paras := append([]string(nil), d.paras...)
	if len(d.order) > 0 {
		paras = append(paras, "Parameters:")
		for _, p := range d.order {
			t := strings.TrimSpace(spaces.ReplaceAllString(inline(d.params[p]), " "))
			t = strings.TrimPrefix(strings.TrimPrefix(t, "- "), "-")
			paras = append(paras, "- "+p+": "+strings.TrimSpace(t))
		}
	}
	return strings.Join(paras, "\n\n")
}

// docText renders a short doc (a type's, an enumerator's, a #define's):
// its paragraphs, with no parameters.
func docText(raw string) string {
	return strings.Join(parseDoc(raw).paras, "\n\n")
}

// brief is a doc's first paragraph on one line.
func brief(doc string) string {
	b, _, _ := strings.Cut(doc, "\n\n")
	return oneLine(b)
}

// body is what follows the first paragraph.
func body(doc string) string {
	_, rest, _ := strings.Cut(doc, "\n\n")
	return rest
}

// commentLines wraps a doc's paragraphs into comment lines of about
// width columns (the "// " included): text paragraphs are wrapped, list
// items indented, code kept, and paragraphs separated by an empty line.
func commentLines(doc string, width int) []string {
	var out []string
	prevItem := false
	for _, p := range strings.Split(doc, "\n\n") {
		if strings.TrimSpace(p) == "" {
			continue
		}
		item := strings.HasPrefix(p, "- ")
		if len(out) > 0 && !(item && prevItem) {
			out = append(out, "//")
		}
		prevItem = item
		switch {
		case strings.HasPrefix(p, "\t"):
			for _, l := range strings.Split(p, "\n") {
				out = append(out, "//"+strings.TrimRight(l, " "))
			}
		case strings.HasPrefix(p, "- "):
			for i, l := range wrap(strings.TrimPrefix(p, "- "), width-7) {
				if i == 0 {
					out = append(out, "//   - "+l)
				} else {
					out = append(out, "//     "+l)
				}
			}
		default:
			for _, l := range wrap(p, width-3) {
				out = append(out, "// "+l)
			}
		}
	}
	return out
}

// wrap breaks text into lines of at most width columns, at spaces. A line
// never starts with what go/doc would read as a list marker or a heading.
func wrap(text string, width int) []string {
	var lines []string
	var b strings.Builder
	for _, w := range strings.Fields(text) {
		if b.Len() > 0 && b.Len()+1+len(w) > width && !marker(w) {
			lines = append(lines, b.String())
			b.Reset()
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	if b.Len() > 0 {
		lines = append(lines, b.String())
	}
	return lines
}

var markerRe = regexp.MustCompile(`^([-+*•#]|[0-9]+[.)])`)

func marker(w string) bool { return markerRe.MatchString(w) }

// wrapComments wraps the comment lines of generated source longer than
// about 80 columns (a tab counted as 4), keeping their indentation; code
// in comments (//\t) and directives are left alone.
func wrapComments(src []byte) []byte {
	var b strings.Builder
	for _, l := range strings.SplitAfter(string(src), "\n") {
		t := strings.TrimRight(l, "\n")
		indent := t[:len(t)-len(strings.TrimLeft(t, "\t"))]
		c := t[len(indent):]
		width := 80 - 4*len(indent)
		if len(t) <= 80 || !strings.HasPrefix(c, "// ") || strings.HasPrefix(c, "//go:") {
			b.WriteString(l)
			continue
		}
		prefix, next := "// ", "// "
		if strings.HasPrefix(c, "//   - ") {
			prefix, next = "//   - ", "//     "
		} else if strings.HasPrefix(c, "//     ") {
			prefix, next = "//     ", "//     "
		} else if strings.HasPrefix(c, "//  ") {
			b.WriteString(l) // code
			continue
		}
		for i, w := range wrap(strings.TrimPrefix(c, prefix), width-len(prefix)) {
			p := prefix
			if i > 0 {
				p = next
			}
			b.WriteString(indent + p + w + "\n")
		}
	}
	return []byte(b.String())
}

// matchIf is re's submatches of s, where cond holds.
func matchIf(cond bool, re *regexp.Regexp, s string) []string {
	if !cond {
		return nil
	}
	return re.FindStringSubmatch(s)
}
