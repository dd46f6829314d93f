// Command benchtable turns interleaved benchmark rounds into the table of
// docs/performance.md: for each operation, the C baseline (bench/cbench), the
// generated layer (cuda/driver, BenchmarkDriver<Op>) and the cuda package
// (Benchmark<Op>). The driver's own cost on the GPU machine jumps between two
// levels about 2x apart from one process to the next, so the table gives the
// best figure over the rounds (the cost without that interference) and Go/C
// as the ratio of the best figures, and also the median of each round's own
// ratio with its range.
//
//	benchtable cbench.txt bench.txt
//
// The k-th figure of an operation in one file is paired with the k-th in the
// other: tools/gpu-suite.sh runs one C loop and one Go benchmark per round.
//
//	benchtable -peers C=cbench.txt cudagen=cudagen.txt gorgonia=gorgonia.txt ...
//
// makes the side-by-side table instead: every file in cbench's format (one
// line per operation per round, as bench/cbench, bench/peers and
// bench/pybench print), one column per binding with the median over the
// rounds and their range, and for each operation the fastest binding other
// than C and cudagen's own two, and whether cudagen's cuda package (the
// label "cudagen") is at most its median; then the same table in cycles per
// call, where the files have them (bench/cbench/clock.h says why).
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cudagen/cudagen/bench/peers/peerbench"
)

// Each row: the operation, the C loop it is compared with, and the Go
// benchmarks of the generated layer and the cuda package ("" when none).
var rows = []struct{ label, c, driver, cuda string }{
	{"record", "Record", "DriverRecord", "Record"},
	{"query (done)", "Query", "DriverQuery", "Query"},
	{"record + query", "RecordQuery", "DriverRecordQuery", "RecordQuery"},
	{"elapsed time", "Elapsed", "DriverElapsed", "Elapsed"},
	{"sync on a done event", "SyncDone", "DriverSyncDone", "SyncDone"},
	{"create + destroy", "CreateDestroy", "DriverCreateDestroy", "CreateDestroy"},
	{"record + sync round trip", "RecordSync", "DriverRecordSync", "RecordSync"},
	{"record + `Wait(ctx)` (vs C record + sync)", "RecordSync", "", "RecordWait"},
}

var goLine = regexp.MustCompile(`^Benchmark(\S+?)(-\d+)?\s+\d+\s+([\d.]+) ns/op(?:\s+\d+ B/op\s+(\d+) allocs/op)?`)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-peers" {
		if err := peers(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "benchtable:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: benchtable cbench.txt bench.txt")
		os.Exit(2)
	}
	c, _, err := read(os.Args[1], cLineParse)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	g, allocs, err := read(os.Args[2], func(line string) (string, float64, int, bool) {
		m := goLine.FindStringSubmatch(line)
		if m == nil {
			return "", 0, 0, false
		}
		v, err := strconv.ParseFloat(m[3], 64)
		a, _ := strconv.Atoi(m[4])
		return m[1], v, a, err == nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	fmt.Println("| op | C ns/op best (median) | driver layer best | cuda best (median) | driver/C best | cuda/C best | cuda/C per round: median (range) | cuda allocs/op | rounds |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		cv, cu := c[r.c], g[r.cuda]
		var dv []float64
		if r.driver != "" {
			dv = g[r.driver]
		}
		fmt.Printf("| %s | %s (%s) | %s | %s (%s) | %s | **%s** | %s | %d | %d |\n", r.label,
			num(best(cv)), num(median(cv)), num(best(dv)), num(best(cu)), num(median(cu)),
			two(div(best(dv), best(cv))), two(div(best(cu), best(cv))), span(ratios(cu, cv)), allocs[r.cuda], min(len(cv), len(cu)))
	}
	for _, name := range []string{"CgoFloor", "DiagRecordLoopInC", "DiagQueryLoopInC", "DiagSyncDoneLoopInC"} {
		if v := g[name]; len(v) > 0 {
			fmt.Printf("| Go %s | | | %s (%s) | | | | | %d |\n", name, num(best(v)), num(median(v)), len(v))
		}
	}
	for _, name := range []string{"CtxGetCurrent"} {
		if v := c[name]; len(v) > 0 {
			fmt.Printf("| C %s | %s (%s) | | | | | | | %d |\n", name, num(best(v)), num(median(v)), len(v))
		}
	}
}

// read collects each operation's figures in file order, and the last
// allocation count seen for it.
func read(path string, parse func(string) (string, float64, int, bool)) (map[string][]float64, map[string]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	vals, allocs := map[string][]float64{}, map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if name, v, a, ok := parse(sc.Text()); ok {
			vals[name] = append(vals[name], v)
			allocs[name] = a
		}
	}
	return vals, allocs, sc.Err()
}

// ratios pairs the k-th figures of a and b.
func ratios(a, b []float64) []float64 {
	var r []float64
	for i := 0; i < len(a) && i < len(b); i++ {
		if b[i] > 0 {
			r = append(r, a[i]/b[i])
		}
	}
	return r
}

// median is peerbench's: the Go peers print their figures with it.
var median = peerbench.Median

func best(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return slices.Min(v)
}

func div(a, b float64) float64 {
	if a == 0 || b == 0 {
		return 0
	}
	return a / b
}

