package main

import (
	"go/build/constraint"
	"regexp"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/headers"
)

// A bound file's //go:build line gets the versions' expression and keeps
// its other terms; rewriting it again changes nothing.
func TestSetVersionExpr(t *testing.T) {
	src := []byte("//go:build cgo && !cuda11.8 && !cuda12.4\n\n//cudagen:bound cuX\n\npackage driver\n")
	expr := "(cuda12.4 && !cuda11.8) || (!cuda11.8 && !cuda12.4)"
	b, err := setVersionExpr(src, expr)
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^//go:build .*$`).Find(b)
	x, err := constraint.Parse(string(line))
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	for _, c := range []struct {
		tags []string
		want bool
	}{
		{[]string{"cgo"}, true},
		{[]string{"cgo", "cuda12.4"}, true},
		{[]string{"cgo", "cuda11.8"}, false},
		{[]string{"cuda12.4"}, false},
	} {
		has := map[string]bool{}
		for _, tag := range c.tags {
			has[tag] = true
		}
		if got := x.Eval(func(tag string) bool { return has[tag] }); got != c.want {
			t.Errorf("%s with %v: %v, want %v", line, c.tags, got, c.want)
		}
	}
	if again, err := setVersionExpr(b, expr); err != nil || string(again) != string(b) {
		t.Errorf("a second rewrite changed the file (%v):\n%s", err, again)
	}
	if m := boundRe.FindSubmatch(b); m == nil || string(m[1]) != "cuX" {
		t.Errorf("the directive is not found: %q", m)
	}
}

// The versions that bind a function and those that do not get
// complementary expressions: a //cudagen:bound file and its
// //cudagen:unbound fallback build in exactly one of the versions each.
func TestUnboundComplementsBound(t *testing.T) {
	g := &generation{man: &headers.Manifest{Versions: []headers.Entry{{Version: "11.8", Tag: "cuda11.8"}, {Version: "12.4", Tag: "cuda12.4"}, {Version: "13.0", Tag: "cuda13.0"}}}}
	var models []*model
	for _, v := range []string{"11.8", "12.4", "13.0"} {
		m := &model{Version: v}
		if v != "11.8" {
			m.Funcs = []*function{{Base: "cuX"}}
		}
		models = append(models, m)
	}
	parse := func(has bool) constraint.Expr {
		t.Helper()
		x, err := g.boundExpr(models, "cuX", "", has)
		if err != nil {
			t.Fatal(err)
		}
		e, err := constraint.Parse("//go:build " + x)
		if err != nil {
			t.Fatalf("%q: %v", x, err)
		}
		return e
	}
	bound, unbound := parse(true), parse(false)
	for _, tag := range []string{"cuda11.8", "cuda12.4", "cuda13.0", ""} {
		has := func(t string) bool { return t == tag }
		if b, u := bound.Eval(has), unbound.Eval(has); b == u || b != (tag != "cuda11.8") {
			t.Errorf("tag %q: bound %v (%s), unbound %v (%s); want exactly one, bound where cuX is", tag, b, bound, u, unbound)
		}
	}
	for i := range models {
		models[i].Funcs = []*function{{Base: "cuX"}}
	}
	if _, err := g.boundExpr(models, "cuX", "", false); err == nil || !strings.Contains(err.Error(), "every pinned version has it") {
		t.Errorf("an unbound directive of a function every version binds: %v, want an error saying so", err)
	}
}
