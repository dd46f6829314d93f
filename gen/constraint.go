package main

// Render stage: the build constraints of the per-version generated files.
// Each pinned version's files build under its own tag; with no pinned tag,
// the newest version's build; should several pinned tags be given, the
// oldest wins; a cudaX.Y tag that no pinned version has fails the build
// (tagsFile). The constraint depends only on the manifest, so every
// generated file's constraint is rewritten on every run, in the text, also
// for versions whose headers cannot be had here.

import (
	"bytes"
	"fmt"
	"go/build/constraint"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/cudagen/cudagen/headers"
	"github.com/dave/jennifer/jen"
)

// versionExpr is the build expression that selects version among versions
// (without the "//go:build " prefix): its tag and no older pinned version's
// tag; for the newest, no other pinned version's tag. It is "" when version
// is the only one pinned.
func versionExpr(versions []headers.Entry, version string) string {
	vs := append([]headers.Entry(nil), versions...)
	sort.SliceStable(vs, func(i, j int) bool { return headers.Less(vs[i].Version, vs[j].Version) })
	newest := vs[len(vs)-1].Version
	var terms []string
	if version != newest {
		tag := headers.TagFor(version)
		for _, v := range vs {
			if v.Version == version {
				tag = v.Tag // a library's pin: its own tag (nccl2.22)
			}
		}
		terms = append(terms, tag)
	}
	for _, v := range vs {
		if v.Version != version && (version == newest || headers.Less(v.Version, version)) {
			terms = append(terms, "!"+v.Tag)
		}
	}
	return strings.Join(terms, " && ")
}

// buildLine is the //go:build line of a file selected by the version
// expression expr (see versionExpr) and the further terms rest (e.g. "cgo"):
// "//go:build (EXPR) && cgo". It is "" when there is nothing to constrain.
// Generated files write their constraint with it, and the rewriter too, so
// that both agree to the byte.
func buildLine(expr string, rest ...string) string {
	var terms []string
	if expr != "" {
		if len(rest) > 0 && strings.ContainsAny(expr, "&|") {
			expr = "(" + expr + ")"
		}
		terms = append(terms, expr)
	}
	terms = append(terms, rest...)
	if len(terms) == 0 {
		return ""
	}
	line := "//go:build " + strings.Join(terms, " && ")
	// gofmt prints the generated files' lines in canonical form (no
	// redundant parentheses); the rewriter's must be the same bytes.
	if x, err := constraint.Parse(line); err == nil {
		line = "//go:build " + x.String()
	}
	return line
}

var reVersionTag = regexp.MustCompile(`^cuda[0-9]+\.[0-9]+$`)

// reGenerated matches a per-version generated file: z<name>_cudaX_Y[_more].go.
var reGenerated = regexp.MustCompile(`^z[A-Za-z0-9]*_cuda([0-9]+)_([0-9]+)(_[A-Za-z0-9_]+)?\.go$`)

// generatedVersion returns the version of a per-version generated file's
// name ("zdriver_cuda13_0_test.go" → "13.0").
func generatedVersion(name string) (string, bool) {
	m := reGenerated.FindStringSubmatch(name)
	if m == nil {
		return "", false
	}
	return m[1] + "." + m[2], true
}

// rewriteConstraint returns src, a generated file of version, with its
// //go:build line made the one the versions pinned now give it. Terms that
// name no CUDA version (cgo, !cgo) are kept, after the version expression.
func rewriteConstraint(src []byte, versions []headers.Entry, version string) ([]byte, error) {
	return setConstraint(src, versionExpr(versions, version))
}

// setConstraint gives src the build constraint expr, with the terms of its
// own that name no version.
func setConstraint(src []byte, expr string) ([]byte, error) {
	pkg := regexp.MustCompile(`(?m)^package `).FindIndex(src)
	if pkg == nil {
		return nil, fmt.Errorf("no package clause")
	}
	head := src[:pkg[0]]
	rest, _, err := otherTerms(head)
	if err != nil {
		return nil, err
	}
	line := buildLine(expr, rest...)
	// The header is the command, the do-not-edit line, then "//" and the
	// constraint where there is one (see renderer.header).
	lines := strings.SplitAfter(string(head), "\n")
	for i := 0; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "//go:build ") {
			lines = append(lines[:i], lines[i+1:]...)
			if i > 0 && lines[i-1] == "//\n" {
				lines = append(lines[:i-1], lines[i:]...)
			}
			break
		}
	}
	var b bytes.Buffer
	put := line == ""
	for _, l := range lines {
		b.WriteString(l)
		if !put && strings.HasPrefix(l, "// "+doNotEdit) {
			b.WriteString("//\n" + line + "\n")
			put = true
		}
	}
	if !put {
		return nil, fmt.Errorf("no %q line to put the constraint after", "// "+doNotEdit)
	}
	b.Write(src[pkg[0]:])
	return b.Bytes(), nil
}