func num(v float64) string {
	if v == 0 {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func two(v float64) string {
	if v == 0 {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// span is the median ratio and the range over the rounds.
func span(r []float64) string {
	if len(r) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f (%.2f–%.2f)", median(r), slices.Min(r), slices.Max(r))
}

// peerRows: the operation, the figure's name in cbench's format, and the name
// cudagen's cuda package reports for it where different.
var peerRows = []struct{ label, name, cudagen string }{
	{"record", "Record", ""},
	{"query (done)", "Query", ""},
	{"record + query", "RecordQuery", ""},
	{"elapsed time", "Elapsed", ""},
	{"sync on a done event", "SyncDone", ""},
	{"create + destroy (cudagen: NewEvent + Close)", "CreateDestroy", ""},
	{"record + sync", "RecordSync", ""},
	{"record + wait (cudagen: Wait(ctx); others: sync)", "RecordSync", "RecordWait"},
}

func cLineParse(line string) (string, float64, int, bool) {
	f := strings.Fields(line)
	if len(f) < 3 || f[2] != "ns/op" {
		return "", 0, 0, false
	}
	v, err := strconv.ParseFloat(f[1], 64)
	return f[0], v, 0, err == nil
}

// cycParse reads the cycles per call of a line in cbench's format, where it
// has them ("... 362.7 cyc/op at 2.10 GHz").
func cycParse(line string) (string, float64, int, bool) {
	f := strings.Fields(line)
	if len(f) < 3 || f[2] != "ns/op" {
		return "", 0, 0, false
	}
	for i := 4; i < len(f); i++ {
		if f[i] == "cyc/op" {
			v, err := strconv.ParseFloat(f[i-1], 64)
			return f[0], v, 0, err == nil
		}
	}
	return "", 0, 0, false
}

// peers prints the side-by-side tables of label=file arguments: ns per
// call, then, where the files have them, cycles per call.
func peers(args []string) error {
	var labels []string
	ns, cyc := map[string]map[string][]float64{}, map[string]map[string][]float64{}
	haveCyc := false
	for _, a := range args {
		label, file, ok := strings.Cut(a, "=")
		if !ok {
			return fmt.Errorf("-peers: want label=file, got %q", a)
		}
		v, _, err := read(file, cLineParse)
		if err != nil {
			return err
		}
		c, _, err := read(file, cycParse)
		if err != nil {
			return err
		}
		labels = append(labels, label)
		ns[label], cyc[label] = v, c
		haveCyc = haveCyc || len(c) > 0
	}
	table(labels, ns, "ns")
	fmt.Println("(each cell: median ns/op over the rounds (min–max) ×rounds; each round's figure is the median of its loops)")
	if haveCyc {
		fmt.Println()
		fmt.Println("Cycles per call: each loop's ns per call times the CPU's effective clock, measured just before and after it (bench/cbench/clock.h). The clock moves about 2× between moments on the GPU machine, and every figure with it, so these compare across processes where the ns do not.")
		fmt.Println()
		// Only the bindings that measured the clock: say which did not, so
		// that no verdict is read as being against all of them.
		var with, without []string
		for _, l := range labels {
			if len(cyc[l]) > 0 {
				with = append(with, l)
			} else {
				without = append(without, l)
			}
		}
		table(with, cyc, "cycles")
		fmt.Println("(each cell: median cycles/op over the rounds (min–max) ×rounds)")
		if len(without) > 0 {
			fmt.Printf("(not in the cycles table, no clock measured: %s)\n", strings.Join(without, ", "))
		}
	}
	return nil
}

// table prints one side-by-side table; unit names the figures in the verdict.
func table(labels []string, data map[string]map[string][]float64, unit string) {
	fmt.Print("| op |")
	for _, l := range labels {
		fmt.Printf(" %s |", l)
	}
	fmt.Println(" fastest other | cudagen ≤ fastest other? |")
	fmt.Print("|---|")
	for range labels {
		fmt.Print("---|")
	}
	fmt.Println("---|---|")
	for _, r := range peerRows {
		fmt.Printf("| %s |", r.label)
		best, bestLabel := 0.0, ""
		var mine float64
		for _, l := range labels {
			name := r.name
			if l == "cudagen" && r.cudagen != "" {
				name = r.cudagen
			}
			v := data[l][name]
			if len(v) == 0 {
				fmt.Print(" – |")
				continue
			}
			m := median(v)
			fmt.Printf(" %s (%s–%s) ×%d |", num(m), num(slices.Min(v)), num(slices.Max(v)), len(v))
			switch {
			case l == "cudagen":
				mine = m
			case l == "C" || strings.HasPrefix(l, "cudagen"):
			default:
				if best == 0 || m < best {
					best, bestLabel = m, l
				}
			}
		}
		verdict := "–"
		if mine > 0 && best > 0 {
			verdict = fmt.Sprintf("no (%+.1f %s)", mine-best, unit)
			if mine <= best {
				verdict = fmt.Sprintf("yes (%+.1f %s)", mine-best, unit)
			}
		}
		if bestLabel == "" {
			fmt.Printf(" – | %s |\n", verdict)
		} else {
			fmt.Printf(" %s %s | %s |\n", bestLabel, num(best), verdict)
		}
	}
}
