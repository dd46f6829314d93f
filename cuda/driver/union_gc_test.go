package driver

import (
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// freedHeapAddrs returns addresses inside heap spans the collector has
// freed: a pointer word holding one makes the collector abort ("found bad
// pointer in Go heap"), as a union's integer that looks like a heap
// address would.
func freedHeapAddrs() []uintptr {
	var r []uintptr
	var keep []*[1 << 16]byte
	for i := 0; i < 64; i++ {
		b := new([1 << 16]byte)
		r = append(r, uintptr(unsafe.Pointer(b))+128)
		keep = append(keep, b)
	}
	runtime.KeepAlive(keep)
	keep = nil
	runtime.GC()
	runtime.GC()
	return r
}

// fillAndCollect writes heap-looking integers into every integer word of
// every union member, then runs the collector (with its invalid-pointer
// checks, on by default) while the unions are copied (write barriers).
func fillAndCollect(t *testing.T) {
	bad := freedHeapAddrs()
	var holders []any
	for i, m := range unionMembers {
		h, p := m.new()
		for j, w := range m.words {
			*(*uintptr)(unsafe.Add(p, w)) = bad[(i+j)%len(bad)]
		}
		holders = append(holders, h)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 5; i++ {
			runtime.GC()
		}
	}()
	var copies []any
	for r := 0; r < 20; r++ {
		for _, h := range holders {
			v := reflect.ValueOf(h).Elem()
			c := reflect.New(v.Type())
			c.Elem().Set(v)
			copies = append(copies, c.Interface())
		}
	}
	wg.Wait()
	runtime.GC()
	runtime.KeepAlive(holders)
	runtime.KeepAlive(copies)
	t.Logf("%d union members filled with heap-looking integers; the collector ran", len(unionMembers))
}

// No union member can put an integer into a word the collector scans as
// a pointer, for any member and any value: every member's integer words
// are filled with addresses of freed heap spans and the collector runs.
// The same fill in a pointer word aborts the process (the control below),
// so this test fails wherever a union keeps a pointer word under an
// integer.
func TestUnionIntegersNeverInPointerWords(t *testing.T) {
	if len(unionMembers) == 0 {
		t.Fatal("no union members listed")
	}
	fillAndCollect(t)
}

const badPointerChildEnv = "CUDAGEN_BAD_POINTER_CHILD"

// The control: the same values in a real pointer word abort the process,
// so the check above can fail.
func TestUnionCheckCanFail(t *testing.T) {
	if os.Getenv(badPointerChildEnv) == "1" {
		type holder struct {
			p unsafe.Pointer
			_ uintptr
		}
		bad := freedHeapAddrs()
		var hs []*holder
		for i := 0; i < 1000; i++ {
			h := new(holder)
			*(*uintptr)(unsafe.Pointer(&h.p)) = bad[i%len(bad)]
			hs = append(hs, h)
		}
		for i := 0; i < 5; i++ {
			runtime.GC()
		}
		runtime.KeepAlive(hs)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestUnionCheckCanFail$", "-test.count=1")
	cmd.Env = append(os.Environ(), badPointerChildEnv+"=1", "GODEBUG=invalidptr=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "bad pointer") {
		t.Fatalf("an integer that looks like a heap address in a pointer word did not abort the collector (err %v):\n%s", err, out)
	}
}