// otherTerms are the terms of head's //go:build line that name no
// version (cgo, say), and where the line is (nil: none).
func otherTerms(head []byte) (rest []string, loc []int, err error) {
	loc = regexp.MustCompile(`(?m)^//go:build [^\n]*$`).FindIndex(head)
	if loc == nil {
		return nil, nil, nil
	}
	x, err := constraint.Parse(string(head[loc[0]:loc[1]]))
	if err != nil {
		return nil, nil, err
	}
	for _, term := range conjuncts(x) {
		if !onlyVersionTags(term) {
			rest = append(rest, term.String())
		}
	}
	return rest, loc, nil
}

func conjuncts(x constraint.Expr) []constraint.Expr {
	if a, ok := x.(*constraint.AndExpr); ok {
		return append(conjuncts(a.X), conjuncts(a.Y)...)
	}
	return []constraint.Expr{x}
}

func onlyVersionTags(x constraint.Expr) bool {
	only := true
	x.Eval(func(tag string) bool {
		if !reVersionTag.MatchString(tag) {
			only = false
		}
		return false
	})
	return only
}

// generatedFiles lists every per-version generated file under root (by
// name, and first line the generator's command), skipping hidden
// directories and testdata.
func generatedFiles(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if _, ok := generatedVersion(d.Name()); !ok {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.HasPrefix(b, []byte(genCommand+"\n")) {
			files = append(files, path)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// tagsFile is the generated file that fails the build under a cudaX.Y tag
// that names no pinned toolkit, relative to the output directory.
const tagsFile = "ztags.go"

// Tag range of tagsFile: every cudaX.Y with X from minTagMajor to the larger
// of maxTagMajor and the newest pinned major + 1, and Y from 0 to 9, that
// is not pinned. Go's build constraints match tags by name only, so a tag
// outside the range (cuda9.2, cuda12.10, cuda25.1) is not caught: it
// selects nothing, and the newest pinned version is built.
const (
	minTagMajor = 10
	maxTagMajor = 19
)

// unpinnedTags lists the cudaX.Y tags of tagsFile's range that no pinned
// version has, oldest first.
func unpinnedTags(versions []headers.Entry) []string {
	pinned := map[string]bool{}
	last := maxTagMajor
	for _, v := range versions {
		pinned[v.Tag] = true
		if major, _, err := headers.ParseVersion(v.Version); err == nil && major+1 > last {
			last = major + 1
		}
	}
	var tags []string
	for major := minTagMajor; major <= last; major++ {
		for minor := 0; minor <= 9; minor++ {
			if t := headers.TagFor(fmt.Sprintf("%d.%d", major, minor)); !pinned[t] {
				tags = append(tags, t)
			}
		}
	}
	return tags
}

// unpinnedTagIdent is the undefined identifier tagsFile uses: go build
// prints it ("undefined: cuda_build_tag_is_not_pinned__pinned_tags_are_
// cuda11_8_cuda12_4_cuda13_0"), so it reads as the message.
func unpinnedTagIdent(versions []headers.Entry) string {
	vs := append([]headers.Entry(nil), versions...)
	sort.SliceStable(vs, func(i, j int) bool { return headers.Less(vs[i].Version, vs[j].Version) })
	id := "cuda_build_tag_is_not_pinned__pinned_tags_are"
	for _, v := range vs {
		id += "_" + strings.ReplaceAll(v.Tag, ".", "_")
	}
	return id
}

// tags renders tagsFile: built only under a cudaX.Y tag that no pinned
// version has (see unpinnedTags), it refers to an undefined identifier that
// names the pinned tags, so that such a build fails instead of building the
// newest version's bindings. It depends on the manifest only, and every run
// writes it.
func (e *renderer) tags() ([]byte, error) {
	tags := unpinnedTags(e.Versions)
	f := jen.NewFile(e.Cfg.Package)
	e.header(f, "//go:build "+strings.Join(tags, " || "))
	f.Comment("A cudaX.Y build tag selects the bindings of the pinned toolkit X.Y. This file")
	f.Comment("is built only under a cudaX.Y tag that no pinned toolkit has (" + tags[0] + " to " + tags[len(tags)-1] + ",")
	f.Comment("but the pinned ones), and it does not compile: the identifier below, which")
	f.Comment("go build prints, names the pinned tags. Build with one of them, or with no")
	f.Comment("cudaX.Y tag for the newest; or pin the toolkit: go run ./gen -cuda DIR.")
	f.Const().Id("_").Op("=").Id(unpinnedTagIdent(e.Versions))
	return e.gofmt(f)
}
