package main

// Model and render stages of the "sized" shape (shapes.go): an output
// array whose length another function of the API returns, such as
// nvrtcGetPTX's ptx, whose length nvrtcGetPTXSize gives. The wrapper calls
// that function first with the parameters of the same names, checks the
// length (sizedLen, hand-written in the package), allocates, and calls.

import (
	"fmt"

	"github.com/dave/jennifer/jen"
)

// sizedFuncs resolves each sized parameter's length function among the
// bound functions: it must be bound, return one result, and take only
// parameters its user has under the same C names.
func (m *builder) sizedFuncs() error {
	for _, f := range m.Funcs {
		for _, q := range f.Params {
			if q.Role != rSized {
				continue
			}
			by := m.cfg.Functions[f.Base].Sized[q.C].By
			g := m.funcNamed(by)
			if g == nil {
				return fmt.Errorf("gen: %s: %s: %s is sized by %s, which is not bound", f.Pos, f.Symbol, q.C, by)
			}
			if len(outs(g)) != 1 || outs(g)[0].Role != rOut {
				return fmt.Errorf("gen: %s: %s: %s is sized by %s, which does not return one length", f.Pos, f.Symbol, q.C, by)
			}
			q.SizedBy, q.SizedArgs = g, nil
			for _, a := range inParams(g) {
				name := goParamOf(f, a.C)
				if name == "nil" {
					return fmt.Errorf("gen: %s: %s: %s is sized by %s, whose parameter %s it does not have", f.Pos, f.Symbol, q.C, by, a.C)
				}
				q.SizedArgs = append(q.SizedArgs, name)
			}
		}
	}
	return nil
}

// sized is the argument of a sized parameter: the length asked of its
// function, checked and allocated before the call.
func (w *wrapper) sized(q *param) jen.Code {
	n, l, buf := "n"+q.Go, "l"+q.Go, q.Go
	var args []jen.Code
	for _, a := range q.SizedArgs {
		args = append(args, jen.Id(a))
	}
	w.add(
		jen.List(jen.Id(n), jen.Err()).Op(":=").Id(q.SizedBy.GoName).Call(args...),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return()),
		jen.List(jen.Id(l), jen.Err()).Op(":=").Id("sizedLen").Call(jen.Id(n), jen.Lit(q.SizedBy.Symbol)),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return()),
	)
	if q.Text {
		buf = "c" + q.Go
		w.add(jen.Id(buf).Op(":=").Make(jen.Index().Byte(), jen.Id(l)))
		w.post = append(w.post, jen.Id(q.Go).Op("=").Id("cString").Call(jen.Id(buf)))
	} else {
		w.add(jen.Id(q.Go).Op("=").Make(typeCode(q.GoType), jen.Id(l)))
	}
	return unsafePointer(sliceData(buf))
}
