package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode"
)

// Config says what is bound and how (gen/bindings.json).
type Config struct {
	// Package is the Go package name of the generated layer.
	Package string `json:"package"`
	// Output is the directory, relative to the module root, written to.
	Output string `json:"output"`
	// PerThreadDefaultStream binds the _ptsz/_ptds entry points: the header
	// is read with CUDA_API_PER_THREAD_DEFAULT_STREAM defined and functions
	// are resolved with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM.
	PerThreadDefaultStream bool       `json:"perThreadDefaultStream"`
	Initialisms            []string   `json:"initialisms"`
	Handles                []NameMap  `json:"handles"`
	Structs                []NameMap  `json:"structs"`
	Enums                  []EnumConf `json:"enums"`
	Functions              []FuncConf `json:"functions"`
	initialisms            map[string]bool
}

// NameMap maps a C type name to a Go one.
type NameMap struct {
	C  string `json:"c"`
	Go string `json:"go"`
}

// EnumConf binds a C enum typedef.
type EnumConf struct {
	C      string `json:"c"`
	Go     string `json:"go"`
	Prefix string `json:"prefix"`
	// Flags marks a bit set: String prints the set bits joined by '|'.
	Flags bool `json:"flags"`
	// Error marks the result enum: its values are errors.
	Error bool `json:"error"`
	// Optional enums may be missing from a header.
	Optional bool `json:"optional"`
}

// FuncConf binds one driver function by its base name (the name cuda.h
// documents; the header's macros say which versioned entry point it is).
type FuncConf struct {
	C  string `json:"c"`
	Go string `json:"go"`
	// Types overrides the Go type of parameters, by C parameter name.
	Types map[string]string `json:"types"`
	// Out names pointer parameters that are results, beyond those inferred.
	Out []string `json:"out"`
	// In names pointer parameters that are inputs, not results.
	In []string `json:"in"`
	// Buffer makes a (char *buf, int len) pair into a string result.
	Buffer *BufferConf `json:"buffer"`
	// Ctx also generates a variant that makes a context current in the same
	// cgo call.
	Ctx bool `json:"ctx"`
	// Optional functions may be missing from a header (then they are absent
	// from that version's bindings); required ones missing are an error.
	Optional bool `json:"optional"`
}

// BufferConf describes a caller-provided string buffer.
type BufferConf struct {
	Buf  string `json:"buf"`
	Len  string `json:"len"`
	Size int    `json:"size"`
}

// LoadConfig reads and checks a config file.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Config
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.Package == "" || c.Output == "" {
		return nil, fmt.Errorf("%s: package and output are required", path)
	}
	seen := map[string]bool{}
	for _, f := range c.Functions {
		if !strings.HasPrefix(f.C, "cu") {
			return nil, fmt.Errorf("%s: function %q is not a driver API name (cu...)", path, f.C)
		}
		if seen[f.C] {
			return nil, fmt.Errorf("%s: function %s listed twice", path, f.C)
		}
		seen[f.C] = true
	}
	c.initialisms = map[string]bool{}
	for _, s := range c.Initialisms {
		c.initialisms[strings.ToUpper(s)] = true
	}
	return &c, nil
}

// camel turns SNAKE_CASE words into Go's MixedCaps, keeping initialisms.
func (c *Config) camel(s string) string {
	var b strings.Builder
	for _, w := range strings.Split(s, "_") {
		if w == "" {
			continue
		}
		up := strings.ToUpper(w)
		if c.initialisms[up] {
			b.WriteString(up)
			continue
		}
		r := []rune(strings.ToLower(w))
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	return b.String()
}

// goFuncName is the Go name of a driver function: cuEventCreate → EventCreate,
// cuIpcGetEventHandle → IPCGetEventHandle.
func (c *Config) goFuncName(f FuncConf) string {
	if f.Go != "" {
		return f.Go
	}
	name := strings.TrimPrefix(f.C, "cu")
	// Split MixedCaps into words to apply initialisms.
	var words []string
	start := 0
	rs := []rune(name)
	for i := 1; i < len(rs); i++ {
		if unicode.IsUpper(rs[i]) && !unicode.IsUpper(rs[i-1]) {
			words = append(words, string(rs[start:i]))
			start = i
		}
	}
	words = append(words, string(rs[start:]))
	for i, w := range words {
		if c.initialisms[strings.ToUpper(w)] {
			words[i] = strings.ToUpper(w)
		}
	}
	return strings.Join(words, "")
}
