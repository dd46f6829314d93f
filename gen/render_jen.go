package main

// Render stage, Go: the vocabulary of render_go.go: jennifer statements for
// what the model holds as text (Go types, comments) and for the layout the
// generated files keep (one-line bodies, one composite element a line).

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"

	"github.com/dave/jennifer/jen"
)

// driverPath is the package the bindings are generated into.
const driverPath = "github.com/cudagen/cudagen/cuda/driver"

// modulePath is the module's import path.
const modulePath = "github.com/cudagen/cudagen"

// newFile starts a generated Go file: the command, the generated marker
// and the build constraint.
func (e *renderer) newFile(pkg, constraint string) *jen.File {
	f := jen.NewFile(pkg)
	e.header(f, constraint)
	return f
}

// renderFor renders one version's file, naming the header declaration
// behind a failure (never quoting the generated source).
func renderFor(m *model, name string, f *jen.File) ([]byte, error) {
	var b bytes.Buffer
	if err := f.Render(&b); err != nil {
		re := renderError(err).(*formatError)
		re.Msg = name + ": " + re.Msg
		return nil, explainRender(re, m)
	}
	return b.Bytes(), nil
}

// comment is a comment of whole lines (each starting with //), those
// longer than 80 columns wrapped.
func comment(lines ...string) *jen.Statement {
	s := string(wrapComments([]byte(strings.Join(lines, "\n") + "\n")))
	return jen.Comment(strings.TrimSuffix(s, "\n"))
}

// docConst is a constant of a const block after its doc line, which
// starts with its name: docConst("BuildTag", tag, "is the build tag ...")
// declares "// BuildTag is the build tag ...", then BuildTag = tag.
func docConst(name string, value any, doc string) *jen.Statement {
	return comment("// " + name + " " + doc).Line().Id(name).Op("=").Lit(value)
}

// line is one comment line.
func line(format string, a ...any) string { return "// " + fmt.Sprintf(format, a...) }

// flat is a block kept on one line: a short function body.
func flat(stmts ...jen.Code) *jen.Statement {
	return jen.Custom(jen.Options{Open: "{", Close: "}", Separator: ";"}, stmts...)
}

// rows is a composite literal's body with one row a line; row ends each
// with its comma, which goes before a row's trailing comment.
func rows(lines ...jen.Code) *jen.Statement {
	return jen.Custom(jen.Options{Open: "{", Close: "}", Multi: true}, lines...)
}

func row(items ...jen.Code) *jen.Statement { return jen.Values(items...).Op(",") }

// number is a numeric literal as the model spells it (jennifer writes
// only decimal ones).
func number(text string) *jen.Statement { return jen.Op(text) }

// lit is an integer literal.
func lit[T int64 | uint64 | int](v T) *jen.Statement { return jen.Lit(int(v)) }

func unsafePointer(x jen.Code) *jen.Statement { return jen.Qual("unsafe", "Pointer").Call(x) }

func sliceData(name string) *jen.Statement { return jen.Qual("unsafe", "SliceData").Call(jen.Id(name)) }

func addr(name string) *jen.Statement { return jen.Op("&").Id(name) }

// typeCode is a Go type of the model ("[]unsafe.Pointer", "*[16]byte",
// "C.uint") as jennifer code.
func typeCode(t string) *jen.Statement { return typeIn(t, "") }

// typeIn is typeCode with the types the model defines qualified by pkg.
// A type the renderer does not know is written as it is (gofmt then says
// what is wrong with it, see renderFor).
func typeIn(t, pkg string) *jen.Statement {
	if x, err := parser.ParseExpr(t); err == nil {
		if c := exprCode(x, pkg); c != nil {
			return c
		}
	}
	return jen.Id(t)
}

func exprCode(x ast.Expr, pkg string) *jen.Statement {
	switch x := x.(type) {
	case *ast.Ident:
		if pkg != "" && !builtinType[x.Name] {
			return jen.Qual(pkg, x.Name)
		}
		return jen.Id(x.Name)
	case *ast.SelectorExpr:
		if p, ok := x.X.(*ast.Ident); ok {
			return jen.Qual(p.Name, x.Sel.Name)
		}
	case *ast.StarExpr:
		if e := exprCode(x.X, pkg); e != nil {
			return jen.Op("*").Add(e)
		}
	case *ast.ArrayType:
		e := exprCode(x.Elt, pkg)
		n, ok := x.Len.(*ast.BasicLit)
		switch {
		case e == nil:
		case x.Len == nil:
			return jen.Index().Add(e)
		case ok && n.Kind == token.INT:
			return jen.Index(number(n.Value)).Add(e)
		}
	}
	return nil
}

var builtinType = map[string]bool{
	"bool": true, "byte": true, "int": true, "int8": true, "uint8": true, "int16": true, "uint16": true, "int32": true,
	"uint32": true, "int64": true, "uint64": true, "float32": true, "float64": true, "uintptr": true, "string": true, "error": true,
}
