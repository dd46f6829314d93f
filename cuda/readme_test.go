package cuda_test

import (
	"encoding/json"
	"fmt"
	"go/doc/comment"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/internal/modtest"
)

// snippet is a block of Go from the documentation, with where it starts.
type snippet struct {
	file string // relative to the module root
	line int    // of the block's first line
	code string
}

// readmeSnippets returns the ```go blocks of the README and docs/driver.md.
func readmeSnippets(t *testing.T, root string) []snippet {
	var out []snippet
	for _, name := range []string{"README.md", "docs/driver.md"} {
		out = append(out, markdownSnippets(t, root, name)...)
	}
	return out
}

// markdownSnippets returns the Go code blocks of a Markdown file of the
// module.
func markdownSnippets(t *testing.T, root, name string) []snippet {
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	var out []snippet
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```go" {
			continue
		}
		start := i + 1
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
		}
		out = append(out, snippet{name, start + 1, strings.Join(lines[start:i], "\n")})
	}
	return out
}

// docSnippets returns the code blocks of the cuda package's documentation
// (doc.go's package comment).
func docSnippets(t *testing.T, root string) []snippet {
	path := filepath.Join(root, "cuda", "doc.go")
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		t.Fatal("cuda/doc.go has no package documentation")
	}
	var out []snippet
	var p comment.Parser
	for _, b := range p.Parse(f.Doc.Text()).Content {
		if c, ok := b.(*comment.Code); ok {
			// The block's first line, found in the file, for messages.
			first := strings.SplitN(c.Text, "\n", 2)[0]
			line := f.Doc.Pos()
			for _, cm := range f.Doc.List {
				if strings.Contains(cm.Text, first) {
					line = cm.Pos()
					break
				}
			}
			out = append(out, snippet{"cuda/doc.go", fset.Position(line).Line, strings.TrimRight(c.Text, "\n")})
		}
	}
	return out
}

var importLine = regexp.MustCompile(`^import\s+("[^"]+"|\()`)

// source turns a snippet into a Go file. A snippet that starts with a
// package clause is a file as it stands. Any other is a fragment: its import
// declarations stay at the top and its statements become the body of
// func(ctx context.Context) (err error), so a fragment may use ctx and
// assign err without checking it, and must declare and use everything else
// as real code would. Packages a fragment names without importing them
// (cuda, driver and the standard ones the docs use) are imported for it.
// //line comments make the compiler's messages point into the document.
func (s snippet) source() string {
	lines := strings.Split(s.code, "\n")
	directive := func(i int) string { return fmt.Sprintf("//line %s:%d\n", s.file, s.line+i) }
	if strings.HasPrefix(strings.TrimSpace(s.code), "package ") {
		return directive(0) + s.code + "\n"
	}
	var imports, body strings.Builder
	i := 0
	for i < len(lines) {
		l := strings.TrimSpace(lines[i])
		if l == "" {
			i++
			continue
		}
		m := importLine.FindStringSubmatch(l)
		if m == nil {
			break
		}
		imports.WriteString(directive(i))
		for {
			imports.WriteString(lines[i] + "\n")
			i++
			if m[1] != "(" || strings.TrimSpace(lines[i-1]) == ")" || i == len(lines) {
				break
			}
		}
	}
	rest := strings.Join(lines[i:], "\n")
	have := imports.String()
	auto := map[string]string{"cuda": "github.com/cudagen/cudagen/cuda", "driver": "github.com/cudagen/cudagen/cuda/driver",
		"fmt": "fmt", "time": "time", "errors": "errors", "log": "log"}
	var extra []string
	used := qualifiers(rest)
	for name, path := range auto {
		if used[name] && !strings.Contains(have, `"`+path+`"`) {
			extra = append(extra, fmt.Sprintf("import %q\n", path))
		}
	}
	if !strings.Contains(have, `"context"`) {
		extra = append(extra, "import \"context\"\n")
	}
	body.WriteString("package snippet\n\n")
	body.WriteString(have)
	body.WriteString(strings.Join(extra, ""))
	body.WriteString("\nfunc _(ctx context.Context) (err error) {\n")
	body.WriteString(directive(i))
	body.WriteString(rest)
	body.WriteString("\n\treturn\n}\n")
	return body.String()
}

// qualifiers returns the identifiers followed by a dot in src, comments
// left out: the packages a fragment names.
func qualifiers(src string) map[string]bool {
	fset := token.NewFileSet()
	var sc scanner.Scanner
	sc.Init(fset.AddFile("", -1, len(src)), []byte(src), nil, 0)
	used := map[string]bool{}
	prev := ""
	for {
		_, tok, lit := sc.Scan()
		if tok == token.EOF {
			return used
		}
		if tok == token.PERIOD && prev != "" {
			used[prev] = true
		}
		prev = ""
		if tok == token.IDENT {
			prev = lit
		}
	}
}

func moduleRoot(t *testing.T) string {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Skipf("skipping: the module's source is not here (%v); run from a checkout", err)
	}
	return root
}

// TestDocSnippets compiles every Go block of the README and of the package
// documentation, each as a package of its own placed in the module through
// the go command's -overlay (nothing is written into the checkout), in one
// go build (modtest.Build). Messages point into the document (README.md:LINE).
func TestDocSnippets(t *testing.T) {
	root := moduleRoot(t)
	snippets := append(readmeSnippets(t, root), docSnippets(t, root)...)
	if len(snippets) < 4 {
		t.Fatalf("found %d snippets; the README has at least 3 and the package doc 1", len(snippets))
	}
	files := map[string]string{}
	for i, s := range snippets {
		files[fmt.Sprintf("internal/docsnippets/s%d/snippet.go", i)] = s.source()
	}
	if out, err := modtest.Build(t, root, files, ""); err != nil {
		t.Fatalf("the documentation's Go does not compile: %v\n%s", err, out)
	}
	for _, s := range snippets {
		t.Logf("compiles: %s:%d", s.file, s.line)
	}
}

// The README lists every build tag of headers/manifest.json and states the
// Go version go.mod requires.
func TestReadmeFacts(t *testing.T) {
	root := moduleRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Versions []struct {
			Tag string `json:"tag"`
		} `json:"versions"`
	}
	b, err := os.ReadFile(filepath.Join(root, "headers", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest.Versions) == 0 {
		t.Fatal("no versions in headers/manifest.json")
	}
	for _, v := range manifest.Versions {
		if !strings.Contains(string(readme), "\n| `"+v.Tag+"` |") {
			t.Errorf("the README's build-tag table lacks a row for `%s`", v.Tag)
		}
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	want := "Go (" + string(m[1]) + "+"
	if !strings.Contains(string(readme), want) {
		t.Errorf("the README does not say %q, the version go.mod requires", want)
	}
	for _, old := range regexp.MustCompile(`Go \(?(1\.\d+)\+`).FindAllSubmatch(readme, -1) {
		if string(old[1]) != string(m[1]) {
			t.Errorf("the README names Go %s+; go.mod says %s", old[1], m[1])
		}
	}
}
