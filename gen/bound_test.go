package main

import (
	"go/build/constraint"
	"regexp"
	"testing"
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
