package main

// Read stage: checks made on a header pair before it is parsed, so that bad
// input fails at once with a short message naming the header's file, line
// and column: missing, empty or oversized files, headers older than the
// oldest CUDA cudagen can bind, a CUDA_VERSION that is no toolkit's, a
// cudaTypedefs.h of another toolkit than cuda.h's, bytes that are not UTF-8
// (or NUL), a cudaTypedefs.h that does not include cuda.h, and headers
// whose preprocessing does not end (an include without a guard, a macro
// that expands without end). Also: cc's errors cleaned of the parser
// library's own source locations, and rendering errors that name the header
// declaration instead of quoting generated code.

import (
	"bytes"
	"errors"
	"fmt"
	"go/scanner"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cudagen/cudagen/headers"
	"modernc.org/cc/v4"
)

// oldestCUDA is the oldest CUDA_VERSION cudagen can bind: cuGetProcAddress
// and cudaTypedefs.h appeared in CUDA 11.3.
const oldestCUDA = 11030

const (
	// maxHeaderSize bounds each header file (the 13.0 cuda.h is 1.1 MB).
	maxHeaderSize = 32 << 20
	// maxPreprocessed bounds the preprocessed text of a header pair (the
	// 13.0 pair, with the system headers it includes, is ~0.2 MB).
	maxPreprocessed = 16 << 20
	// maxExpansion bounds macro expansion work, in tokens (cc's own limit).
	maxExpansion = 50_000_000
)

// errTooOld is wrapped by the refusal of a header older than CUDA 11.3.
var errTooOld = errors.New("older than the oldest version cudagen can bind")

type tooOldError struct{ msg string }

func (e *tooOldError) Error() string        { return e.msg }
func (e *tooOldError) Is(target error) bool { return target == errTooOld }

// tooOld is the refusal of a header older than OldestCUDA.
func tooOld(file string, cudaVersion int) error {
	v := fmt.Sprintf("%d.%d", cudaVersion/1000, cudaVersion%1000/10)
	return &tooOldError{fmt.Sprintf("gen: %s: CUDA %s is older than 11.3, the oldest version cudagen can bind (it needs cuGetProcAddress and cudaTypedefs.h)", file, v)}
}

var (
	reCUDAVersion = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*define[ \t]+CUDA_VERSION[ \t]+([0-9]+)\b`)
	reIncludeCuda = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]*[<"]cuda\.h[>"]`)
	reCCOrigin    = regexp.MustCompile(`[ \t]*\([A-Za-z0-9_]+\.go:[0-9]+:[A-Za-z0-9_.]*:?\)`)
)

// textCUDAVersion reads "#define CUDA_VERSION N" from cuda.h's text.
func textCUDAVersion(b []byte) (int, bool) {
	if m := reCUDAVersion.FindSubmatch(b); m != nil {
		if n, err := strconv.Atoi(string(m[1])); err == nil {
			return n, true
		}
	}
	return 0, false
}

// checkModel refuses a parsed header whose CUDA_VERSION, as the
// preprocessor sees it, is older than OldestCUDA.
func checkModel(dir string, m *model, err error) (*model, error) {
	if err == nil && m.CUDAVersion < oldestCUDA {
		return nil, tooOld(filepath.Join(dir, "cuda.h"), m.CUDAVersion)
	}
	return m, err
}

