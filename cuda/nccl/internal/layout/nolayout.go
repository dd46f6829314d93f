//go:build !cudagen_layout || !cgo

package layout

// Without the tag there is nothing to compare.
var goLayout []struct {
	c string
	v uintptr
}

func cLayout() []int64 { return nil }
