package cpuclock

const haveSpin = true

// spin runs n iterations of DECQ; JNZ (spin_amd64.s).
//
//go:noescape
func spin(n int64)
