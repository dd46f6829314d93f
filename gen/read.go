package main

// Read stage: the header, checked (headercheck.go) and parsed. cc/v4
// preprocesses and type-checks cudaTypedefs.h (which includes cuda.h); a
// probe appended to it stringifies every candidate name after macro
// expansion, so the header's own macros say which versioned entry point a
// name denotes. The doc comments (\brief, \param) are read from the
// header's text.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"modernc.org/cc/v4"
)

// source is one parsed header version.
type source struct {
	dir    string
	ast    *cc.AST
	probes map[string]string // name → what it expands to
	files  map[string][]string
	// decls are cuda.h's declarations, in order.
	funcs    []*cc.Declarator
	typedefs []*cc.Declarator
	// pfns are cudaTypedefs.h's PFN_cuX_vN[_ptsz] typedefs the
	// preprocessor kept, by name after macro expansion.
	pfns map[string]*cc.Declarator
	// aliasOf maps "typedef A B;" B → A, as the text spells it.
	aliasOf map[string]string
	docs    map[string]*parsedDoc // parsed doc blocks, by position
}

var aliasRe = regexp.MustCompile(`(?m)^\s*typedef\s+(\w+)\s+(\w+)\s*;`)

var protoRe = regexp.MustCompile(`\bCUresult\s+CUDAAPI\s+(cu\w+)\s*\(`)

// readHeaders is the read stage of one version: it checks
// DIR/cudaTypedefs.h and DIR/cuda.h (headercheck.go: bad headers fail
// fast) and parses them.
func readHeaders(cfg *config, dir string) (*source, error) {
	if err := checkHeaders(cfg, dir); err != nil {
		return nil, err
	}
	return translate(cfg, dir)
}

// translate parses DIR/cudaTypedefs.h and DIR/cuda.h with cc.
func translate(cfg *config, dir string) (*source, error) {
	ccfg, err := ccConfig()
	if err != nil {
		return nil, err
	}
	var cudaH []byte
	for _, f := range []string{"cuda.h", "cudaTypedefs.h"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return nil, fmt.Errorf("gen: %w", err)
		}
		if f == "cuda.h" {
			cudaH = b
		}
	}
	c := *ccfg
	c.EvalAllMacros = true
	c.IncludePaths = append([]string{dir}, ccfg.IncludePaths...)
	c.SysIncludePaths = append([]string{dir}, ccfg.SysIncludePaths...)
	predefined := ccfg.Predefined
	if cfg.PerThreadDefaultStream {
		predefined += "\n#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1\n"
	}
	names, probe := probes(cudaH)
	typedefs := filepath.Join(dir, "cudaTypedefs.h")
	ast, err := translateBounded(typedefs, &c, []cc.Source{
		{Name: "<predefined>", Value: predefined},
		{Name: "<builtin>", Value: cc.Builtin},
		{Name: typedefs},
		{Name: "<cudagen-probe>", Value: probe},
	})
	if err != nil {
		return nil, err
	}
	s := &source{dir: dir, ast: ast, probes: map[string]string{}, files: map[string][]string{}, aliasOf: map[string]string{}, pfns: map[string]*cc.Declarator{}}
	for _, m := range aliasRe.FindAllSubmatch(cudaH, -1) {
		s.aliasOf[string(m[2])] = string(m[1])
	}
	for l := ast.TranslationUnit; l != nil; l = l.TranslationUnit {
		ed := l.ExternalDeclaration
		if ed == nil || ed.Declaration == nil {
			continue
		}
		for il := ed.Declaration.InitDeclaratorList; il != nil; il = il.InitDeclaratorList {
			id := il.InitDeclarator
			if id == nil || id.Declarator == nil {
				continue
			}
			d := id.Declarator
			name := d.Name()
			if strings.HasPrefix(name, "cudagen_probe_") && id.Initializer != nil {
				i, _ := strconv.Atoi(strings.TrimPrefix(name, "cudagen_probe_"))
				if v, ok := id.Initializer.AssignmentExpression.Value().(cc.StringValue); ok && i < len(names) {
					s.probes[names[i]] = strings.TrimRight(string(v), "\x00")
				}
				continue
			}
			if filepath.Base(d.Position().Filename) == "cudaTypedefs.h" && d.IsTypename() && strings.HasPrefix(name, "PFN_") {
				s.pfns[name] = d
				continue
			}
			if filepath.Base(d.Position().Filename) != "cuda.h" {
				continue
			}
			switch {
			case d.IsTypename():
				s.typedefs = append(s.typedefs, d)
			case d.Type().Kind() == cc.Function && strings.HasPrefix(name, "cu"):
				s.funcs = append(s.funcs, d)
			}
		}
	}
	return s, nil
}

