package main

// The handles whose calls stay on one OS thread (gen/bindings.json
// "threads"). A goroutine moves between OS threads, and the driver's JIT
// linker keeps per-thread state for a link: a link whose calls ran on
// different threads crashed the process. Every function that makes, takes
// or ends a handle of such a kind runs its call on an OS thread the handle
// owns (cuda/driver/thread.go); the model marks them here, the cgo
// wrapper's renderer (threadCall) wraps their calls.

import "fmt"

// threadUse is how a function uses a handle that owns an OS thread.
type threadUse struct {
	Kind  string // the handle's Go type: "LinkState"
	Param *param // the handle: a result (Make) or a parameter
	Make  bool   // the call makes the handle: it runs on a new thread
	End   bool   // a successful call ends the handle and its thread
	Why   string // gen/bindings.json's reason
}

// threads marks the functions that make, take or end a handle of a kind
// in "threads". A kind no function makes, or whose "end" takes no such
// handle, is refused, and so is a function that passes such a handle
// other than one by value or as its single result: its thread could not
// be found.
func (m *builder) threads() error {
	for cname, tc := range m.cfg.Threads {
		var t *namedType
		for _, nt := range m.Types {
			if nt.C == cname && nt.Kind == tHandle {
				t = nt
			}
		}
		if t == nil {
			return fmt.Errorf("gen: gen/bindings.json: threads: %s is no handle type of this header", cname)
		}
		made, ended := false, false
		for _, f := range m.Funcs {
			u, err := threadUseOf(f, t.Go, tc)
			if err != nil || u == nil {
				if err != nil {
					return err
				}
				continue
			}
			f.Thread = u
			made, ended = made || u.Make, ended || u.End
		}
		if !made || !ended {
			return fmt.Errorf("gen: gen/bindings.json: threads: %s: no bound function makes it, or %s (its \"end\") takes none", cname, tc.End)
		}
	}
	return nil
}

// threadUseOf is how f uses a handle of the Go type kind: nil for not at all.
func threadUseOf(f *function, kind string, tc threadConf) (*threadUse, error) {
	var u *threadUse
	for _, q := range f.Params {
		if q.GoType != kind && q.GoType != "[]"+kind && q.GoType != "*"+kind {
			continue
		}
		if u != nil || q.Role != rIn && q.Role != rOut {
			return nil, fmt.Errorf("gen: %s: %s passes %s %s, not one by value or as its result: its OS thread cannot be found (gen/bindings.json \"threads\")", f.Pos, f.Symbol, kind, q.C)
		}
		u = &threadUse{Kind: kind, Param: q, Make: q.Role == rOut, End: f.Base == tc.End && q.Role == rIn, Why: tc.Why}
	}
	return u, nil
}
