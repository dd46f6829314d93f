package main

// Render stage: the //go:build lines of hand-written files that use a
// function not every pinned version binds (the //cudagen:bound directive,
// below).

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// A hand-written file of the module whose code uses a function
// that not every pinned version binds names it in a directive before its
// package clause:
//
//	//cudagen:bound cuLogsRegisterCallback
//
// and the generator gives its //go:build line the versions that bind the
// function (their build tags, as the z-files have them), keeping its other
// terms (cgo, say). Pinning a toolkit rewrites the line with the rest, so
// the file builds exactly where the generated layer has what it uses.
//
// A file that depends on a function's Go signature (its results, say)
// names the signature instead, as go doc prints it:
//
//	//cudagen:sig GraphGetEdgesV2(hGraph Graph) ([]GraphNode, []GraphNode, []GraphEdgeData, error)
//
// and builds where the function has exactly that signature. A file that
// stands in for a function where it is not bound (a fallback beside a
// //cudagen:bound file) names it so:
//
//	//cudagen:unbound cuFuncGetParamInfo
//
// and builds exactly where the function is not bound. Several directives
// must all hold.
var (
	boundRe   = regexp.MustCompile(`(?m)^//cudagen:bound (cu\w+)$`)
	unboundRe = regexp.MustCompile(`(?m)^//cudagen:unbound (cu\w+)$`)
	sigRe     = regexp.MustCompile(`(?m)^//cudagen:sig (\w+\(.*)$`)
)

// rewriteBound adds to changes the hand-written files whose bound
// constraint is not the one the versions now pinned give.
func (g *generation) rewriteBound(models []*model, changes map[string][]byte) error {
	var paths []string
	err := filepath.WalkDir(g.o.Root, func(path string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != g.o.Root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bench"):
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasPrefix(d.Name(), "z"):
			paths = append(paths, path)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		pkg := regexp.MustCompile(`(?m)^package `).FindIndex(src)
		if pkg == nil {
			continue
		}
		head := src[:pkg[0]]
		var exprs []string
		for _, dir := range []struct {
			re       *regexp.Regexp
			sig, has bool
		}{{boundRe, false, true}, {unboundRe, false, false}, {sigRe, true, true}} {
			for _, d := range dir.re.FindAllSubmatch(head, -1) {
				fn, sig := string(d[1]), ""
				if dir.sig {
					fn, sig = "", fn
				}
				x, err := g.boundExpr(models, fn, sig, dir.has)
				if err != nil {
					return fmt.Errorf("gen: %s: %w", path, err)
				}
				exprs = append(exprs, x)
			}
		}
		if len(exprs) == 0 {
			continue
		}
		expr := andExprs(exprs)
		b, err := setVersionExpr(src, expr)
		if err != nil {
			return fmt.Errorf("gen: %s: %w", path, err)
		}
		if !bytes.Equal(b, src) {
			changes[path] = b
		}
	}
	return nil
}

// andExprs joins version expressions that must all hold ("" holds always).
func andExprs(xs []string) string {
	var terms []string
	for _, x := range xs {
		if x != "" {
			terms = append(terms, "("+x+")")
		}
	}
	return strings.Join(terms, " && ")
}

// sigOf is the signature of the Go function name in a committed file's
// text ("" where it has none), as goSignature writes it.
func sigOf(src []byte, name string) string {
	i := bytes.Index(src, []byte("\nfunc "+name+"("))
	if i < 0 {
		return ""
	}
	line := src[i+len("\nfunc "):]
	if j := bytes.Index(line, []byte(" {")); j >= 0 {
		line = line[:j]
	}
	return string(line)
}

// boundExpr is the build expression of the pinned versions that bind fn
// (by its C name) or, with sig, that have a Go function of exactly that
// signature: from the model of a version generated now, from the
// committed file of a version kept. With has false, of the versions that
// do not.
func (g *generation) boundExpr(models []*model, fn, sig string, has bool) (string, error) {
	what := "//cudagen:bound " + fn
	switch {
	case sig != "":
		what = "//cudagen:sig " + sig
	case !has:
		what = "//cudagen:unbound " + fn
	}
	name, _, _ := strings.Cut(sig, "(")
	byVersion := map[string]*model{}
	for _, m := range models {
		byVersion[m.Version] = m
	}
	var terms []string
	for _, v := range g.man.Versions {
		binds := false
		if m := byVersion[v.Version]; m != nil {
			if sig == "" {
				binds = m.funcNamed(fn) != nil
			} else {
				binds = slices.Contains(m.signatures(), sig)
			}
		} else {
			b, err := os.ReadFile(filepath.Join(g.out, "zdriver_cuda"+strings.ReplaceAll(v.Version, ".", "_")+".go"))
			if err != nil {
				return "", fmt.Errorf("%s: version %s is neither generated nor committed: %w", what, v.Version, err)
			}
			if sig == "" {
				binds = bytes.Contains(b, []byte(fmt.Sprintf(", %q, ", fn))) // its row of the Functions table
			} else {
				binds = sigOf(b, name) == sig
			}
		}
		if binds != has {
			continue
		}
		x := versionExpr(g.man.Versions, v.Version)
		if x == "" {
			return "", nil // the only version: no constraint
		}
		terms = append(terms, "("+x+")")
	}
	if len(terms) == 0 && has {
		return "", fmt.Errorf("%s: no pinned version has it; remove the file or the directive", what)
	}
	if len(terms) == 0 {
		return "", fmt.Errorf("%s: every pinned version has it; remove the file or the directive", what)
	}
	return strings.Join(terms, " || "), nil
}

// setVersionExpr gives src's //go:build line the version expression expr,
// keeping its terms that name no version.
func setVersionExpr(src []byte, expr string) ([]byte, error) {
	rest, loc, err := otherTerms(src)
	if err != nil {
		return nil, err
	}
	line := buildLine(expr, rest...)
	switch {
	case loc != nil && line == "":
		return append(src[:loc[0]:loc[0]], bytes.TrimLeft(src[loc[1]:], "\n")...), nil
	case loc != nil:
		return append(append(append([]byte(nil), src[:loc[0]]...), line...), src[loc[1]:]...), nil
	case line == "":
		return src, nil
	}
	return append([]byte(line+"\n\n"), src...), nil
}