// probes lists every name a prototype in cuda.h's text spells, and its
// unversioned base, and returns the probe source that stringifies each
// after macro expansion (cudagen_probe_N is names[N]).
func probes(cudaH []byte) (names []string, probe string) {
	// Every name a prototype in the text spells, and its unversioned base.
	seen := map[string]bool{"cuGetProcAddress": true}
	names = []string{"cuGetProcAddress"}
	for _, m := range protoRe.FindAllSubmatch(cudaH, -1) {
		n := string(m[1])
		for _, x := range []string{n, baseName(n)} {
			if !seen[x] {
				seen[x] = true
				names = append(names, x)
			}
		}
	}
	var b strings.Builder
	b.WriteString("#define cudagen_str2(x) #x\n#define cudagen_str(x) cudagen_str2(x)\n")
	for i, n := range names {
		fmt.Fprintf(&b, "static const char cudagen_probe_%d[] = cudagen_str(%s);\n", i, n)
	}
	return names, b.String()
}

// baseName strips the entry point's version and per-thread suffixes:
// cuMemcpyHtoDAsync_v2_ptsz → cuMemcpyHtoDAsync.
func baseName(sym string) string {
	b := strings.TrimSuffix(strings.TrimSuffix(sym, "_ptsz"), "_ptds")
	if m := versionSuffix.FindStringSubmatch(b); m != nil {
		b = b[:len(b)-len(m[0])]
	}
	return b
}

var versionSuffix = regexp.MustCompile(`_v([0-9]+)$`)

// condOpen opens the conditional around a header's static inline
// functions (nvJitLink.h: #ifndef NVJITLINK_NO_INLINE).
var condOpen = regexp.MustCompile(`^\s*#\s*ifndef\s+\w*NO_INLINE\b`)

var ccCached *cc.Config

func ccConfig() (*cc.Config, error) {
	if ccCached != nil {
		return ccCached, nil
	}
	c, err := cc.NewConfig("linux", "amd64")
	if err != nil {
		return nil, fmt.Errorf("gen: C preprocessor configuration (needs a C compiler, cc or gcc): %w", err)
	}
	ccCached = c
	return c, nil
}

func (s *source) declarator(name string) *cc.Declarator {
	for _, n := range s.ast.Scope.Nodes[name] {
		if d, ok := n.(*cc.Declarator); ok {
			return d
		}
	}
	return nil
}

func (s *source) macroInt(name string) (int, error) {
	m := s.ast.Macros[name]
	if m == nil {
		return 0, fmt.Errorf("gen: %s: %s is not defined", filepath.Join(s.dir, "cuda.h"), name)
	}
	rl := m.ReplacementList()
	if len(rl) != 1 {
		return 0, fmt.Errorf("gen: %s: %s is not a number", m.Position(), name)
	}
	n, err := strconv.Atoi(rl[0].SrcStr())
	if err != nil {
		return 0, fmt.Errorf("gen: %s: %s: %w", m.Position(), name, err)
	}
	return n, nil
}

func (s *source) enumerator(name string) (int64, error) {
	for _, n := range s.ast.Scope.Nodes[name] {
		if e, ok := n.(*cc.Enumerator); ok {
			return enumValue(e)
		}
	}
	return 0, fmt.Errorf("gen: %s: enumerator %s is not declared", filepath.Join(s.dir, "cuda.h"), name)
}

