#!/usr/bin/env bash
# Runs a launch binary (bench/peers/build.sh makes it) where it is built,
# without a GPU: against fakelaunch.c over the tests' fake driver
# (cuda_test/testdata/fakecuda.c), made here in a temporary folder with an
# entry point returning CUDA_ERROR_UNKNOWN for every other name the binary
# links. The figures are the Go side's own cost (the driver costs nothing);
# the run checks that every variant works before the GPU machine runs it.
#   bash bench/peers/launch/fake/fake.sh BINARY [ARGS...]
set -euo pipefail
bin=$(realpath "$1")
shift
cd "$(dirname "$0")/../../../.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cc=${CC:-gcc}
"$cc" -O2 -shared -fPIC -o "$dir/libfakecuda.so" cuda_test/testdata/fakecuda.c
own=$(grep -oE '^(CUresult|FWD\() ?cu[A-Za-z0-9_]+' bench/peers/launch/fake/fakelaunch.c | grep -oE 'cu[A-Za-z0-9_]+' | sort -u)
nm -D --undefined-only "$bin" | awk '$2 ~ /^cu/ { print $2 }' | sort -u | grep -vxF "$own" |
	awk '{ printf "int %s(void) { return 999; }\n", $1 }' > "$dir/rest.c"
"$cc" -O2 -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$dir/libcuda.so.1" bench/peers/launch/fake/fakelaunch.c "$dir/rest.c"
LD_LIBRARY_PATH="$dir" CUDAGEN_LIBCUDA="$dir/libcuda.so.1" FAKELAUNCH_FAKE="$dir/libfakecuda.so" ${FAKELAUNCH_WRAP:-} "$bin" "$@"
