package driver

import (
	"encoding/binary"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// A module image the driver would read past is refused before the call,
// naming the function, the parameter and the fix; whole images pass.
func TestImageCheck(t *testing.T) {
	exe, err := os.Executable() // an ELF file, whole
	if err != nil {
		t.Fatal(err)
	}
	elfImage, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	fatbin := make([]byte, 16+100)
	binary.LittleEndian.PutUint32(fatbin, fatbinMagic)
	binary.LittleEndian.PutUint16(fatbin[4:], 1)
	binary.LittleEndian.PutUint16(fatbin[6:], 16)
	binary.LittleEndian.PutUint64(fatbin[8:], 100)
	for _, c := range []struct {
		name  string
		image []byte
		want  string // "" accepted, else in the error
	}{
		{"ptx", []byte(".version 6.0\n.target sm_50\n\x00"), ""},
		{"ptx without NUL", []byte(".version 6.0\n.target sm_50\n"), "without the NUL byte"},
		{"empty", nil, "is empty"},
		{"elf", elfImage, ""},
		{"elf cut", elfImage[:len(elfImage)/2], "ELF cubin"},
		{"elf header only", elfImage[:64], "ELF cubin"},
		{"fatbin", fatbin, ""},
		{"fatbin cut", fatbin[:len(fatbin)-1], "its header says 116 bytes"},
		{"fatbin header cut", fatbin[:10], "shorter than its 16-byte header"},
	} {
		err := imageError("cuModuleLoadData", "image", c.image)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && err == nil:
			t.Errorf("%s: accepted", c.name)
		case c.want != "":
			msg := err.Error()
			if !strings.HasPrefix(msg, "cuda: cuModuleLoadData: image (") || !strings.Contains(msg, c.want) {
				t.Errorf("%s: %v", c.name, err)
			}
		}
	}
}

// AsBytes views numbers as their bytes without a copy; HostPtr.Bytes views
// memory at an address.
func TestAsBytesAndHostPtr(t *testing.T) {
	xs := []uint32{0x04030201, 0x08070605}
	b := AsBytes(xs)
	if len(b) != 8 || b[0] != 1 || b[7] != 8 {
		t.Fatalf("AsBytes = %v", b)
	}
	b[0] = 9
	if xs[0] != 0x04030209 {
		t.Fatal("AsBytes copied")
	}
	if AsBytes([]float64(nil)) != nil || HostPtr(0).Bytes(4) != nil {
		t.Fatal("empty views are not nil")
	}
	// HostPtr is for C memory; a Go array kept alive stands in for it here.
	arr := [4]byte{1, 2, 3, 4}
	p := HostPtr(unsafe.Pointer(&arr[0]))
	if v := p.Add(1).Bytes(2); len(v) != 2 || v[0] != 2 || v[1] != 3 {
		t.Fatalf("Bytes = %v", v)
	}
}