// position is file:line:column of byte offset off in b.
func position(file string, b []byte, off int) string {
	line := 1 + bytes.Count(b[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(b[:off], '\n')
	return fmt.Sprintf("%s:%d:%d", file, line, col)
}

// readHeader reads one header file of a pair, refusing what no CUDA header is.
func readHeader(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("gen: %s: no such file", path)
		}
		return nil, fmt.Errorf("gen: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("gen: %s: not a regular file", path)
	}
	if fi.Size() > maxHeaderSize {
		return nil, fmt.Errorf("gen: %s: %d bytes, more than any CUDA header (limit %d)", path, fi.Size(), maxHeaderSize)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gen: %w", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("gen: %s is empty", path)
	}
	if b[len(b)-1] == '\\' {
		// A continuation with no line after it (cc's preprocessor panics).
		return nil, fmt.Errorf("gen: %s: the file ends in a backslash, a line continuation with no line after it: the header is cut short", position(path, b, len(b)-1))
	}
	for off := 0; off < len(b); {
		r, n := utf8.DecodeRune(b[off:])
		switch {
		case r == 0:
			return nil, fmt.Errorf("gen: %s: NUL byte; a header is text", position(path, b, off))
		case r == utf8.RuneError && n == 1:
			return nil, fmt.Errorf("gen: %s: byte 0x%02x is not UTF-8; cudagen reads headers as UTF-8 (the CUDA toolkit's are)", position(path, b, off), b[off])
		}
		off += n
	}
	return b, nil
}

// checkHeaders checks the header pair in dir (cuda.h and cudaTypedefs.h)
// before it is parsed; readHeaders calls it first. It returns an error
// wrapping ErrTooOld for a header older than CUDA 11.3.
func checkHeaders(cfg *config, dir string) error {
	cudaPath := filepath.Join(dir, "cuda.h")
	typedefsPath := filepath.Join(dir, "cudaTypedefs.h")
	cudaH, err := readHeader(cudaPath)
	if err != nil {
		return err
	}
	v, ok := textCUDAVersion(cudaH)
	if ok && v < oldestCUDA {
		return tooOld(cudaPath, v)
	}
	if ok {
		if err := headers.CheckCUDAVersion(v); err != nil {
			return fmt.Errorf("gen: %s: %w; not a CUDA toolkit's cuda.h", cudaPath, err)
		}
	}
	if _, err := os.Stat(typedefsPath); errors.Is(err, os.ErrNotExist) {
		if !ok {
			return fmt.Errorf("gen: %s: no such file; cudagen needs the cudaTypedefs.h that CUDA 11.3 and newer ship beside cuda.h", typedefsPath)
		}
		return fmt.Errorf("gen: %s: no such file, though cuda.h says CUDA %s; copy the toolkit's cudaTypedefs.h beside cuda.h",
			typedefsPath, fmt.Sprintf("%d.%d", v/1000, v%1000/10))
	}
	typedefs, err := readHeader(typedefsPath)
	if err != nil {
		return err
	}
	if !reIncludeCuda.Match(typedefs) {
		return fmt.Errorf("gen: %s:1:1: it does not #include <cuda.h>, as every toolkit's cudaTypedefs.h does", typedefsPath)
	}
	if ok {
		if err := checkPair(cudaPath, typedefsPath, v, cudaH, typedefs); err != nil {
			return err
		}
	}
	return preprocessBounded(cfg, dir, map[string][]byte{"cuda.h": cudaH, "cudaTypedefs.h": typedefs})
}

var (
	// reDeclared matches a function declaration of cuda.h.
	reDeclared = regexp.MustCompile(`\bCUresult\s+CUDAAPI\s+(cu[A-Za-z0-9_]+)\s*\(`)
	// reTypedef matches a function pointer type of cudaTypedefs.h: the
	// function's name and the ABI version it was declared at.
	reTypedef = regexp.MustCompile(`\bPFN_(cu[A-Za-z0-9_]+?)_v([0-9]+)(?:_ptds|_ptsz)?\b`)
	// reVariant is the suffix of a function's versioned and per-thread
	// symbols (cuStreamGetCaptureInfo_v2_ptsz), which cudaTypedefs.h names
	// by the function's name (PFN_cuStreamGetCaptureInfo_v11030_ptsz).
	reVariant = regexp.MustCompile(`(_v[0-9]+)?(_ptds|_ptsz)?$`)
)

// checkPair refuses a cudaTypedefs.h that is not cuda.h's own, by what ties
// the two files of one toolkit (cudaTypedefs.h has no CUDA_VERSION):
//
//   - cudaTypedefs.h declares every function at the CUDA_VERSION that gave
//     it its current ABI (PFN_cuGraphExecUpdate_v12000), so none of its
//     ABI versions is newer than its toolkit's CUDA_VERSION: one that is
//     newer than cuda.h's comes from a later toolkit;
//   - it has a typedef for every function its cuda.h declares, so a
//     function of cuda.h without one means an earlier toolkit's file (the
//     11.8, 12.4 and 13.0 pairs have none missing; cuda.h of 12.4 with
//     cudaTypedefs.h of 11.8 misses 58, of 13.0 with 12.4's 29).
//
// It reads the text, comments blanked, before anything is parsed.
func checkPair(cudaPath, typedefsPath string, cudaVersion int, cudaH, typedefs []byte) error {
	have := map[string]bool{}
	newest, newestName := 0, ""
	for _, m := range reTypedef.FindAllSubmatch(blankComments(typedefs), -1) {
		have[string(m[1])] = true
		if n, err := strconv.Atoi(string(m[2])); err == nil && n > newest {
			newest, newestName = n, "PFN_"+string(m[1])+"_v"+string(m[2])
		}
	}
	cudaIs := fmt.Sprintf("%s is CUDA %s (CUDA_VERSION %d)", cudaPath, headers.VersionFromCUDA(cudaVersion), cudaVersion)
	if newest > cudaVersion {
		return fmt.Errorf("gen: %s is from a later toolkit than cuda.h: it declares %s, ABI version %d (CUDA %s), but %s: use the two headers of one toolkit",
			typedefsPath, newestName, newest, headers.VersionFromCUDA(newest), cudaIs)
	}
	var missing []string
	seen := map[string]bool{}
	for _, m := range reDeclared.FindAllSubmatch(blankComments(cudaH), -1) {
		name := reVariant.ReplaceAllString(string(m[1]), "")
		if !have[name] && !seen[name] {
			seen[name] = true
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	list := strings.Join(missing, ", ")
	if len(missing) > 6 {
		list = strings.Join(missing[:6], ", ") + ", …"
	}
	its := "it declares no PFN_ typedef"
	if newest > 0 {
		its = fmt.Sprintf("its newest ABI version is %d (CUDA %s)", newest, headers.VersionFromCUDA(newest))
	}
	return fmt.Errorf("gen: %s is from an earlier toolkit than cuda.h: %s, and it has no typedef for %d of the functions cuda.h declares (%s), but %s: use the two headers of one toolkit",
		typedefsPath, its, len(missing), list, cudaIs)
}

// errTooLong stops the bounded preprocessing.
var errTooLong = errors.New("preprocessed text too long")

type cappedWriter struct{ n int }

func (w *cappedWriter) Write(b []byte) (int, error) {
	w.n += len(b)
	if w.n > maxPreprocessed {
		return 0, errTooLong
	}
	return len(b), nil
}

// preprocessTimeout bounds the preprocessing of a pair (the 13.0 pair takes
// less than 0.1 s).
var preprocessTimeout = 20 * time.Second

// preprocessBounded runs the C preprocessor over the pair with limits. cc has
// no working include depth limit (its cpp pushes an included file after the
// directive returns), so includes among the pair are checked first, in the
// text; then the preprocessed length, cc's macro expansion limit and a time
// limit stop whatever else expands without end.
func preprocessBounded(cfg *config, dir string, texts map[string][]byte) error {
	for _, name := range []string{"cuda.h", "cudaTypedefs.h"} {
		if err := checkIncludes(filepath.Join(dir, name), texts[name]); err != nil {
			return err
		}
	}
	ccfg, err := ccConfig()
	if err != nil {
		return err
	}
	c := *ccfg
	c.IncludePaths = append([]string{dir}, ccfg.IncludePaths...)
	c.SysIncludePaths = append([]string{dir}, ccfg.SysIncludePaths...)
	c.ExpansionLimit = maxExpansion
	predefined := ccfg.Predefined
	if cfg != nil && cfg.PerThreadDefaultStream {
		predefined += "\n#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1\n"
	}
	typedefs := filepath.Join(dir, "cudaTypedefs.h")
	late := fmt.Errorf("gen: %s: preprocessing did not end within %v: an include or a macro expands without end", typedefs, preprocessTimeout)
	_, err = bounded(preprocessTimeout, late, func() (struct{}, error) {
		return struct{}{}, cc.Preprocess(&c, []cc.Source{
			{Name: "<predefined>", Value: predefined},
			{Name: "<builtin>", Value: cc.Builtin},
			{Name: typedefs},
		}, &cappedWriter{})
	}, func(r any) error {
		return fmt.Errorf("the C preprocessor failed on this header (%s): the header is malformed", clip([]byte(fmt.Sprint(r))))
	})
	if err == late {
		return err
	}
	switch {
	case errors.Is(err, errTooLong):
		return fmt.Errorf("gen: %s: the preprocessed headers pass %d MiB, more than any CUDA header: an include or a macro expands without end", typedefs, maxPreprocessed>>20)
	case err != nil:
		return fmt.Errorf("gen: parse %s: %w", typedefs, ccError(err))
	}
	return nil
}

// parseTimeout bounds cc.Translate of a header (the 13.0 pair takes
// seconds; minutes on a loaded machine): cc's parser can loop without end
// on some malformed input (FuzzLibraryHeader found one).
var parseTimeout = 3 * time.Minute

// translateBounded is cc.Translate of sources, stopped by parseTimeout and
// by a panic of cc's, each an error naming file. A parse stopped by the
// time limit leaves its goroutine running until the process ends.
func translateBounded(file string, c *cc.Config, sources []cc.Source) (*cc.AST, error) {
	late := fmt.Errorf("gen: parse %s: parsing did not end within %v: the header is malformed (the C parser loops on it)", file, parseTimeout)
	return bounded(parseTimeout, late, func() (*cc.AST, error) {
		ast, err := cc.Translate(c, sources)
		if err != nil {
			err = fmt.Errorf("gen: parse %s: %w", file, ccError(err)) // short, no cc-internal locations
		}
		return ast, err
	}, func(r any) error {
		return fmt.Errorf("gen: parse %s: the C parser failed on this header (%s): the header is malformed", file, clip([]byte(fmt.Sprint(r))))
	})
}

// bounded runs f on a goroutine of its own and returns its result, or
// panicked's error where f panics (cc can panic on malformed input, and a
// panic there would end the process), or late once limit has passed: f's
// goroutine is then left running until the process ends (cc cannot be
// stopped).
func bounded[T any](limit time.Duration, late error, f func() (T, error), panicked func(r any) error) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{err: panicked(r)}
			}
		}()
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-time.After(limit):
		var zero T
		return zero, late
	}
}

