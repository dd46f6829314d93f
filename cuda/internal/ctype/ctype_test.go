package ctype

import (
	"reflect"
	"testing"
	"unsafe"
)

func TestPlain(t *testing.T) {
	type point struct{ X, Y float32 }
	type nested struct {
		P [2]point
		N uint64
		B bool
	}
	for _, v := range []any{int8(0), uint(0), uintptr(0), float64(0), true, [3]int32{}, point{}, nested{}} {
		if !Plain(reflect.TypeOf(v)) {
			t.Errorf("Plain(%T) = false, want true", v)
		}
	}
	type withPtr struct {
		N int
		P *int
	}
	for _, v := range []any{new(int), []int{}, "", map[int]int{}, make(chan int), func() {}, unsafe.Pointer(nil),
		withPtr{}, [1]withPtr{}, struct{}{}, complex64(0), struct{ E any }{},
		[0]int32{}, struct {
			A int32
			_ [0]int32
		}{}, struct {
			A int32
			_ struct{}
		}{}} {
		if Plain(reflect.TypeOf(v)) {
			t.Errorf("Plain(%T) = true, want false", v)
		}
	}
}
