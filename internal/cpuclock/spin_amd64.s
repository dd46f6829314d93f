#include "textflag.h"

// func spin(n int64): the instructions of bench/cbench/clock.h's loop.
TEXT ·spin(SB), NOSPLIT, $0-8
	MOVQ n+0(FP), AX
loop:
	DECQ AX
	JNZ  loop
	RET