// checkIncludes refuses the #include directives a CUDA header never has and
// that could nest without end: cuda.h including cuda.h or cudaTypedefs.h,
// cudaTypedefs.h including itself, a computed #include, or a path (the pair
// includes system headers, and cudaTypedefs.h cuda.h, by name).
func checkIncludes(file string, b []byte) error {
	text := blankComments(b)
	self := filepath.Base(file)
	for _, m := range reDirective.FindAllSubmatchIndex(text, -1) {
		if string(text[m[2]:m[3]]) != "include" && string(text[m[2]:m[3]]) != "include_next" {
			continue
		}
		pos := position(file, b, m[0]+bytes.IndexByte(text[m[0]:], '#'))
		arg := bytes.TrimSpace(text[m[3]:m[1]])
		if len(arg) < 2 || !(arg[0] == '<' && bytes.IndexByte(arg, '>') > 0 || arg[0] == '"' && bytes.IndexByte(arg[1:], '"') > 0) {
			return fmt.Errorf("gen: %s: a computed #include (%s); cudagen reads only headers that include files by name", pos, clip(arg))
		}
		end := bytes.IndexByte(arg[1:], map[byte]byte{'<': '>', '"': '"'}[arg[0]]) + 1
		name := string(arg[1:end])
		switch {
		case filepath.IsAbs(name) || strings.Contains(name, ".."):
			return fmt.Errorf("gen: %s: #include of a path (%s); a CUDA header includes files by name", pos, clip(arg))
		case filepath.Base(name) == "cudaTypedefs.h" || filepath.Base(name) == "cuda.h" && self == "cuda.h":
			return fmt.Errorf("gen: %s: %s includes %s; a CUDA header never does (without a guard it nests without end)", pos, self, filepath.Base(name))
		}
	}
	return nil
}

