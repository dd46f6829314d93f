//go:build !amd64

package peerbench

const haveSpin = false

func spin(int64) {}