func enumValue(e *cc.Enumerator) (int64, error) {
	switch v := e.Value().(type) {
	case cc.Int64Value:
		return int64(v), nil
	case cc.UInt64Value:
		return int64(v), nil
	}
	return 0, fmt.Errorf("gen: %s: enumerator %s has no constant value", e.Position(), e.Token.SrcStr())
}

// lines returns a file's lines, cached.
func (s *source) lines(file string) []string {
	if l, ok := s.files[file]; ok {
		return l
	}
	b, _ := os.ReadFile(file)
	l := strings.Split(string(b), "\n")
	s.files[file] = l
	return l
}

var (
	trailingDoc = regexp.MustCompile(`(?s)/\*\*<\s*(.*?)\s*\*/`)
	spaces      = regexp.MustCompile(`\s+`)
)

// trailing is the /**< */ comment starting on a declaration's line, or
// the /** */ block above it, as paragraphs (doxygen.go).
func (s *source) trailing(file string, line int) string {
	lines := s.lines(file)
	if line < 1 || line > len(lines) {
		return ""
	}
	if i := strings.Index(lines[line-1], "/**<"); i >= 0 {
		text := lines[line-1][i:]
		for j := line; !strings.Contains(text, "*/") && j < len(lines) && j < line+20; j++ {
			text += "\n" + lines[j]
		}
		if mm := trailingDoc.FindStringSubmatch(text); mm != nil {
			return docText(strings.ReplaceAll(mm[1], "*", ""))
		}
	}
	return docText(blockAbove(lines, line-1))
}

// blockAbove returns the text of the /** ... */ comment that ends just
// above line index i.
func blockAbove(lines []string, i int) string {
	j := i - 1
	// Blank lines, and the #ifndef ..._NO_INLINE between a doc and its
	// static inline function (nvJitLink.h), are skipped.
	for j >= 0 && (strings.TrimSpace(lines[j]) == "" || condOpen.MatchString(lines[j])) {
		j--
	}
	if j < 0 || !strings.HasSuffix(strings.TrimSpace(lines[j]), "*/") {
		return ""
	}
	end := j
	for j >= 0 && !strings.Contains(lines[j], "/*") {
		j--
	}
	if j < 0 || end-j > 400 || strings.Contains(lines[j], "/**<") || !strings.HasPrefix(strings.TrimSpace(lines[j]), "/*") {
		return "" // none, or the trailing doc of the declaration above
	}
	var b strings.Builder
	for _, l := range lines[j : end+1] {
		l = strings.TrimSpace(l)
		l = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(l, "/**"), "/*!"), "/*")
		l = strings.TrimSuffix(l, "*/")
		l = strings.TrimPrefix(l, "*")
		b.WriteString(l)
		b.WriteString("\n")
	}
	return b.String()
}

// declHead is a line that only begins a declaration: its result type.
var declHead = regexp.MustCompile(`^\s*(CUresult\s+CUDAAPI|CUDAAPI|CUresult)\s*$`)

// parsedDoc is a declaration's doc block, parsed once.
func (s *source) parsedDoc(d *cc.Declarator) *parsedDoc {
	pos := d.Position()
	key := fmt.Sprintf("%s:%d", pos.Filename, pos.Line)
	if pd, ok := s.docs[key]; ok {
		return pd
	}
	if s.docs == nil {
		s.docs = map[string]*parsedDoc{}
	}
	lines := s.lines(pos.Filename)
	i := pos.Line - 1
	// A declaration split after its result type ("CUresult CUDAAPI", then
	// the name on the next line) has its doc above the first line.
	for i > 0 && i-1 < len(lines) && declHead.MatchString(lines[i-1]) {
		i--
	}
	pd := parseDoc(blockAbove(lines, i))
	s.docs[key] = pd
	return pd
}
