#!/usr/bin/env bash
# Makes a link-only stub libcuda.so.1 in DIR from the cached CUDA header: one
# empty function per driver entry point the header declares (after its own
# macros, so cuEventDestroy is cuEventDestroy_v2), soname libcuda.so.1. The
# peers link against it with -lcuda; at run time the real driver of the GPU
# machine is loaded under the same soname. Never committed: made at build time.
#   bash bench/peers/mkstub.sh DIR INCLUDE_DIR...   (searched in order for cuda.h)
set -euo pipefail
dir=$1
shift
inc=()
for d in "$@"; do inc+=(-I "$d"); done
mkdir -p "$dir"
cc=${CC:-gcc}
printf '#include <cuda.h>\n' | "$cc" -E -P "${inc[@]}" - |
	grep -oE '\bcu[A-Za-z0-9_]+[[:space:]]*\(' | tr -d '( \t' | sort -u |
	awk '{ printf "void %s(void) {}\n", $1 }' > "$dir/stub.c"
"$cc" -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$dir/libcuda.so.1" "$dir/stub.c"
ln -sf libcuda.so.1 "$dir/libcuda.so"
echo "stub libcuda.so.1: $(wc -l < "$dir/stub.c") functions, from cuda.h in $*" >&2
