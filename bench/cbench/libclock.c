// libclock: clock.h's clock for bench/pybench, through ctypes
// (tools/gpu-suite.sh builds it: gcc -O2 -shared -fPIC).
#include "clock.h"

double cudagen_clock_ghz(void) { return clock_ghz(); }
