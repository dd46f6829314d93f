#!/usr/bin/env bash
# Builds the two builds bench/gpu-ab.sh compares into .gpu-ab/ (git-ignored;
# copy it to the GPU machine):
#   bash bench/gpu-ab-build.sh OLDREV
# "old" is commit OLDREV (checked out into a temporary worktree), "new" the
# working tree as it is. Each gets the in-process harness (cuda_test),
# BenchmarkHotParts (the cuda package's tests) and bench/peers/inproc (the
# cuda package against gorgonia/cu, built as bench/peers/build.sh builds it,
# with Go's default C flags restated: setting CGO_CFLAGS replaces them).
# Both measure with the working tree's harness (cuda_test/inproc_test.go,
# copied into the old tree), so that only the code under test differs.
set -euo pipefail
old=${1:?usage: bench/gpu-ab-build.sh OLDREV}
cd "$(dirname "$0")/.."
root=$PWD
out=$root/.gpu-ab
hdr=$(go run ./tools/fetchheaders 12.4 | sed -n 's/^CUDA 12.4: \(.*\) (verified)$/\1/p')
[ -f "$hdr/cuda.h" ] || { echo "gpu-ab-build: no cached 12.4 header (run bash tools/generate.sh once)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$tmp/old" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add --detach "$tmp/old" "$old" >/dev/null
cp cuda_test/inproc_test.go "$tmp/old/cuda_test/inproc_test.go"
bash bench/peers/mkstub.sh "$tmp/stub" bench/peers/gocu/include "$hdr"
rm -rf "$out" && mkdir -p "$out"
build() { # tree name
	(
		cd "$1"
		go test -c -ldflags='-s -w' -o "$out/$2.test" ./cuda_test
		go test -c -ldflags='-s -w' -o "$out/hot-$2.test" ./cuda
		cd bench/peers/inproc
		CGO_LDFLAGS="-L$tmp/stub" CGO_CFLAGS="-g -O2 -I$PWD/../gocu/include -I$hdr -Wno-deprecated-declarations" \
			go build -trimpath -ldflags='-s -w' -o "$out/inproc-$2" .
	)
}
build "$tmp/old" old
build "$root" new
ls -la "$out"
du -sh "$out"