var reDirective = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*([a-z_]+)([^\n]*)`)

func clip(b []byte) string {
	s := strings.ToValidUTF8(string(b), "?")
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return s
}

// blankComments returns b with every comment's bytes (but newlines) made
// spaces, so that offsets stay those of b. Backslash-newline continuations
// of directives are joined the same way.
func blankComments(b []byte) []byte {
	out := append([]byte(nil), b...)
	for i := 0; i < len(out); i++ {
		switch {
		case out[i] == '"' || out[i] == '\'':
			q := out[i]
			for i++; i < len(out) && out[i] != q && out[i] != '\n'; i++ {
				if out[i] == '\\' {
					i++
				}
			}
		case out[i] == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case out[i] == '/' && i+1 < len(out) && out[i+1] == '*':
			out[i], out[i+1] = ' ', ' '
			for i += 2; i < len(out) && !(out[i] == '*' && i+1 < len(out) && out[i+1] == '/'); i++ {
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
			if i+1 < len(out) {
				out[i], out[i+1] = ' ', ' '
				i++
			}
		case out[i] == '\\' && i+1 < len(out) && out[i+1] == '\n':
			out[i], out[i+1] = ' ', ' '
		}
	}
	return out
}

// ccError makes a cc error short: at most 8 lines, each at most 300 bytes,
// without the parser library's own source locations ("(check.go:123:f:)").
func ccError(err error) error {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	more := 0
	if len(lines) > 8 {
		more = len(lines) - 8
		lines = lines[:8]
	}
	for i, l := range lines {
		l = reCCOrigin.ReplaceAllString(l, "")
		if len(l) > 300 {
			l = strings.ToValidUTF8(l[:300], "") + "…"
		}
		lines[i] = l
	}
	if more > 0 {
		lines = append(lines, fmt.Sprintf("(and %d more)", more))
	}
	return errors.New(strings.Join(lines, "\n"))
}

// formatError is the failure to format generated Go. It keeps the generated
// source for Explain and never prints it.
type formatError struct {
	Msg  string // the formatter's message, with its position in the generated code
	Line string // the generated line it points at
	Src  string
}

func (e *formatError) Error() string {
	return "gen: the generated Go does not compile: " + e.Msg + " (a generator bug, or a header declaration it cannot bind)"
}

var reJenFormat = regexp.MustCompile(`(?s)^Error (.*?) while formatting source:\n(.*)$`)

// renderError shortens jennifer's rendering error, which quotes the whole
// generated file.
func renderError(err error) error {
	msg, src := err.Error(), ""
	if m := reJenFormat.FindStringSubmatch(msg); m != nil {
		msg, src = m[1], m[2]
	}
	re := &formatError{Msg: msg, Src: src}
	var list scanner.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		re.Msg = list[0].Error()
	}
	if first, _, ok := strings.Cut(re.Msg, "\n"); ok {
		re.Msg = first
	}
	if m := regexp.MustCompile(`^([0-9]+):[0-9]+: (.*)$`).FindStringSubmatch(re.Msg); m != nil && src != "" {
		n, _ := strconv.Atoi(m[1])
		ls := strings.Split(src, "\n")
		// The C name is on the line or in the comment just above it.
		for i := n - 1; i >= 0 && i >= n-4 && i < len(ls); i-- {
			if cName.FindString(ls[i]) != "" {
				re.Line = ls[i]
				break
			}
		}
		re.Msg = m[2]
	}
	if len(re.Msg) > 200 {
		re.Msg = strings.ToValidUTF8(re.Msg[:200], "") + "…"
	}
	return re
}

var cName = regexp.MustCompile(`\b(CU_[A-Z0-9_]+|CUDA_[A-Z0-9_]+|cu[A-Z][A-Za-z0-9_]*)\b`)

// explainRender names the header declaration behind a formatError: the
// header's file:line:column of the C name on the generated line.
func explainRender(err error, m *model) error {
	var re *formatError
	if !errors.As(err, &re) || m == nil {
		return err
	}
	name := cName.FindString(re.Line)
	if name == "" {
		return err
	}
	where := ""
	for _, f := range m.Funcs {
		if f.Symbol == name || f.Base == name {
			where = f.Pos
		}
	}
	file := m.HeaderFile
	if file == "" && len(m.Funcs) > 0 {
		// Pos is file:line:column.
		file = m.Funcs[0].Pos
		for i := 0; i < 2; i++ {
			if j := strings.LastIndexByte(file, ':'); j > 0 {
				file = file[:j]
			}
		}
	}
	if where == "" && file != "" {
		if b, rerr := os.ReadFile(file); rerr == nil {
			if loc := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).FindIndex(b); loc != nil {
				where = position(file, b, loc[0])
			}
		}
	}
	if where == "" {
		where = "CUDA " + m.Version
	}
	return fmt.Errorf("gen: %s: %s: the Go generated from this declaration does not compile (%s)", where, name, re.Msg)
}
