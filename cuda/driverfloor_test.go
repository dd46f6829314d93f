package cuda

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/internal/modtest"
)

// driverFloor is the oldest driver this package runs on: the loader's
// (cuGetProcAddress came with 11.3).
const driverFloor = 11030

// olderEntryPoints are the functions this package calls at a newer ABI
// version than driverFloor where the driver has it, with the older entry
// point it falls back to otherwise (hotcalls.go).
var olderEntryPoints = map[string]int{"EventElapsedTime": 2000}

// optionalEntryPoints are the functions this package calls only where the
// driver has them, going without otherwise: a kernel's parameters are then
// unknown (paraminfo.go), which TestLayerModuleKernels checks on the fake
// driver of 11.8.
var optionalEntryPoints = map[string]bool{"FuncGetParamInfo": true}

// newerDriverEntryPoints are the functions of methods whose documentation
// says they need a driver newer than driverFloor (and return an error
// matching ErrNotSupported on an older one), with the method: the
// executable graphs' (TestLayerGraph checks the error on the fake driver of
// 11.8, where the 12.0 form of cuGraphExecUpdate is missing).
var newerDriverEntryPoints = map[string]string{
	"GraphInstantiateWithFlags": "Graph.Instantiate",    // 11.4
	"GraphExecUpdate":           "GraphExec.Update",     // 12.0 in builds for 12.0 and later
	"LaunchKernelEx":            "LaunchConfig.Cluster", // 11.6
}

// Every driver function this package calls exists at its bound ABI version
// in every driver from 11.3, or has a fallback: the audit behind "every
// driver from 11.3, in every build", run per build tag. It reads the
// package's sources: calls through the generated layer (driver.X and
// driver.XCtx) and the entry points setupHot resolves by name.
func TestDriverFloor(t *testing.T) {
	abi := map[string]int{}
	for _, f := range driver.Functions {
		abi[f.Go] = f.ABIVersion
	}
	call := regexp.MustCompile(`driver\.([A-Z][A-Za-z0-9]*)\b`)
	name := regexp.MustCompile(`"([A-Z][A-Za-z0-9]*)"`)
	used := map[string]bool{}
	for file, b := range modtest.Sources(t, ".") { // every build's files
		for _, m := range call.FindAllStringSubmatch(string(b), -1) {
			if _, ok := abi[m[1]]; ok {
				used[m[1]] = true
			} else if g := strings.TrimSuffix(m[1], "Ctx"); abi[g] != 0 {
				used[g] = true
			}
		}
		if file == "hotcalls.go" {
			for _, m := range name.FindAllStringSubmatch(string(b), -1) {
				if abi[m[1]] != 0 {
					used[m[1]] = true
				}
			}
		}
	}
	if len(used) < 20 {
		t.Fatalf("found only %d driver functions in the sources: %v", len(used), used)
	}
	var names []string
	for g := range used {
		names = append(names, g)
	}
	sort.Strings(names)
	for _, g := range names {
		v := abi[g]
		if optionalEntryPoints[g] || newerDriverEntryPoints[g] != "" {
			continue
		}
		if old, ok := olderEntryPoints[g]; ok {
			if old > driverFloor {
				t.Errorf("%s falls back to ABI %d, newer than the floor %d", g, old, driverFloor)
			}
			continue
		}
		if v > driverFloor {
			t.Errorf("%s is bound at ABI %d (CUDA %s), newer than the drivers from %s this package runs on, and has no older entry point in hotcalls.go",
				g, v, driver.VersionString(v), driver.VersionString(driverFloor))
		}
	}
	t.Logf("bindings of CUDA %s: %d driver functions called, each at most ABI %s or with an older entry point: %s",
		driver.VersionString(driver.HeaderVersion), len(names), driver.VersionString(driverFloor), strings.Join(names, " "))
}
