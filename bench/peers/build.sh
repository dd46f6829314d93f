#!/usr/bin/env bash
# Builds the side-by-side peers into DIR (bench/gpu-bench-build.sh calls it):
#   DIR/gorgonia   gorgonia.org/cu v0.9.6   (its own module, bench/peers/gorgonia)
#   DIR/gocu       github.com/gocnn/gocu v0.7.5 (its own module, bench/peers/gocu)
#   DIR/cudagen    this module's cuda package and generated layer (bench/peers/cudagen)
#   DIR/inproc     the cuda package, gorgonia.org/cu and gocnn/gocu in one process,
#                  interleaved blocks and paired differences (bench/peers/inproc,
#                  its own module)
#   DIR/launch     a kernel launch through C, cudagen (LaunchArgs, LaunchKernel),
#                  gorgonia.org/cu and gocnn/gocu in one process (bench/peers/launch,
#                  its own module)
# The two peers include <cuda.h> and link -lcuda: they are built against the
# cached Debian 12.4 header (tools/fetchheaders fetches it where missing) and a
# link-only stub libcuda.so.1 made here by mkstub.sh; the GPU machine's driver
# is loaded at run time. gocu also gets include/cuda.h, which declares three
# entry points newer than 12.4, and is built without build tags: v0.7.5's
# cuda11/cuda12/cuda13 files each compile alongside its untagged ones (whose
# constraint, !cuda11 || !cuda12 || !cuda13, always holds) and collide.
# LAYOUTS=K also builds each of gorgonia, gocu and cudagen K more times, as
# NAME.L1 .. NAME.LK, with the linker's -randlayout=1..K: the same code with
# its Go functions in another order. Between two builds of one binding the
# per-call cycles differ by up to 40 from layout alone (docs/performance.md),
# so a side-by-side verdict samples layouts (bench/gpu-peers-go.sh).
#   [LAYOUTS=K] bash bench/peers/build.sh DIR
set -euo pipefail
out=$(realpath -m "$1")
cd "$(dirname "$0")/../.."
root=$PWD
hdr=$(go run ./tools/fetchheaders 12.4 | sed -n 's/^CUDA 12.4: \(.*\) (verified)$/\1/p')
[ -f "$hdr/cuda.h" ] || { echo "peers: no cached 12.4 header at $hdr (run bash tools/generate.sh once)" >&2; exit 1; }
stub=$(mktemp -d)
trap 'rm -rf "$stub"' EXIT
mkdir -p "$out"
bash bench/peers/mkstub.sh "$stub" bench/peers/gocu/include "$hdr"
export CGO_ENABLED=1 CGO_LDFLAGS="-L$stub"
# Setting CGO_CFLAGS replaces Go's default ("-g -O2"): restate it, or every
# C function of the binary (the peers' wrappers and, in inproc, this
# module's hazard calls) is compiled without optimisation.
opt="-g -O2"
gocuflags="$opt -I$root/bench/peers/gocu/include -I$hdr -Wno-deprecated-declarations"
# peer NAME SUFFIX [LDFLAGS...]: builds one binary DIR/NAME.SUFFIX.
peer() {
	local name=$1 suf=$2
	shift 2
	local ld="-s -w $*"
	case $name in
	gorgonia) (cd bench/peers/gorgonia && CGO_CFLAGS="$opt -I$hdr -Wno-deprecated-declarations" go build -trimpath -ldflags="$ld" -o "$out/gorgonia$suf" .) ;;
	gocu) (cd bench/peers/gocu && CGO_CFLAGS="$gocuflags" go build -trimpath -ldflags="$ld" -o "$out/gocu$suf" .) ;;
	inproc) (cd bench/peers/inproc && CGO_CFLAGS="$gocuflags" go build -trimpath -ldflags="$ld" -o "$out/inproc$suf" .) ;;
	launch) (cd bench/peers/launch && CGO_CFLAGS="$gocuflags" go build -trimpath -ldflags="$ld" -o "$out/launch$suf" .) ;;
	# This module's binary needs no stub: the package loads libcuda.so.1 itself.
	cudagen) env -u CGO_LDFLAGS go build -trimpath -ldflags="$ld" -o "$out/cudagen$suf" ./bench/peers/cudagen ;;
	esac
}
for name in gorgonia inproc launch gocu cudagen; do
	peer "$name" ""
done
for i in $(seq 1 "${LAYOUTS:-0}"); do
	for name in gorgonia gocu cudagen; do
		peer "$name" ".L$i" "-randlayout=$i"
	done
done
ls -la "$out"
