// Package ctype tells which Go types C can read: the values the driver layer
// takes as kernel arguments, and the cuda package as a buffer's elements
// and a kernel's arguments.
package ctype

import "reflect"

// Plain reports whether values of t hold no Go pointers and have a C
// layout: a bool, a number, or an array or a struct (each of at least one
// byte, at every level: C has no types of size 0, and Go pads a struct
// whose last field has size 0 where C would not) of them.
func Plain(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return true
	case reflect.Array:
		return t.Size() > 0 && Plain(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !Plain(t.Field(i).Type) {
				return false
			}
		}
		return t.Size() > 0
	}
	return false
}
