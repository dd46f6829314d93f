package main

// Model stage: (pointer, count) pairs. A count beside a typed pointer makes
// the pointer an array the driver reads or writes count elements of: bound
// as a slice (gen/bindings.json "slices": the count from len), as results
// of a two-call form ("twoCall": a count pointer that sizes output arrays),
// or listed under "notSlices" with the reason it is not a pair. Generation
// fails on a pair-looking parameter the config does not place, so a new
// header's arrays are never silently left as single pointers.

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// countName matches the names of the headers' element counts and sizes
// (numOptions, nbGroups, count, bufferSize, tensorRank).
var countName = regexp.MustCompile(`^(num[A-Z_]\w*|nb[A-Z]\w*|n[A-Z]\w*|count|\w*Count|numDependencies_out|\w+Size|\w+Rank|size|len|length)$`)

// docCountWords: a doc that relates an array to a count ("along each of
// the \p tensorRank dimensions", "Size of \p logBuffer").
var docCountWords = regexp.MustCompile(`(?i)\b(size|number|count|length|rank|each of|entries|elements)\b`)

// checkPairs fails where a typed pointer and a count are both left as they
// are and the config does not say why: a count by its name beside a
// pointer, or a relation the doc states between a pointer and an integer
// parameter (either names the other next to count words).
func (m *builder) checkPairs(f *function, fc funcConf, pd *parsedDoc) error {
	// Counts: integers by value (or count pointers), and the counts of
	// slices already placed, which may count another array too.
	var counts []string
	for _, q := range f.Params {
		if isInt(q.GoType) && (q.Role == rIn || q.Role == rCount || q.Role == rInOutCount || q.Role == rPtr && countName.MatchString(q.C)) {
			counts = append(counts, q.C)
		}
	}
	if len(counts) == 0 {
		return nil
	}
	role := map[string]role{}
	for _, q := range f.Params {
		role[q.C] = q.Role
	}
	var loose []string
	for _, q := range f.Params {
		if q.Role != rPtr || !strings.HasPrefix(q.GoType, "*") || slices.Contains(counts, q.C) || q.Size > 0 {
			continue
		}
		if _, ok := fc.NotSlices[q.C]; ok {
			continue
		}
		for _, n := range counts {
			// A free count by its name; any count where the doc relates them.
			// and any count beside a pointer its doc calls an array.
			if role[n] != rCount && role[n] != rInOutCount && countName.MatchString(n) || docRelates(pd, q.C, n) || docPlural.MatchString(pd.first[q.C]) {
				loose = append(loose, q.C+" (beside "+n+")")
				break
			}
		}
	}
	if len(loose) == 0 {
		return nil
	}
	sort.Strings(loose)
	return fmt.Errorf("gen: %s: %s: %s: a pointer the header relates to a count: bind them as slices in gen/bindings.json (\"slices\", \"ranked\" or \"twoCall\"), or list the pointer under \"notSlices\" with the reason it is not an array",
		f.Pos, f.Symbol, strings.Join(loose, ", "))
}

// docRelates: the doc of p names n, or n's names p, next to count words.
func docRelates(pd *parsedDoc, p, n string) bool {
	mentions := func(doc, other string) bool {
		return docCountWords.MatchString(doc) && regexp.MustCompile(`\\p\s+\*?`+regexp.QuoteMeta(other)+`\b`).MatchString(doc)
	}
	return mentions(pd.params[p], n) || mentions(pd.params[n], p)
}

func isInt(goType string) bool {
	switch strings.TrimPrefix(goType, "*") {
	case "uint64", "uint32", "int32", "int64":
		return true
	}
	return false
}

// twoCall makes a count pointer and the output arrays it sizes results.
func (m *builder) twoCall(f *function, fc funcConf, has map[string]bool) error {
	tc := fc.TwoCall
	if tc == nil || !has[tc.Count] {
		return nil
	}
	var cp *param
	for _, q := range f.Params {
		if q.C == tc.Count {
			cp = q
		}
	}
	if cp.Role != rPtr || (cp.GoType != "*uint64" && cp.GoType != "*uint32") {
		return fmt.Errorf("gen: %s: gen/bindings.json: %s: twoCall: the count %s is no pointer to an integer (%s)", f.Pos, f.Base, tc.Count, cp.GoType)
	}
	cp.Role = rOutCount
	n := 0
	for _, a := range tc.Arrays {
		if !has[a] {
			continue
		}
		for _, q := range f.Params {
			if q.C != a {
				continue
			}
			if q.Role != rPtr || !strings.HasPrefix(q.GoType, "*") {
				return fmt.Errorf("gen: %s: gen/bindings.json: %s: twoCall: %s is no typed pointer (%s)", f.Pos, f.Base, a, q.GoType)
			}
			q.Role, q.GoType, q.Count = rOutSlice, "[]"+strings.TrimPrefix(q.GoType, "*"), cp.C
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("gen: %s: gen/bindings.json: %s: twoCall: no array of %v here", f.Pos, f.Base, tc.Arrays)
	}
	return nil
}

// ranked makes arrays sized by a by-value parameter (a tensor's rank)
// slices whose length the wrapper checks before the call.
func (m *builder) ranked(f *function, fc funcConf, has map[string]bool) error {
	for name, expr := range fc.Ranked {
		if !has[name] {
			continue
		}
		by, minus, _ := strings.Cut(expr, "-")
		k := 0
		if minus != "" {
			if _, err := fmt.Sscanf(minus, "%d", &k); err != nil || k < 0 {
				return fmt.Errorf("gen: %s: gen/bindings.json: %s: ranked: %s: %q is no NAME or NAME-N", f.Pos, f.Base, name, expr)
			}
		}
		var sp, rp *param
		for _, q := range f.Params {
			switch q.C {
			case name:
				sp = q
			case by:
				rp = q
			}
		}
		if sp == nil || rp == nil || sp.Role != rPtr || !strings.HasPrefix(sp.GoType, "*") || rp.Role != rIn || !isInt(rp.GoType) {
			return fmt.Errorf("gen: %s: gen/bindings.json: %s: ranked: %s → %s is no (typed pointer, by-value integer) pair", f.Pos, f.Base, name, expr)
		}
		sp.Role, sp.GoType, sp.Rank, sp.RankMinus = rSlice, "[]"+strings.TrimPrefix(sp.GoType, "*"), rp.Go, k
	}
	return nil
}

// releases gives each function that frees a handle (cuLinkDestroy) the
// handle parameters whose kept C memory a successful call frees.
func (m *builder) releases() error {
	for _, f := range m.Funcs {
		fc := m.cfg.Functions[f.Base]
		for _, q := range f.Params {
			if q.Keep == "" {
				continue
			}
			free := fc.Keeps[q.C].Free
			found := false
			for _, g := range m.Funcs {
				if g.Base != free {
					continue
				}
				for _, h := range g.Params {
					if h.Role == rIn && h.GoType == q.Keep {
						found = true
						if !slices.Contains(g.Releases, h) {
							g.Releases = append(g.Releases, h)
						}
					}
				}
			}
			if !found {
				return fmt.Errorf("gen: %s: gen/bindings.json: %s: keeps: %s is freed by %s, which takes no %s", f.Pos, f.Base, q.C, free, q.Keep)
			}
		}
	}
	return nil
}
