package main

// The handles whose calls stay on one OS thread ("threads" in a config:
// gen/bindings.json, a library's). A goroutine moves between OS threads,
// and CUDA's JIT linkers need a link's calls on one thread: links whose
// calls ran on different threads crashed the process, and links whose
// calls ran on one thread did not. Every function that makes, takes or
// ends a handle of such a kind runs its call on an OS thread the handle
// owns (cuda/internal/osthread); the model marks them here, the cgo
// wrapper's renderer (threadCall) wraps their calls.

import "fmt"

// threadUse is how a function uses a handle that owns an OS thread.
type threadUse struct {
	GoType string // the handle's Go type: "LinkState"
	Kind   string // what osthread's table files it under: "driver.LinkState"
	Param  *param // the handle: a result (Make) or a parameter
	Make   bool   // the call makes the handle: it runs on a thread of its own
	End    bool   // a successful call ends the handle and its thread
	Ptr    bool   // the handle is passed by pointer (a Destroy that clears it)
	Why    string // the config's reason
}

// threads marks the functions that make, take or end a handle of a kind
// in "threads". A kind that is no handle, that no function makes, or
// whose "end" takes none, is refused; so is a function that passes such a
// handle other than by value, by pointer or as its single result (its
// thread could not be found), or that takes handles of two such kinds.
func (m *builder) threads() error {
	for cname, tc := range m.cfg.Threads {
		var t *namedType
		for _, nt := range m.Types {
			if nt.C == cname && nt.Kind == tHandle {
				t = nt
			}
		}
		if t == nil {
			return fmt.Errorf("gen: %s: threads: %s is no handle type of this header", m.cfgName(), cname)
		}
		made, ended := false, false
		for _, f := range m.Funcs {
			u, err := threadUseOf(f, t.Go, tc)
			if err != nil {
				return err
			}
			if u == nil {
				continue
			}
			if f.Thread != nil {
				return fmt.Errorf("gen: %s: %s takes a %s and a %s, which own different OS threads (\"threads\" in the config)", f.Pos, f.Symbol, f.Thread.GoType, u.GoType)
			}
			u.Kind = m.cfg.Package + "." + t.Go
			f.Thread = u
			made, ended = made || u.Make, ended || u.End
		}
		if !made || !ended {
			return fmt.Errorf("gen: %s: threads: %s: no bound function makes it, or %s (its \"end\") takes none", m.cfgName(), cname, tc.End)
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
		byPtr := q.Role == rPtr && q.GoType == "*"+kind
		if u != nil || q.Role != rIn && q.Role != rOut && !byPtr {
			return nil, fmt.Errorf("gen: %s: %s passes %s %s, not one by value, by pointer or as its result: its OS thread cannot be found (\"threads\" in the config)", f.Pos, f.Symbol, kind, q.C)
		}
		u = &threadUse{GoType: kind, Param: q, Make: q.Role == rOut, End: f.Base == tc.End && q.Role != rOut, Ptr: byPtr, Why: tc.Why}
	}
	return u, nil
}

// cfgName names the config in an error: "the driver package's config".
func (m *builder) cfgName() string { return fmt.Sprintf("the %s package's config", m.cfg.Package) }
