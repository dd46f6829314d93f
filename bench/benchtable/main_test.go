package main

import "testing"

func TestParse(t *testing.T) {
	for _, c := range []struct {
		line          string
		name          string
		ns, cyc       float64
		okNs, okCycle bool
	}{
		{"Record            172.7 ns/op (median of 5 loops of 30000) 362.7 cyc/op at 2.10 GHz", "Record", 172.7, 362.7, true, true},
		{"Query             155.8 ns/op (median of 5 loops of 30000)", "Query", 155.8, 0, true, false},
		{"stream  0  record   262.0  query   277.5", "", 0, 0, false, false},
		{"Record x ns/op", "", 0, 0, false, false},
	} {
		name, v, _, ok := cLineParse(c.line)
		if ok != c.okNs || ok && (name != c.name || v != c.ns) {
			t.Errorf("cLineParse(%q) = %q, %v, %v", c.line, name, v, ok)
		}
		name, v, _, ok = cycParse(c.line)
		if ok != c.okCycle || ok && (name != c.name || v != c.cyc) {
			t.Errorf("cycParse(%q) = %q, %v, %v", c.line, name, v, ok)
		}
	}
}
