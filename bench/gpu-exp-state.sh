#!/usr/bin/env bash
# An experiment on the GPU machine (with .gpu copied there): which processes land
# in the driver's slow state. Prints Record/Query/SyncDone per process for
# the C loop, the cuda package (plain, thread-locked, GOMAXPROCS=1) and the
# generated layer (*Ctx calls, plain calls, plain calls + four atomic adds).
# VARIANTS picks them; cpin is the C loop pinned with taskset to CPU 2i mod
# nproc in round i (the process-to-process spread appears on one CPU too);
# cnoaslr is the C loop with address-space randomisation off (setarch -R),
# cenv the same with an environment 256*i bytes longer in round i (it moves
# the stack); streams times record and query on 8 streams of one process
# (bench/cbench/streams.c): one line per stream.
set -uo pipefail
cd "$(dirname "$0")/.."
gcc -O2 -o /tmp/cbench bench/cbench/cbench.c -I/usr/local/cuda/include -lcuda || exit 1
gcc -O2 -o /tmp/cstreams bench/cbench/streams.c -I/usr/local/cuda/include -lcuda || exit 1
for i in $(seq 1 "${N:-8}"); do
	for v in ${VARIANTS:-pkg drv noctx atomics c}; do
		case $v in
		pkg) o=$(./.gpu/peers/cudagen 30000 3) ;;
		drv) o=$(./.gpu/peers/cudagen -layer driver 30000 3) ;;
		noctx) o=$(./.gpu/peers/cudagen -layer driver-noctx 30000 3) ;;
		atomics) o=$(./.gpu/peers/cudagen -layer driver-atomics 30000 3) ;;
		lock) o=$(./.gpu/peers/cudagen -lock 30000 3) ;;
		gmp1) o=$(GOMAXPROCS=1 ./.gpu/peers/cudagen 30000 3) ;;
		c) o=$(/tmp/cbench 30000 3) ;;
		cpin) o=$(taskset -c $((2 * i % $(nproc))) /tmp/cbench 30000 3) ;;
		cnoaslr) o=$(setarch "$(uname -m)" -R /tmp/cbench 30000 3 2>&1) ;;
		cenv) o=$(PAD=$(head -c $((256 * i)) /dev/zero | tr '\0' x) setarch "$(uname -m)" -R /tmp/cbench 30000 3 2>&1) ;;
		streams) echo "streams, round $i:"; /tmp/cstreams 8 61 2000; continue ;;
		esac
		echo "$v $(echo "$o" | awk '/^(Record|Query|SyncDone) /{printf "%s %s", $1, $2; if ($NF == "GHz") printf "@%s", $(NF-1); printf "  "}')"
	done
done
