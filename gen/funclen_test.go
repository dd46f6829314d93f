package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/internal/modtest"
)

// maxFuncLines is the most lines a function of gen/ or headers/ may have
// (from its func keyword to its closing brace) unless its doc comment says
// why it is longer.
const maxFuncLines = 80

// longBecause is the marker of that reason: a sentence of the function's
// doc comment that starts "Long because" (a line break between the two
// words is allowed: doc comments are wrapped).
var longBecause = regexp.MustCompile(`(^|[.:;]\s+|\n\s*)Long\s+because\b`)

// TestFunctionLength fails listing each function of gen/ and headers/
// (their non-test .go files) over maxFuncLines lines whose doc comment
// does not say why.
func TestFunctionLength(t *testing.T) {
	var long []string
	for _, dir := range []string{".", filepath.Join("..", "headers")} {
		for name, src := range modtest.Sources(t, dir) {
			found, err := longFuncs(name, src)
			if err != nil {
				t.Fatal(err)
			}
			long = append(long, found...)
		}
	}
	slices.Sort(long)
	if len(long) > 0 {
		t.Errorf("%d functions over %d lines whose doc comment does not say why (a sentence starting \"Long because\"); split them by concern or say why:\n\t%s",
			len(long), maxFuncLines, strings.Join(long, "\n\t"))
	}

	t.Run("synthetic", func(t *testing.T) {
		body := strings.Repeat("\tx++\n", maxFuncLines)
		src := "package p\n\n" +
			"// short fits.\nfunc short() {}\n\n" +
			"// tooLong has no reason.\nfunc tooLong() {\n\tx := 0\n" + body + "\t_ = x\n}\n\n" +
			"// justified is long. Long\n// because it is one table.\nfunc justified() {\n\tx := 0\n" + body + "\t_ = x\n}\n\n" +
			"type T struct{}\n\n// method has a doc that only mentions being long because of nothing.\nfunc (T) method() {\n\tx := 0\n" + body + "\t_ = x\n}\n"
		got, err := longFuncs("synthetic.go", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"synthetic.go:7: tooLong (84 lines)", "synthetic.go:182: T.method (84 lines)"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("longFuncs = %q, want %q", got, want)
		}
	})
}

// longFuncs lists the functions of one source file over maxFuncLines lines
// whose doc comment has no "Long because" sentence, as "file:line: name (n
// lines)".
func longFuncs(name string, src []byte) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var long []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		start, end := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
		n := end - start + 1
		if n <= maxFuncLines || fd.Doc != nil && longBecause.MatchString(fd.Doc.Text()) {
			continue
		}
		fn := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) > 0 {
			fn = recvTypeName(fd.Recv.List[0].Type) + "." + fn
		}
		long = append(long, fmt.Sprintf("%s:%d: %s (%d lines)", name, start, fn, n))
	}
	return long, nil
}

// recvTypeName is the name of a method's receiver type: T of *T, T[K].
func recvTypeName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return fmt.Sprint(x)
		}
	}
}
