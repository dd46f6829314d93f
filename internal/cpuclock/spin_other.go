//go:build !amd64

package cpuclock

const haveSpin = false

func spin(int64) {}
